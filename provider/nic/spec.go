package nic

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/tsolab/tsolab/provider"
)

// linkKind is what a NIC's interface is (the kind in AttrLink).
type linkKind uint8

const (
	linkSwitch linkKind = iota + 1 // a veth whose other end is a port of a switch's bridge
	linkPeer                       // the owning end of a back-to-back veth pair
	linkPeerOf                     // the far end of another NIC's pair
	linkDevice                     // an adopted existing device
	linkNone                       // a link of its own with nothing behind it (dummy or ifb)
)

func (k linkKind) String() string {
	switch k {
	case linkSwitch:
		return provider.LinkSwitch
	case linkPeer:
		return provider.LinkPeer
	case linkPeerOf:
		return provider.LinkPeerOf
	case linkDevice:
		return provider.LinkDevice
	case linkNone:
		return provider.LinkNone
	}
	return fmt.Sprintf("linkKind(%d)", uint8(k))
}

// isVeth reports whether the NIC is one end of a veth pair.
func (k linkKind) isVeth() bool { return k == linkSwitch || k == linkPeer || k == linkPeerOf }

// spec is a NIC's attributes, parsed.
type spec struct {
	ns     string // the host's namespace; "" = the machine's own
	ifname string
	kind   linkKind
	target string // the switch, peer NIC, owning NIC or device named by AttrLink

	peerNS, peerIf string // the other end of a switch or peer veth
	// alias is the NIC's ownership alias, which its switch port carries
	// too; set by Create and Update, not parsed.
	alias string

	address      netip.Prefix // invalid = none
	mtu          int          // 0 = unmanaged
	shape        shaping
	queueManaged bool
	offloads     []wantOffload
}

func parseSpec(a provider.Attrs) (spec, error) {
	s := spec{ns: a[provider.AttrNetNS], ifname: a[provider.AttrIfName]}
	kind, target, _ := strings.Cut(a[provider.AttrLink], ":")
	switch kind {
	case provider.LinkSwitch:
		s.kind = linkSwitch
	case provider.LinkPeer:
		s.kind = linkPeer
	case provider.LinkPeerOf:
		s.kind = linkPeerOf
	case provider.LinkDevice:
		s.kind = linkDevice
	case provider.LinkNone:
		s.kind = linkNone
	default:
		return s, fmt.Errorf("link %q is not one of switch:SW, peer:NIC, peer-of:NIC, device:DEV, none", a[provider.AttrLink])
	}
	s.target = target
	if s.kind != linkNone && target == "" {
		return s, fmt.Errorf("link %q names nothing", a[provider.AttrLink])
	}
	if err := checkIfName(s.ifname); err != nil {
		return s, err
	}
	if s.kind == linkSwitch || s.kind == linkPeer {
		s.peerNS, s.peerIf = a[provider.AttrPeerNetNS], a[provider.AttrPeerIfName]
		if err := checkIfName(s.peerIf); err != nil {
			return s, fmt.Errorf("peer: %w", err)
		}
	}
	if v := a[provider.AttrAddress]; v != "" {
		p, err := netip.ParsePrefix(v)
		if err != nil {
			return s, fmt.Errorf("address %q is not a CIDR like 10.77.0.1/24", v)
		}
		s.address = p
	}
	if v, ok := a[provider.AttrMTU]; ok && v != "" {
		mtu, err := strconv.Atoi(v)
		if err != nil || mtu < 68 || mtu > 65535 {
			return s, fmt.Errorf("mtu %q is not a number in 68..65535", v)
		}
		s.mtu = mtu
	}
	if v := a[provider.AttrRate]; v != "" {
		r, err := strconv.ParseUint(v, 10, 64)
		if err != nil || r == 0 {
			return s, fmt.Errorf("rate %q is not a positive number of bits per second", v)
		}
		s.shape.rate = r
	}
	if v := a[provider.AttrQueue]; v != "" {
		q, err := strconv.ParseInt(v, 10, 64)
		if err != nil || q <= 0 {
			return s, fmt.Errorf("queue %q is not a positive number of bytes", v)
		}
		s.shape.queue = q
		s.queueManaged = true
	}
	if v := a[provider.AttrDelay]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return s, fmt.Errorf("delay %q is not a duration like 10ms", v)
		}
		s.shape.delay = d
	}
	offs, err := declaredOffloads(a)
	if err != nil {
		return s, err
	}
	s.offloads = offs
	return s, nil
}
