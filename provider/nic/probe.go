package nic

import (
	"errors"
	"fmt"
	"sync"

	"github.com/safchain/ethtool"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/provider/host/netnsfs"
)

// capabilities is what this kernel can do, probed once in a scratch
// namespace that vanishes afterwards. It is the only thing the providers
// remember between calls: it cannot go stale while the kernel runs.
type capabilities struct {
	// table is the kernel's feature names.
	table *featureTable
	// vethFeatures is a fresh veth's feature state.
	vethFeatures Features
	// sinkKind is the link type a NIC without a link becomes: "dummy",
	// or "ifb" on kernels built without the dummy driver ("" = neither).
	sinkKind     string
	sinkFeatures Features
	// netemErr is why a netem qdisc cannot be added (nil: it can).
	netemErr error
}

type prober struct {
	once sync.Once
	caps capabilities
	err  error
}

func (p *prober) get() (*capabilities, error) {
	p.once.Do(func() {
		p.err = netnsfs.Scratch(p.probe)
		if p.err != nil {
			p.err = fmt.Errorf("probe the kernel's capabilities: %w", p.err)
		}
	})
	return &p.caps, p.err
}

// probe runs on a thread inside a fresh anonymous namespace.
func (p *prober) probe() error {
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer h.Close()
	veth := &netlink.Veth{LinkAttrs: linkAttrs("probe0"), PeerName: "probe1", PeerTxQLen: -1}
	if err := h.LinkAdd(veth); err != nil {
		return fmt.Errorf("veth: %w", err)
	}
	et, err := ethtool.NewEthtool()
	if err != nil {
		return err
	}
	defer et.Close()
	names, err := et.FeatureNames("probe0")
	if err != nil {
		return fmt.Errorf("feature names: %w", err)
	}
	p.caps.table = newFeatureTable(names)
	sock, err := openFeatureSocket()
	if err != nil {
		return err
	}
	defer sock.Close()
	if p.caps.vethFeatures, err = sock.get(p.caps.table, "probe0"); err != nil {
		return err
	}

	for _, kind := range []string{"dummy", "ifb"} {
		attrs := linkAttrs("sink0")
		var l netlink.Link = &netlink.Dummy{LinkAttrs: attrs}
		if kind == "ifb" {
			l = &netlink.Ifb{LinkAttrs: attrs}
		}
		if err := h.LinkAdd(l); err != nil {
			continue
		}
		p.caps.sinkKind = kind
		if p.caps.sinkFeatures, err = sock.get(p.caps.table, "sink0"); err != nil {
			return err
		}
		break
	}

	netem := netlink.NewNetem(netlink.QdiscAttrs{LinkIndex: 1, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
		netlink.NetemQdiscAttrs{Latency: 1000})
	if err := h.QdiscAdd(netem); err != nil {
		if errors.Is(err, unix.ENOENT) {
			err = errors.New("the kernel has no netem qdisc (sch_netem, CONFIG_NET_SCH_NETEM)")
		}
		p.caps.netemErr = err
	}
	return nil
}
