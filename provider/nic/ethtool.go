package nic

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/safchain/ethtool"
	"golang.org/x/sys/unix"
)

// featureTable is the kernel's table of feature names (the ETH_SS_FEATURES
// string set, netdev_features_strings): one table for every device, so it
// is read once, through safchain/ethtool, by the capability probe.
//
// Reading it on every call is what made offloads slow: safchain's
// FeaturesWithState and Change fetch the names each time into a 1 MiB
// buffer (0.5 ms per call, most of it faulting in and clearing that
// buffer), four times per NIC. With the table in hand, getting and
// setting features is one small ETHTOOL_GFEATURES or ETHTOOL_SFEATURES
// ioctl.
type featureTable struct {
	index map[string]uint // feature name -> bit
	count int
}

func newFeatureTable(names map[string]uint) *featureTable {
	t := &featureTable{index: names}
	for _, i := range names {
		t.count = max(t.count, int(i)+1)
	}
	return t
}

// ifreq is struct ifreq for SIOCETHTOOL: the name and a pointer to the
// ethtool command, padded to the kernel's 40 bytes.
type ifreq struct {
	name [unix.IFNAMSIZ]byte
	data uintptr
	_    [16]byte
}

// featureSocket issues ethtool feature ioctls; they act on the namespace
// the socket was opened in, whatever thread issues them.
type featureSocket struct{ fd int }

// openFeatureSocket opens an ethtool socket in the calling thread's
// namespace.
func openFeatureSocket() (featureSocket, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	return featureSocket{fd}, err
}

func (s featureSocket) Close() {
	if s.fd > 0 {
		unix.Close(s.fd)
	}
}

func (s featureSocket) ioctl(ifname string, cmd []uint32) error {
	var req ifreq
	copy(req.name[:unix.IFNAMSIZ-1], ifname)
	req.data = uintptr(unsafe.Pointer(&cmd[0]))
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(s.fd), ethtool.SIOCETHTOOL, uintptr(unsafe.Pointer(&req)))
	runtime.KeepAlive(cmd)
	if errno != 0 {
		return errno
	}
	return nil
}

// get reads a device's features (ETHTOOL_GFEATURES: struct
// ethtool_gfeatures, four words per block of 32 features).
func (s featureSocket) get(t *featureTable, ifname string) (Features, error) {
	blocks := (t.count + 31) / 32
	cmd := make([]uint32, 2+4*blocks)
	cmd[0], cmd[1] = ethtool.ETHTOOL_GFEATURES, uint32(blocks)
	if err := s.ioctl(ifname, cmd); err != nil {
		return nil, fmt.Errorf("read features of %s: %w", ifname, err)
	}
	f := make(Features, len(t.index))
	for name, i := range t.index {
		b := cmd[2+4*(i/32):]
		bit := uint32(1) << (i % 32)
		f[name] = ethtool.FeatureState{
			Available:    b[0]&bit != 0,
			Requested:    b[1]&bit != 0,
			Active:       b[2]&bit != 0,
			NeverChanged: b[3]&bit != 0,
		}
	}
	return f, nil
}

// set asks for features on or off (ETHTOOL_SFEATURES: struct
// ethtool_sfeatures, a valid and a requested word per block). The kernel
// may keep some as they were (netdev_fix_features); callers read back.
func (s featureSocket) set(t *featureTable, ifname string, req map[string]bool) error {
	blocks := (t.count + 31) / 32
	cmd := make([]uint32, 2+2*blocks)
	cmd[0], cmd[1] = ethtool.ETHTOOL_SFEATURES, uint32(blocks)
	for name, on := range req {
		i, ok := t.index[name]
		if !ok {
			return fmt.Errorf("set features of %s: the kernel has no feature %q", ifname, name)
		}
		b := cmd[2+2*(i/32):]
		bit := uint32(1) << (i % 32)
		b[0] |= bit
		if on {
			b[1] |= bit
		}
	}
	if err := s.ioctl(ifname, cmd); err != nil {
		return fmt.Errorf("set features of %s: %w", ifname, err)
	}
	return nil
}
