package nic

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/provider"
)

// A NIC of a namespace host may adopt a device of the machine (device =
// "enp3s0f1"): Create moves it from the machine's namespace into the
// host's, and Delete gives it back as it was. Two ports of one machine
// cabled to each other, each moved into its own host, are then a
// two-host lab on real hardware whose traffic crosses the cable instead
// of the machine's local routing.
//
// A move between namespaces takes the device down and drops its
// addresses, routes and qdiscs; its MTU and features go with it. So
// before moving, Create records (besides whether it was up and the MTU
// and offloads, which recordOriginals keeps for every adopted device) the
// addresses it had, and Delete puts those back once it has moved the
// device home.
const (
	restoreAddrs = provider.PrefixRestore + "addresses" // the device's addresses in the machine's namespace, comma-separated
	restoreUp    = provider.PrefixRestore + "up"        // "true" when the device was up there
)

// moved is a NIC of a namespace host that adopts a device of the
// machine (not lo, which every namespace has): an adopted device that
// create moves into the host's namespace and release moves back.
type moved struct{ adopted }

// validate checks a device a namespace host will adopt: it is in the
// machine's namespace (or already in the host's, moved there by an
// earlier apply), it can change namespace, and the machine does not reach
// its default route through it. It returns the device's features.
func (moved) validate(x *call, caps *capabilities) (Features, string) {
	return validateMove(x), "device " + x.s.target
}

func validateMove(x *call) Features {
	s, d, p := x.s, x.d, x.p
	if c, err := p.open(s.ns); err == nil {
		defer c.Close()
		if l, err := c.linkByName(s.target); err == nil && l != nil {
			f, err := c.features(s.target)
			if err != nil {
				d.errorf("device %s", err, s.target)
			}
			return f
		}
	}
	m, err := p.open("")
	if err != nil {
		d.errorf("open the machine's namespace", err)
		return nil
	}
	defer m.Close()
	l, err := m.linkByName(s.target)
	if err != nil || l == nil {
		if err == nil {
			err = errors.New("no such device in the machine's namespace")
		}
		d.fixAt("device", fmt.Sprintf("device %q: %v", s.target, err),
			"Name a device `ip link` lists on this machine. A device another lab moved into one of its namespaces comes back when that lab is destroyed.")
		return nil
	}
	f, err := m.features(s.target)
	if err != nil {
		d.errorf("device %s", err, s.target)
		return nil
	}
	if st, ok := f["netns-local"]; ok && st.Active {
		d.fixAt("device", fmt.Sprintf("device %q cannot leave the machine's namespace (netns-local)", s.target),
			`Adopt it on a host with kind = "local", or adopt a device that can move (a physical port or a veth end).`)
	}
	routes, err := m.nl.RouteList(l, netlink.FAMILY_ALL)
	if err != nil {
		d.errorf("routes of %s", err, s.target)
	}
	for _, r := range routes {
		if isDefault(r) {
			d.fixAt("device", fmt.Sprintf("device %q carries this machine's default route: moving it into host %s's namespace would cut the machine off its network", s.target, s.ns),
				"Adopt a port that only the lab uses (a second port cabled to another one), not the machine's uplink.")
			break
		}
	}
	return f
}

// create moves the device from the machine's namespace into the host's
// (x.c), recording in out what it had, and returns it. A device already in
// the host's namespace was moved there by an apply that was interrupted
// before it could record anything: it is adopted as it is, with a
// warning that destroy cannot give back what it had.
func (moved) create(ctx context.Context, x *call, out provider.Attrs) netlink.Link {
	s, c, d, p := x.s, x.c, x.d, x.p
	l, err := c.linkByName(s.target)
	if err != nil {
		d.errorf("adopt device %s", err, s.target)
		return nil
	}
	if l != nil {
		d.warnf("adopt device %s", fmt.Errorf("it is already in %s, moved by an apply that was interrupted before it recorded the device's original MTU, offloads and addresses; destroy moves it back to the machine's namespace but cannot restore those", nsName(c.name)), s.target)
		return l
	}
	m, err := p.open("")
	if err != nil {
		d.errorf("adopt device %s", err, s.target)
		return nil
	}
	defer m.Close()
	if l, err = m.linkByName(s.target); err == nil && l == nil {
		err = fmt.Errorf("it is neither in the machine's namespace nor in %s", nsName(c.name))
	}
	if err != nil {
		d.errorf("adopt device %s", err, s.target)
		return nil
	}
	recordOriginals(m, l, s, out, nil, d)
	addrs, err := addresses(m, l)
	if err != nil {
		d.errorf("record the addresses of %s", err, s.target)
		return nil
	}
	var list []string
	for _, a := range addrs {
		list = append(list, a.String())
	}
	out[restoreAddrs] = strings.Join(list, ",")
	if err := m.nl.LinkSetNsFd(l, int(c.fd)); err != nil {
		d.errorf("move %s into %s", err, s.target, nsName(c.name))
		return nil
	}
	if l, err = c.linkByName(s.target); err == nil && l == nil {
		err = errors.New("not found after the move")
	}
	if err != nil {
		d.errorf("move %s into %s", err, s.target, nsName(c.name))
		return nil
	}
	return l
}

// release gives a moved device back: in the host's namespace it loses
// what tsolab added and gets its MTU and offloads back (giveBack), then it
// moves to the machine's namespace and gets its addresses and up state
// back there. A device found in the machine's namespace already (a
// destroy interrupted after the move, or the host's namespace deleted by
// hand, which returns a physical device to the machine) gets the same
// settings back there; a device in neither place is gone.
func (moved) release(x *call, rec provider.Attrs) {
	s, d, p := x.s, x.d, x.p
	m, err := p.open("")
	if err != nil {
		d.errorf("give back device %s", err, s.target)
		return
	}
	defer m.Close()
	released := false // giveBack already gave back the MTU and offloads
	c, err := p.open(s.ns)
	switch {
	case errors.Is(err, errNoNamespace):
	case err != nil:
		d.errorf("give back device %s", err, s.target)
		return
	default:
		defer c.Close()
		l, err := c.linkByName(s.target)
		if err != nil {
			d.errorf("give back device %s", err, s.target)
			return
		}
		if l != nil {
			giveBack(c, l, s, rec, d)
			released = true
			if err := c.nl.LinkSetNsFd(l, int(m.fd)); err != nil {
				d.errorf("move %s back to the machine's namespace", err, s.target)
				return
			}
		}
	}
	l, err := m.linkByName(s.target)
	if err != nil {
		d.errorf("give back device %s", err, s.target)
		return
	}
	if l == nil {
		return
	}
	if !released {
		restoreDropped(m, l, spec{ifname: s.target}, rec, d)
	}
	for _, a := range strings.Split(rec[restoreAddrs], ",") {
		pfx, err := netip.ParsePrefix(a)
		if err != nil {
			continue
		}
		if err := m.nl.AddrAdd(l, toAddr(pfx)); err != nil && !errors.Is(err, unix.EEXIST) {
			d.errorf("restore address %s on %s", err, a, s.target)
		}
	}
	switch up := l.Attrs().Flags&net.FlagUp != 0; {
	case rec[restoreUp] == "true" && !up:
		if err := m.nl.LinkSetUp(l); err != nil {
			d.errorf("set %s up", err, s.target)
		}
	case rec[restoreUp] == "false" && up:
		if err := m.nl.LinkSetDown(l); err != nil {
			d.errorf("set %s down", err, s.target)
		}
	}
}

// isDefault reports whether a route is a default route (no destination,
// or one of prefix length 0).
func isDefault(r netlink.Route) bool {
	if r.Dst == nil {
		return true
	}
	ones, _ := r.Dst.Mask.Size()
	return ones == 0
}
