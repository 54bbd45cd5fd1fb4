package nic

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/vishvananda/netlink"

	"github.com/tsolab/tsolab/provider"
)

// link is what a NIC's interface is, one type for each kind AttrLink
// names:
//
//	switchPort  switch:SW   a veth whose far end is a port of SW's bridge (veth.go)
//	vethPair    peer:NIC    the owning end of a back-to-back veth pair (veth.go)
//	peerEnd     peer-of:NIC the far end of NIC's pair, made by NIC (veth.go)
//	adopted     device:DEV  an existing device, configured where it is (device.go)
//	moved       device:DEV  a device of the machine moved into a namespace host (move.go)
//	sink        none        a dummy (or ifb) with nothing behind it (sink.go)
//
// The Provider's calls do what is the same for every NIC (open its
// namespace, check the marks, configure and read back MTU, address,
// offloads and shaping); a link does what differs. parseSpec chooses the
// type once.
type link interface {
	// String is the kind as AttrLink spells it.
	String() string
	// validate checks what the kind needs of this machine and returns the
	// features its device has (nil: not known before it exists) and what
	// diagnostics call the device ("veth", "dummy", "device eth1").
	validate(x *call, caps *capabilities) (Features, string)
	// create makes the NIC's interface in x.c, completes what an
	// interrupted apply left, or adopts the device, and returns it. A
	// link tsolab makes comes back marked with the NIC's alias and up; an
	// adopted device keeps its own alias and has what it had recorded in
	// out, for release. nil (with an error in x.d) when it cannot.
	create(ctx context.Context, x *call, out provider.Attrs) netlink.Link
	// owns reports whether l, found under the NIC's interface name, is
	// the NIC's: it carries the NIC's alias (an adopted device always is).
	owns(x *call, l netlink.Link) bool
	// adoptsDevice reports whether the device is not tsolab's: it is never
	// created or deleted, its other addresses are not tsolab's, and what
	// tsolab adds to it is recorded to be taken away again.
	adoptsDevice() bool
	// readFar is Read's check of the far end's namespace before the
	// link is looked up: a diagnostic when another copy of the lab owns
	// it (a warning: the NIC is gone for this state), nil otherwise.
	readFar(x *call) *hcl.Diagnostic
	// farGone is Read's check, once the link was found the NIC's, that
	// what it needs beyond the link is there and the NIC's.
	farGone(x *call) bool
	// watched lists the keys Read reports even when a record made by an
	// older tsolab lacks them (the up states); rec is the record.
	watched(rec provider.Attrs) []string
	// update prepares out (the attributes Update will record) before
	// configure: an adopted device gets back the originals of what the
	// lab no longer manages.
	update(x *call, l netlink.Link, prior, out provider.Attrs)
	// configureFar is configure's part beyond the NIC's own interface: a
	// switch port onto the bridge.
	configureFar(x *call)
	// observeFar is observe's part beyond the NIC's own interface: the
	// port.* keys of a switch port.
	observeFar(x *call, out provider.Attrs)
	// release deletes what create made, or gives back what it adopted.
	release(x *call, rec provider.Attrs)
}

// call is one provider call on one NIC.
type call struct {
	p      *Provider
	s      spec
	naming provider.Naming
	addr   provider.Addr
	alias  string // the NIC's ownership alias
	c      *nsConn
	// far is the namespace of the far end of a veth (the switch's, or a
	// pair's), shared with the other calls working there (nsPool) when
	// the call got it; given back by done.
	far *nsConn
	// farLink is the far end as last read or as the kernel acknowledged
	// setting it (a switch port), or nil to read it again.
	farLink netlink.Link
	// created: the call made the NIC's link, so it has no address,
	// shaping or port settings yet besides what the creation gave it.
	created bool
	// portReady: create made the switch port what the NIC declares.
	portReady bool
	// addressAdded: configure added the NIC's address (or found it there).
	addressAdded bool
	// remade: create deleted the NIC's veth from before, whose other end
	// was gone, to make the pair again (once).
	remade bool
	// snap is the refresh's snapshot when the call is one of its reads
	// (ReadRequest.Snapshot), nil otherwise.
	snap *provider.Snapshot
	d    *diags
}

func newCall(p *Provider, s spec, n provider.Naming, a provider.Addr, d *diags) *call {
	return &call{p: p, s: s, naming: n, addr: a, alias: n.Alias(a), d: d}
}

// done closes what the call opened and gives back what it shares.
func (x *call) done() {
	if x.far != nil {
		x.p.far.put(x.s.peerNS)
	}
	x.c.Close()
}

// farNS returns the far end's namespace, got from the pool on first use.
func (x *call) farNS() (*nsConn, error) {
	if x.far != nil {
		return x.far, nil
	}
	far, err := x.p.far.get(x.s.peerNS)
	if err != nil {
		return nil, err
	}
	x.far = far
	return far, nil
}

// foreignNS checks the marks of the NIC's namespaces (its host's and, for
// a veth, its far end's) through the sockets the call has, or opens,
// there, as host.ForeignNamespace does: for op "delete" a warning when
// another copy of the lab owns one (nothing is touched), an error when a
// mark cannot be read; nil when both are this state's or do not exist.
func (x *call) foreignNS(op string) *hcl.Diagnostic {
	if x.s.ns != "" {
		if x.c == nil {
			c, err := x.p.open(x.s.ns)
			if err != nil && !errors.Is(err, errNoNamespace) {
				x.d.errorf("namespace %s", err, x.s.ns)
				return x.d.diags[len(x.d.diags)-1]
			}
			x.c = c
		}
		if x.c != nil {
			if w := x.c.foreign(x.naming, x.addr, op); w != nil {
				return w
			}
		}
	}
	if x.s.peerNS == "" {
		return nil
	}
	far, err := x.farNS()
	if errors.Is(err, errNoNamespace) {
		return nil
	}
	if err != nil {
		x.d.errorf("namespace %s", err, x.s.peerNS)
		return x.d.diags[len(x.d.diags)-1]
	}
	return far.foreign(x.naming, x.addr, op)
}

// ownLink is the behaviour shared by the links tsolab makes: each
// carries the NIC's alias, is deleted by release, and has nothing beyond
// itself (switchPort adds the port). The kinds embed it.
type ownLink struct{}

func (ownLink) owns(x *call, l netlink.Link) bool                          { return l.Attrs().Alias == x.alias }
func (ownLink) adoptsDevice() bool                                         { return false }
func (ownLink) readFar(x *call) *hcl.Diagnostic                            { return nil }
func (ownLink) farGone(x *call) bool                                       { return false }
func (ownLink) watched(provider.Attrs) []string                            { return []string{provider.AttrUp} }
func (ownLink) update(*call, netlink.Link, provider.Attrs, provider.Attrs) {}
func (ownLink) configureFar(*call)                                         {}
func (ownLink) observeFar(*call, provider.Attrs)                           {}
func (ownLink) release(x *call, rec provider.Attrs)                        { deleteOwn(x, nil, deleteLink) }

// markUp gives a link tsolab made the NIC's alias and brings it up.
func markUp(x *call, l netlink.Link) {
	if err := ensureAliasUp(x.c, l, x.alias); err != nil {
		x.d.errorf("configure %s", err, x.s.ifname)
	}
}

// findToRelease opens the NIC's namespace as x.c and finds its
// interface there (nil when it is missing). ok is false when there is
// nothing to release: the namespace is gone, taking the link with it, or
// it cannot be read (then x.d has the error).
func (x *call) findToRelease() (link netlink.Link, ok bool) {
	c := x.c
	if c == nil {
		var err error
		c, err = x.p.open(x.s.ns)
		if errors.Is(err, errNoNamespace) {
			return nil, false
		}
		if err != nil {
			x.d.errorf("delete", err)
			return nil, false
		}
		x.c = c
	}
	link, err := c.linkByName(x.s.ifname)
	if err != nil {
		x.d.errorf("delete %s", err, x.s.ifname)
		return nil, false
	}
	return link, true
}

// deleteOwn opens the NIC's namespace and deletes its interface, with
// del, if it carries the NIC's alias (both ends of a veth go together).
// When the interface is missing, ifMissing (when not nil) removes what is
// left of the link elsewhere.
func deleteOwn(x *call, ifMissing func(*call), del func(*call, netlink.Link) error) {
	s, d := x.s, x.d
	link, ok := x.findToRelease()
	if !ok {
		return
	}
	if link == nil {
		if ifMissing != nil {
			ifMissing(x)
		}
		return
	}
	if link.Attrs().Alias != x.alias {
		d.fix(fmt.Sprintf("refusing to delete %s in %s: %v", s.ifname, nsName(x.c.name), foreignLink(x.c.name, link)),
			fmt.Sprintf("tsolab deletes only links whose alias is %q. Remove it by hand if it is really yours.", x.alias))
		return
	}
	if err := del(x, link); err != nil && !isNotFound(err) {
		d.errorf("delete %s", err, s.ifname)
	}
}

// deleteLink deletes the NIC's interface.
func deleteLink(x *call, link netlink.Link) error { return x.c.nl.LinkDel(link) }
