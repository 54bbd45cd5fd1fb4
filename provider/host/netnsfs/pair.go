package netnsfs

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/safchain/ethtool"
	"github.com/vishvananda/netlink"
)

// End is one end of a veth pair made by CreatePair: the namespace it
// lives in, its interface name and its address (the zero Prefix: none).
type End struct {
	NS     string
	IfName string
	Addr   netip.Prefix
}

// CreatePair makes the simplest two-host wiring that tests and benchmarks
// drive traffic over (the providers build theirs from a lab instead): the
// namespaces a.NS and b.NS, each with lo up, joined by a veth pair
// a.IfName <-> b.IfName with the given MTU (0: the kernel's default) and
// the kernel's default queue length, each end with its address and up.
// Namespaces that already exist are used as they are. On error it removes
// the namespaces it created; on success the caller removes them (Remove),
// which deletes the pair with them.
func CreatePair(a, b End, mtu int) (err error) {
	var made []string
	defer func() {
		if err == nil {
			return
		}
		for _, ns := range made {
			err = errors.Join(err, Remove(ns))
		}
	}()
	for _, ns := range []string{a.NS, b.NS} {
		created, err := Create(ns)
		if err != nil {
			return err
		}
		if created {
			made = append(made, ns)
		}
	}
	peer, err := Open(b.NS)
	if err != nil {
		return err
	}
	defer peer.Close()
	attrs := netlink.NewLinkAttrs()
	attrs.Name, attrs.MTU = a.IfName, mtu
	veth := &netlink.Veth{LinkAttrs: attrs, PeerName: b.IfName, PeerTxQLen: -1, PeerNamespace: netlink.NsFd(peer)}
	if err := withNetlink(a.NS, func(h *netlink.Handle) error { return h.LinkAdd(veth) }); err != nil {
		return fmt.Errorf("veth %s/%s in %s/%s: %w", a.IfName, b.IfName, a.NS, b.NS, err)
	}
	for _, end := range []End{a, b} {
		if err := withNetlink(end.NS, func(h *netlink.Handle) error { return end.up(h) }); err != nil {
			return fmt.Errorf("%s in %s: %w", end.IfName, end.NS, err)
		}
	}
	return nil
}

// up sets lo and the end's interface up, with its address.
func (e End) up(h *netlink.Handle) error {
	if err := loUp(h); err != nil {
		return err
	}
	l, err := h.LinkByName(e.IfName)
	if err != nil {
		return err
	}
	if e.Addr.IsValid() {
		a, err := netlink.ParseAddr(e.Addr.String())
		if err != nil {
			return err
		}
		if err := h.AddrAdd(l, a); err != nil {
			return fmt.Errorf("address %s: %w", e.Addr, err)
		}
	}
	return h.LinkSetUp(l)
}

// LoopbackUp sets lo up in the named namespace (a new namespace's lo is
// down, so not even 127.0.0.1 answers there).
func LoopbackUp(name string) error {
	if err := withNetlink(name, loUp); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func loUp(h *netlink.Handle) error {
	lo, err := h.LinkByName("lo")
	if err == nil {
		err = h.LinkSetUp(lo)
	}
	if err != nil {
		return fmt.Errorf("lo up: %w", err)
	}
	return nil
}

// withNetlink runs fn with a route netlink handle bound to the named
// namespace, closed afterwards.
func withNetlink(name string, fn func(*netlink.Handle) error) error {
	h, err := Netlink(name)
	if err != nil {
		return err
	}
	defer h.Close()
	return fn(h)
}

// SetFeatures switches kernel features of interface ifname in the named
// namespace through the ethtool ioctl (feature names as `ethtool -K`
// shows them, e.g. "tx-tcp-segmentation"), and fails if the kernel did
// not keep one (a fixed feature, or one its dependencies turn back).
func SetFeatures(name, ifname string, feats map[string]bool) error {
	err := Do(name, func() error {
		e, err := ethtool.NewEthtool()
		if err != nil {
			return err
		}
		defer e.Close()
		if err := e.Change(ifname, feats); err != nil {
			return err
		}
		got, err := e.Features(ifname)
		if err != nil {
			return err
		}
		for f, want := range feats {
			if got[f] != want {
				return fmt.Errorf("feature %s: got %v after setting it, want %v", f, got[f], want)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set features %v of %s in %s: %w", feats, ifname, name, err)
	}
	return nil
}
