package nic

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host"
)

// switchPort is a NIC connected to a switch: a veth whose far end, in
// the switch's namespace, is a port of its bridge carrying the NIC's
// alias. The NIC exists only while both ends do; the port's up state,
// master and MTU are the NIC's attributes port.*.
type switchPort struct{ ownLink }

func (switchPort) String() string { return provider.LinkSwitch }

func (switchPort) validate(x *call, caps *capabilities) (Features, string) {
	return caps.vethFeatures, "veth"
}

// create makes the veth and makes its far end the NIC's port of the
// switch's bridge: marked, up, with the NIC's MTU, in one request
// (configureFar then has nothing left to do).
func (switchPort) create(ctx context.Context, x *call, out provider.Attrs) netlink.Link {
	link, far := createVeth(x, x.alias)
	if link == nil {
		return nil
	}
	if err := setPort(x, far); err != nil {
		x.d.errorf("connect %s to switch %s", err, x.s.ifname, x.s.target)
		return nil
	}
	x.portReady = true
	x.farLink = far
	markUp(x, link)
	return link
}

// setPort makes port (the far end of a switch NIC's veth, in x.far) a
// port of the switch's bridge, marked with the NIC's alias, up, with the
// NIC's MTU when it declares one, in one RTM_SETLINK; what it is already
// is left out of the request. (It comes up without an IPv6 link-local
// address: switchAddrGenMode.) Once the kernel acknowledges the request,
// port's attributes say what it set: the kernel applies all of a
// RTM_SETLINK or refuses it (do_setlink), so the port need not be read
// back.
func setPort(x *call, port netlink.Link) error {
	br, err := x.far.pool.bridge(x.far, x.s.target)
	if err != nil {
		return err
	}
	a := port.Attrs()
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(a.Index)
	if a.Flags&net.FlagUp == 0 {
		msg.Change, msg.Flags = unix.IFF_UP, unix.IFF_UP
	}
	req := nl.NewNetlinkRequest(unix.RTM_SETLINK, unix.NLM_F_ACK)
	req.AddData(msg)
	if a.Alias != x.alias {
		req.AddData(nl.NewRtAttr(unix.IFLA_IFALIAS, []byte(x.alias)))
	}
	if a.MasterIndex != br {
		req.AddData(nl.NewRtAttr(unix.IFLA_MASTER, nl.Uint32Attr(uint32(br))))
	}
	if x.s.mtu > 0 && a.MTU != x.s.mtu {
		req.AddData(nl.NewRtAttr(unix.IFLA_MTU, nl.Uint32Attr(uint32(x.s.mtu))))
	}
	if err := x.far.execute(req); err != nil {
		return err
	}
	a.Flags |= net.FlagUp
	a.Alias, a.MasterIndex = x.alias, br
	if x.s.mtu > 0 {
		a.MTU = x.s.mtu
	}
	return nil
}

// readFar opens the switch's namespace and checks its mark; a namespace
// that cannot be opened leaves the port missing (farGone).
func (switchPort) readFar(x *call) *hcl.Diagnostic {
	far, err := x.farNS()
	if err != nil {
		return nil
	}
	return far.foreign(x.naming, x.addr, "read")
}

// farGone reports the NIC gone when its port is missing or not its own.
func (switchPort) farGone(x *call) bool {
	x.farLink = portOurs(x)
	return x.farLink == nil
}

// watched adds the port's up state and master, and with an MTU the
// port's MTU.
func (switchPort) watched(rec provider.Attrs) []string {
	keys := []string{provider.AttrUp, provider.AttrPortUp, provider.AttrPortMaster}
	if _, ok := rec[provider.AttrMTU]; ok {
		keys = append(keys, provider.AttrPortMTU)
	}
	return keys
}

// configureFar makes the port what the NIC declares, unless create just
// did.
func (switchPort) configureFar(x *call) {
	if !x.portReady {
		ensurePort(x)
	}
}
func (switchPort) observeFar(x *call, out provider.Attrs) { observePort(x, out) }
func (switchPort) release(x *call, rec provider.Attrs) {
	deleteOwn(x, deletePort, deleteThroughPort)
}

// deleteThroughPort deletes a switch NIC's veth through its port, in a
// batch with the other ports of the switch being deleted (portDeleter):
// the NIC's end goes with it. A port that is not the NIC end's own
// (other alias, not its pair) is left, and the NIC's end deleted alone.
func deleteThroughPort(x *call, link netlink.Link) error {
	far, err := x.farNS()
	if err != nil {
		return deleteLink(x, link)
	}
	port, err := far.linkByName(x.s.peerIf)
	if err != nil || port == nil || port.Attrs().Alias != x.alias ||
		port.Attrs().ParentIndex != link.Attrs().Index || link.Attrs().ParentIndex != port.Attrs().Index {
		return deleteLink(x, link)
	}
	return far.pool.dels.remove(far, port)
}

// vethPair is the NIC that owns a back-to-back veth pair: it makes both
// ends, the far one carrying the peer NIC's alias (peerEnd), and deletes
// both.
type vethPair struct{ ownLink }

func (vethPair) String() string { return provider.LinkPeer }

func (vethPair) validate(x *call, caps *capabilities) (Features, string) {
	return caps.vethFeatures, "veth"
}

func (vethPair) create(ctx context.Context, x *call, out provider.Attrs) netlink.Link {
	farAlias := x.naming.Alias(provider.Addr{Kind: provider.KindNIC, Name: x.s.target})
	link, far := createVeth(x, farAlias)
	if link == nil {
		return nil
	}
	if x.created {
		// The other NIC's end gets its mode before it comes up.
		if err := x.far.markNew(far, farAlias, x.s.peerGenMode); err != nil {
			x.d.errorf("configure the other end %s", err, x.s.peerIf)
		}
	}
	if err := ensureAliasUp(x.far, far, farAlias); err != nil {
		x.d.errorf("configure the other end %s", err, x.s.peerIf)
	}
	markUp(x, link)
	return link
}

// readFar checks the mark of the pair's other namespace, which Read does
// not open.
func (vethPair) readFar(x *call) *hcl.Diagnostic {
	if x.s.peerNS == "" {
		return nil
	}
	return host.ForeignNamespace(x.naming, x.addr, x.s.peerNS, "read")
}

// peerEnd is the far end of another NIC's pair: that NIC (the owner,
// AttrLink's target) makes it with this NIC's alias and deletes it with
// its own end; this NIC waits for it and configures it.
type peerEnd struct{ ownLink }

func (peerEnd) String() string { return provider.LinkPeerOf }

func (peerEnd) validate(x *call, caps *capabilities) (Features, string) {
	return caps.vethFeatures, "veth"
}

func (peerEnd) create(ctx context.Context, x *call, out provider.Attrs) netlink.Link {
	link := awaitFarEnd(ctx, x)
	if link == nil {
		return nil
	}
	markUp(x, link)
	return link
}

// createVeth makes (or finds, after an interrupted apply) the veth of a
// switch or peer NIC with each end created directly in its namespace,
// the far end's namespace opened as x.far, and gives the far end
// farAlias when it has to remove an orphan of that name. It returns the
// NIC's end, marked, and the far end; nil, nil when it cannot.
func createVeth(x *call, farAlias string) (link, far netlink.Link) {
	s, c, d := x.s, x.c, x.d
	peer, err := x.farNS()
	if err != nil {
		d.errorf("create veth %s", err, s.ifname)
		return nil, nil
	}
	if diag := peer.foreign(x.naming, x.addr, ""); diag != nil {
		d.diags = append(d.diags, diag)
		return nil, nil
	}
	if link = addVeth(x, peer, farAlias); link == nil {
		return nil, nil
	}
	if !x.created && link.Attrs().Alias != x.alias && !halfMade(c, peer, link, s, x.naming) {
		d.errorf("create veth %s", foreignLink(c.name, link), s.ifname)
		return nil, nil
	}
	// The kernel ignores IFLA_IFALIAS on creation: mark the link at once,
	// and give it its IPv6 address generation mode before the far end
	// comes up.
	if x.created {
		if err := c.markNew(link, x.alias, s.genMode); err != nil {
			d.errorf("mark veth %s", err, s.ifname)
			return nil, nil
		}
	}
	if link.Attrs().Alias != x.alias {
		if err := c.nl.LinkSetAlias(link, x.alias); err != nil {
			d.errorf("mark veth %s", err, s.ifname)
			return nil, nil
		}
		link.Attrs().Alias = x.alias
	}
	if x.created {
		return link, newFarEnd(link, s.peerIf)
	}
	far, err = peer.linkByName(s.peerIf)
	if err == nil && far == nil && !x.remade {
		// The NIC's own veth from before, without its other end: the
		// far namespace it was made with is gone (a destroy killed after
		// the switch went but before the host, whose NIC left its veth to
		// the host's namespace: the kernel frees the pair with the old
		// namespace, in its own time). Make the pair again.
		x.remade = true
		if err = c.nl.LinkDel(link); err == nil || isNotFound(err) {
			return createVeth(x, farAlias)
		}
	}
	if err == nil && far == nil {
		err = fmt.Errorf("the other end %s is missing from %s", s.peerIf, nsName(peer.name))
	}
	if err != nil {
		d.errorf("create veth %s", err, s.ifname)
		return nil, nil
	}
	return link, far
}

// vethDefaultMTU is the MTU the kernel gives a new veth end
// (ETH_DATA_LEN, veth_setup), and config.NIC's MTU 0 means for one.
const vethDefaultMTU = 1500

// addVeth creates the veth, its NIC end in x.c, up, and its far end in
// peer, and returns the NIC's end as the kernel reports it created (its
// echo of the request: index, flags, MTU, and the far end's index as
// ParentIndex; without the alias, which the kernel ignores on creation),
// setting x.created. When a link of either name is in the way it
// returns the NIC end's name's link as it is (an interrupted apply's, or
// not the NIC's: the caller tells), or removes an orphaned far end of the
// lab's and tries again. nil when it cannot.
func addVeth(x *call, peer *nsConn, farAlias string) netlink.Link {
	s, c, d := x.s, x.c, x.d
	peerMTU := s.mtu
	if _, pair := s.link.(vethPair); pair {
		// The far end is another NIC, which sets its own MTU when it
		// declares one: it starts at the kernel's veth default, as the
		// model's NIC without mtu does, not at this end's.
		peerMTU = vethDefaultMTU
	}
	req := vethRequest(s.ifname, s.mtu, c, s.peerIf, peerMTU, peer)
	link, err := c.create(req, s.ifname)
	if errors.Is(err, unix.EEXIST) {
		there, lerr := c.linkByName(s.ifname)
		if lerr != nil {
			d.errorf("create veth %s", lerr, s.ifname)
			return nil
		}
		if there != nil {
			return there
		}
		if err = removeOrphan(peer, s.peerIf, farAlias); err == nil {
			link, err = c.create(vethRequest(s.ifname, s.mtu, c, s.peerIf, peerMTU, peer), s.ifname)
		}
	}
	if err != nil {
		if errors.Is(err, unix.EEXIST) {
			err = fmt.Errorf("%s in %s or %s in %s already exists: %w", s.ifname, nsName(c.name), s.peerIf, nsName(peer.name), err)
		}
		d.errorf("create veth %s", err, s.ifname)
		return nil
	}
	x.created = true
	return link
}

// vethRequest is the RTM_NEWLINK that makes a veth pair, its end name up
// in c with MTU mtu (0: the kernel's) and its far end peerName, down, in
// peer with MTU peerMTU (0: the kernel's). (vishvananda/netlink's LinkAdd
// would look the new link up by name afterwards for its index, another
// request under the rtnl lock; nsConn.create asks for the kernel's echo.)
func vethRequest(name string, mtu int, c *nsConn, peerName string, peerMTU int, peer *nsConn) *nl.NetlinkRequest {
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_CREATE|unix.NLM_F_EXCL|unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Change, msg.Flags = unix.IFF_UP, unix.IFF_UP
	req.AddData(msg)
	req.AddData(nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(name)))
	if mtu > 0 {
		req.AddData(nl.NewRtAttr(unix.IFLA_MTU, nl.Uint32Attr(uint32(mtu))))
	}
	req.AddData(nl.NewRtAttr(unix.IFLA_NET_NS_FD, nl.Uint32Attr(uint32(c.fd))))
	info := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	info.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated("veth"))
	far := info.AddRtAttr(nl.IFLA_INFO_DATA, nil).AddRtAttr(nl.VETH_INFO_PEER, nil)
	nl.NewIfInfomsgChild(far, unix.AF_UNSPEC)
	far.AddRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(peerName))
	if peerMTU > 0 {
		far.AddRtAttr(unix.IFLA_MTU, nl.Uint32Attr(uint32(peerMTU)))
	}
	far.AddRtAttr(unix.IFLA_NET_NS_FD, nl.Uint32Attr(uint32(peer.fd)))
	req.AddData(info)
	return req
}

// newFarEnd is the far end of a veth addVeth just made (link, as the
// kernel echoed it), as it was made: down, without alias or master,
// its MTU not known here. It saves asking the kernel for it.
func newFarEnd(link netlink.Link, name string) netlink.Link {
	return &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Index: link.Attrs().ParentIndex, Name: name}}
}

// removeOrphan deletes the far end name of a veth whose own end is
// missing: the pair's survivor after the namespace of the own end went
// away (a kill -9 between unmounting a host's namespace and forgetting
// it; the kernel frees a namespace, and the veths inside it, in the
// background). It is removed only when it is tsolab's: it carries the
// alias the far end is given (want), or, unmarked, it is a veth in a
// namespace of the lab (where nothing but tsolab makes links) left by a
// kill before marking.
func removeOrphan(peer *nsConn, name, want string) error {
	far, err := peer.linkByName(name)
	if err != nil || far == nil {
		return err
	}
	if a := far.Attrs().Alias; a != want && (a != "" || far.Type() != "veth") {
		return nil // not ours: LinkAdd then says the name is taken
	}
	if err := peer.nl.LinkDel(far); err != nil && !errors.Is(err, unix.ENODEV) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("remove %s, left in %s by an interrupted apply or destroy: %w", name, nsName(peer.name), err)
	}
	return nil
}

// halfMade reports whether link, found without an alias, is the veth an
// apply killed between creating it and marking it left behind: a veth
// whose other end is the expected one, in a namespace that carries the
// lab's prefix (where nothing but tsolab makes links).
func halfMade(c, peer *nsConn, link netlink.Link, s spec, n provider.Naming) bool {
	if link.Attrs().Alias != "" || link.Type() != "veth" || !n.OwnsNS(s.peerNS) {
		return false
	}
	far, err := peer.linkByName(s.peerIf)
	if err != nil || far == nil || far.Attrs().Alias != "" {
		return false
	}
	id, err := c.nl.GetNetNsIdByFd(int(peer.fd))
	if err != nil || id != link.Attrs().NetNsID {
		return false
	}
	return link.Attrs().ParentIndex == far.Attrs().Index && far.Attrs().ParentIndex == link.Attrs().Index
}

// awaitFarEnd finds the far end of the pair the owning NIC makes,
// carrying this NIC's alias, waiting up to PeerWait for it.
func awaitFarEnd(ctx context.Context, x *call) netlink.Link {
	s, c, d := x.s, x.c, x.d
	ctx, cancel := context.WithTimeout(ctx, x.p.PeerWait)
	defer cancel()
	// The kernel offers no event for "a link got an alias" that is
	// cheaper than asking, so poll with a deadline.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		link, err := c.linkByName(s.ifname)
		if err != nil {
			d.errorf("find %s", err, s.ifname)
			return nil
		}
		if link != nil && link.Attrs().Alias == x.alias {
			return link
		}
		select {
		case <-ctx.Done():
			why := fmt.Errorf("nic.%s creates it and it is not in %s", s.target, nsName(c.name))
			if link != nil {
				why = foreignLink(c.name, link)
			}
			d.errorf("find the far end %s of nic.%s's pair", why, s.ifname, s.target)
			return nil
		case <-tick.C:
		}
	}
}

// ensurePort makes the switch end of a switch NIC's veth (in the
// switch's namespace) a port of the switch's bridge, up, with the NIC's
// MTU when it declares one. A port without the NIC's alias is left
// alone.
func ensurePort(x *call) {
	s, d := x.s, x.d
	fail := func(err error) { d.errorf("connect %s to switch %s", err, s.ifname, s.target) }
	peer, err := x.farNS()
	if err != nil {
		fail(err)
		return
	}
	port, err := peer.linkByName(s.peerIf)
	if err == nil && port == nil {
		err = fmt.Errorf("port %s is missing from %s", s.peerIf, nsName(peer.name))
	}
	if err == nil && port.Attrs().Alias != x.alias {
		err = foreignLink(peer.name, port)
	}
	if err != nil {
		fail(err)
		return
	}
	br, err := peer.linkByName(provider.BridgeName)
	if err == nil && br == nil {
		err = fmt.Errorf("switch %s has no bridge %s in %s", s.target, provider.BridgeName, nsName(peer.name))
	}
	if err == nil && port.Attrs().MasterIndex != br.Attrs().Index {
		err = peer.nl.LinkSetMasterByIndex(port, br.Attrs().Index)
	}
	if err != nil {
		fail(err)
		return
	}
	if s.mtu > 0 && port.Attrs().MTU != s.mtu {
		if err := peer.nl.LinkSetMTU(port, s.mtu); err != nil {
			d.errorf("set mtu %d on the switch port", err, s.mtu)
		}
	}
	if port.Attrs().Flags&net.FlagUp == 0 {
		if err := peer.nl.LinkSetUp(port); err != nil {
			d.errorf("set the switch port %s up", err, s.peerIf)
		}
	}
}

// observePort fills in the port.* keys out has with what a switch NIC's
// port is: up or not, the name of its master ("" for none), its MTU. It
// uses the port Read just found (x.farLink), or reads it.
func observePort(x *call, out provider.Attrs) {
	s, d := x.s, x.d
	var keys []string
	for _, k := range []string{provider.AttrPortUp, provider.AttrPortMaster, provider.AttrPortMTU} {
		if _, ok := out[k]; ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return
	}
	peer, err := x.farNS()
	if err != nil {
		d.errorf("read back port %s", err, s.peerIf)
		return
	}
	port := x.farLink
	if port == nil {
		port, err = peer.linkByName(s.peerIf)
		if err == nil && port == nil {
			err = fmt.Errorf("it is missing from %s", nsName(peer.name))
		}
		if err != nil {
			d.errorf("read back port %s", err, s.peerIf)
			return
		}
	}
	for _, k := range keys {
		switch k {
		case provider.AttrPortUp:
			out[k] = strconv.FormatBool(port.Attrs().Flags&net.FlagUp != 0)
		case provider.AttrPortMTU:
			out[k] = strconv.Itoa(port.Attrs().MTU)
		case provider.AttrPortMaster:
			out[k] = ""
			if i := port.Attrs().MasterIndex; i != 0 {
				if br, err := peer.pool.bridge(peer, s.target); err == nil && br == i {
					out[k] = provider.BridgeName
					continue
				}
				m, err := peer.nl.LinkByIndex(i)
				if err != nil {
					d.errorf("read back the master of port %s", err, s.peerIf)
					continue
				}
				out[k] = m.Attrs().Name
			}
		}
	}
}

// portOurs returns a switch NIC's port when the switch's namespace
// (x.far, nil when it could not be opened) has it and it carries the
// NIC's alias; nil otherwise.
func portOurs(x *call) netlink.Link {
	if x.far == nil {
		return nil
	}
	port, err := readPort(x)
	if err != nil || port == nil || port.Attrs().Alias != x.alias {
		return nil
	}
	return port
}

// linksKey is the key of a namespace's links in a refresh's snapshot.
type linksKey struct{ ns string }

// readPort returns a switch NIC's port (nil when x.far has none): in a
// refresh, from one dump of the links of the switch's namespace that its
// reads share (x.snap: one request for a switch's ports, where asking for
// each took 1000 under the rtnl lock in a 1000-host plan), else, or when
// the dump failed (interrupted by a change), by its name.
func readPort(x *call) (netlink.Link, error) {
	if x.snap != nil {
		far := x.far
		v, err := x.snap.Get(linksKey{far.name}, func() (any, error) { return linksByName(far) })
		if err == nil {
			return v.(map[string]netlink.Link)[x.s.peerIf], nil
		}
	}
	return x.far.linkByName(x.s.peerIf)
}

// linksByName dumps the links of c's namespace, by name.
func linksByName(c *nsConn) (map[string]netlink.Link, error) {
	links, err := c.nl.LinkList()
	if err != nil {
		return nil, err
	}
	m := make(map[string]netlink.Link, len(links))
	for _, l := range links {
		m[l.Attrs().Name] = l
	}
	return m, nil
}

// deletePort removes a switch port whose NIC end is already gone.
func deletePort(x *call) {
	s, d := x.s, x.d
	peer, err := x.farNS()
	if errors.Is(err, errNoNamespace) {
		return
	}
	if err != nil {
		d.errorf("delete port %s", err, s.peerIf)
		return
	}
	port, err := peer.linkByName(s.peerIf)
	if err != nil || port == nil || port.Attrs().Alias != x.alias {
		return
	}
	if err := peer.pool.dels.remove(peer, port); err != nil && !isNotFound(err) {
		d.errorf("delete port %s", err, s.peerIf)
	}
}
