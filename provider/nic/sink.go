package nic

import (
	"context"
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"

	"github.com/tsolab/tsolab/provider"
)

// sink is a NIC with nothing behind it (no connect, no peer): a dummy
// link, or an ifb where the kernel has no dummy driver.
type sink struct{ ownLink }

func (sink) String() string { return provider.LinkNone }

func (sink) validate(x *call, caps *capabilities) (Features, string) {
	if caps.sinkKind == "" {
		x.d.fix("a NIC without connect or peer needs a dummy or ifb link, and this kernel has neither",
			"Connect the NIC to a switch or a peer, or build the kernel with CONFIG_DUMMY or CONFIG_IFB.")
	}
	return caps.sinkFeatures, caps.sinkKind
}

// create makes the link, or finds the one an interrupted apply made.
func (sink) create(ctx context.Context, x *call, out provider.Attrs) netlink.Link {
	link := createSink(x)
	if link == nil {
		return nil
	}
	markUp(x, link)
	return link
}

func createSink(x *call) netlink.Link {
	s, c, d := x.s, x.c, x.d
	link, err := c.linkByName(s.ifname)
	if err != nil {
		d.errorf("create %s", err, s.ifname)
		return nil
	}
	caps, err := x.p.probe.get()
	if err == nil && caps.sinkKind == "" {
		err = errors.New("the kernel has neither the dummy nor the ifb driver")
	}
	if err != nil {
		d.errorf("create %s", err, s.ifname)
		return nil
	}
	if link != nil {
		// Without an alias it is ours only if an apply was killed between
		// creating it in a namespace of the lab's and marking it.
		halfMade := link.Attrs().Alias == "" && link.Type() == caps.sinkKind && x.naming.OwnsNS(s.ns)
		if link.Attrs().Alias != x.alias && !halfMade {
			d.errorf("create %s", foreignLink(c.name, link), s.ifname)
			return nil
		}
		return link
	}
	attrs := linkAttrs(s.ifname)
	attrs.Alias = x.alias
	attrs.MTU = s.mtu
	var l netlink.Link = &netlink.Dummy{LinkAttrs: attrs}
	if caps.sinkKind == "ifb" {
		l = &netlink.Ifb{LinkAttrs: attrs}
	}
	if err := c.nl.LinkAdd(l); err != nil {
		d.errorf("create %s %s", err, caps.sinkKind, s.ifname)
		return nil
	}
	link, err = c.linkByName(s.ifname)
	if err != nil || link == nil {
		d.errorf("create %s", fmt.Errorf("not found after creation (%v)", err), s.ifname)
		return nil
	}
	// Made down: its mode before markUp brings it up.
	if err := c.markNew(link, x.alias, s.genMode); err != nil {
		d.errorf("configure %s", err, s.ifname)
	}
	return link
}
