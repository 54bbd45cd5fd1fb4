package nic

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/provider"
)

// adopted is a NIC that adopts an existing device where it is: one of
// the machine's on a local host, or lo on a namespace host (lo exists in
// every namespace; its offloads matter to loopback workloads, seed 004).
// tsolab never creates or deletes it: it records what it had before
// (recordOriginals) and release gives that back.
type adopted struct{}

func (adopted) String() string                   { return provider.LinkDevice }
func (adopted) owns(*call, netlink.Link) bool    { return true }
func (adopted) adoptsDevice() bool               { return true }
func (adopted) readFar(*call) *hcl.Diagnostic    { return nil }
func (adopted) farGone(*call) bool               { return false }
func (adopted) watched(provider.Attrs) []string  { return []string{provider.AttrUp} }
func (adopted) configureFar(*call)               {}
func (adopted) observeFar(*call, provider.Attrs) {}

// validate checks that a device of the machine exists and returns its
// features. A namespace host's lo is not checked: the namespace may not
// exist yet, and every lo can change tso, gso and the checksum flags.
func (adopted) validate(x *call, caps *capabilities) (Features, string) {
	s, d := x.s, x.d
	what := "device " + s.target
	if s.ns != "" {
		return nil, what
	}
	c, err := x.p.open("")
	if err != nil {
		d.errorf("open the machine's namespace", err)
		return nil, what
	}
	defer c.Close()
	l, err := c.linkByName(s.target)
	if err != nil || l == nil {
		if err == nil {
			err = errors.New("no such device")
		}
		d.fixAt("device", fmt.Sprintf("device %q: %v", s.target, err), "Name a device `ip link` lists on this machine.")
		return nil, what
	}
	feats, err := c.features(s.target)
	if err != nil {
		d.errorf("device %s", err, s.target)
	}
	return feats, what
}

// create finds the device and records what it has.
func (adopted) create(ctx context.Context, x *call, out provider.Attrs) netlink.Link {
	s := x.s
	link, err := x.c.linkByName(s.target)
	if err == nil && link == nil {
		err = errors.New("no such device")
	}
	if err != nil {
		x.d.errorf("adopt device %s", err, s.target)
		return nil
	}
	recordOriginals(x.c, link, s, out, nil, x.d)
	return link
}

// update puts back the originals of what the lab no longer manages and
// keeps in out the originals of what it still does.
func (adopted) update(x *call, link netlink.Link, prior, out provider.Attrs) {
	s := x.s
	restoreDropped(x.c, link, s, prior, x.d)
	recordOriginals(x.c, link, s, out, prior, x.d)
	if s.mtu == 0 {
		delete(out, restoreMTU)
	}
	declared := s.declaredOffloadNames()
	for k := range out {
		if name, ok := strings.CutPrefix(k, restoreOffload); ok && !declared[name] {
			delete(out, k)
		}
	}
	if a := prior[restoreAddress]; a != "" && a != s.address.String() {
		delete(out, restoreAddress)
	}
}

// release gives the device back as it was, if it is still there.
func (adopted) release(x *call, rec provider.Attrs) {
	link, ok := x.findToRelease()
	if ok && link != nil {
		giveBack(x.c, link, x.s, rec, x.d)
	}
}

// recordOriginals stores in out, for an adopted device, whether it is up
// (tsolab brings it up) and the MTU and offloads it has now for every one
// want manages, unless prior (the state recorded so far) has the original
// already.
func recordOriginals(c *nsConn, link netlink.Link, s spec, out, prior provider.Attrs, d *diags) {
	for k, v := range prior {
		if strings.HasPrefix(k, provider.PrefixRestore) {
			out[k] = v
		}
	}
	if _, ok := out[restoreUp]; !ok {
		out[restoreUp] = strconv.FormatBool(link.Attrs().Flags&net.FlagUp != 0)
	}
	if _, ok := out[restoreMTU]; !ok && s.mtu > 0 {
		out[restoreMTU] = strconv.Itoa(link.Attrs().MTU)
	}
	if len(s.offloads) == 0 {
		return
	}
	feats, err := c.features(s.ifname)
	if err != nil {
		d.errorf("record the original offloads", err)
		return
	}
	for _, w := range s.offloads {
		key := restoreOffload + w.o.String()
		if _, ok := out[key]; ok {
			continue
		}
		if on, known, _ := feats.State(w.o); known {
			out[key] = strconv.FormatBool(on)
		}
	}
}

// restoreDropped puts back, on an adopted device, the original MTU and
// offloads of what the lab no longer manages.
func restoreDropped(c *nsConn, link netlink.Link, s spec, prior provider.Attrs, d *diags) {
	if orig := prior[restoreMTU]; orig != "" && s.mtu == 0 {
		if mtu, err := strconv.Atoi(orig); err == nil {
			if err := c.nl.LinkSetMTU(link, mtu); err != nil {
				d.errorf("restore mtu %d", err, mtu)
			}
		}
	}
	declared := s.declaredOffloadNames()
	var back []wantOffload
	for k, v := range prior {
		name, ok := strings.CutPrefix(k, restoreOffload)
		if !ok || declared[name] {
			continue
		}
		ws, err := declaredOffloads(provider.Attrs{provider.PrefixOffload + name: v})
		if err == nil {
			back = append(back, ws...)
		}
	}
	if len(back) > 0 {
		setOffloads(c, spec{ifname: s.ifname, offloads: back}, d)
	}
}

// giveBack gives an adopted device back as it was, down again if it was
// down before tsolab.
func giveBack(c *nsConn, link netlink.Link, s spec, rec provider.Attrs, d *diags) {
	if a := rec[restoreAddress]; a != "" {
		if pfx, err := netip.ParsePrefix(a); err == nil {
			if err := c.nl.AddrDel(link, toAddr(pfx)); err != nil && !errors.Is(err, unix.EADDRNOTAVAIL) {
				d.errorf("remove address %s", err, a)
			}
		}
	}
	if rec[provider.AttrRate] != "" || rec[provider.AttrDelay] != "" {
		if err := applyShaping(c, link, shaping{}, false); err != nil {
			d.errorf("remove shaping", err)
		}
	}
	restoreDropped(c, link, spec{ifname: s.ifname}, rec, d)
	if rec[restoreUp] == "false" && link.Attrs().Flags&net.FlagUp != 0 {
		if err := c.nl.LinkSetDown(link); err != nil {
			d.errorf("set %s down", err, s.ifname)
		}
	}
}

// declaredOffloadNames is the set of the offloads s declares, by name.
func (s spec) declaredOffloadNames() map[string]bool {
	declared := map[string]bool{}
	for _, w := range s.offloads {
		declared[w.o.String()] = true
	}
	return declared
}
