package nic

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host"
)

// Provider manages provider.KindNIC resources. Its only memory between
// calls is the kernel's capabilities, probed once; it is safe for
// concurrent calls on different NICs.
type Provider struct {
	// PeerWait bounds how long the far end of a back-to-back pair waits
	// for the NIC that creates the pair (the planner creates that one
	// first; the wait covers a concurrent apply).
	PeerWait time.Duration

	probe prober
}

// New returns the NIC provider.
func New() *Provider { return &Provider{PeerWait: 10 * time.Second} }

var _ provider.Interface = (*Provider)(nil)

// Private attributes of an adopted device: what it had before tsolab.
const (
	restoreMTU     = provider.PrefixRestore + provider.AttrMTU       // the original MTU
	restoreOffload = provider.PrefixRestore + provider.PrefixOffload // "restore.offload.tso" = original
	restoreAddress = provider.PrefixRestore + provider.AttrAddress   // the address tsolab added, removed on delete
)

// Validate checks what the planner will ask of this machine: the device
// to adopt exists (and, for a namespace host, can move there), offloads the device has [fixed] at
// the other value, and delay needing netem.
func (p *Provider) Validate(ctx context.Context, req provider.ValidateRequest) provider.ValidateResponse {
	d := newDiags(req.Addr)
	d.rng, d.attrs = req.Range, req.AttrRanges
	s, err := parseSpec(req.Desired)
	if err != nil {
		d.fix(err.Error(), "")
		return provider.ValidateResponse{Diagnostics: d.diags}
	}
	for _, ns := range []string{s.ns, s.peerNS} {
		if ns != "" && !req.Naming.OwnsNS(ns) {
			d.fix(fmt.Sprintf("namespace %q is not one of lab %s's", ns, req.Naming.LabID), "This is a bug in tsolab.")
		}
	}
	caps, err := p.probe.get()
	if err != nil {
		d.errorf("probe the kernel", err)
		return provider.ValidateResponse{Diagnostics: d.diags}
	}
	if s.shape.delay > 0 && caps.netemErr != nil {
		d.fixAt("delay", fmt.Sprintf("delay = %s needs the netem qdisc: %v", s.shape.delay, caps.netemErr),
			"Remove `delay` from the nic block, or run on a kernel with sch_netem (CONFIG_NET_SCH_NETEM; `modprobe sch_netem`).")
	}
	if s.shape.rate != 0 && s.shape.rate < 8 {
		d.fixAt("rate", fmt.Sprintf("rate %d bit/s is below one byte per second", s.shape.rate), "Use a rate of at least 8bit.")
	}
	var feats Features
	devKind := "veth"
	switch s.kind {
	case linkSwitch, linkPeer, linkPeerOf:
		feats = caps.vethFeatures
	case linkNone:
		devKind = caps.sinkKind
		if devKind == "" {
			d.fix("a NIC without connect or peer needs a dummy or ifb link, and this kernel has neither",
				"Connect the NIC to a switch or a peer, or build the kernel with CONFIG_DUMMY or CONFIG_IFB.")
		}
		feats = caps.sinkFeatures
	case linkDevice:
		devKind = "device " + s.target
		if s.movesDevice() {
			feats = p.validateMove(s, d)
			break
		}
		if s.ns != "" {
			// lo exists in every namespace, so a namespace host adopts
			// its own loopback (its offloads matter to loopback
			// workloads, seed 004); the namespace may not exist yet, and
			// every lo can change tso, gso and the checksum flags.
			break
		}
		c, err := p.open("")
		if err != nil {
			d.errorf("open the machine's namespace", err)
			break
		}
		defer c.Close()
		l, err := c.linkByName(s.target)
		if err != nil || l == nil {
			if err == nil {
				err = errors.New("no such device")
			}
			d.fixAt("device", fmt.Sprintf("device %q: %v", s.target, err), "Name a device `ip link` lists on this machine.")
			break
		}
		if feats, err = c.features(s.target); err != nil {
			d.errorf("device %s", err, s.target)
		}
	}
	for _, w := range s.offloads {
		if feats == nil {
			break
		}
		if why := feats.fixedConflict(w); why != "" {
			d.fixAt("offload", fmt.Sprintf("offload %s: %s (%s)", w, why, devKind),
				fmt.Sprintf("This device cannot change %s; remove offload.%s or set it to %v.", w.o, w.o, !w.on))
		}
	}
	return provider.ValidateResponse{Diagnostics: d.diags}
}

// Create makes the NIC's link (or adopts the device, moving it into a
// namespace host, or waits for the far end of a pair) and configures it. A link of its own left by an
// interrupted apply is completed; a link of that name without the lab's
// alias is an error.
func (p *Provider) Create(ctx context.Context, req provider.CreateRequest) provider.CreateResponse {
	d := newDiags(req.Addr)
	s, err := parseSpec(req.Desired)
	if err != nil {
		d.errorf("create", err)
		return provider.CreateResponse{Diagnostics: d.diags}
	}
	// The marks of the NIC's namespace and of a veth's far end are read
	// through the sockets the create opens there (createVeth); another
	// peer's namespace on its own.
	c, err := p.open(s.ns)
	if err != nil {
		d.errorf("create", err)
		return provider.CreateResponse{Diagnostics: d.diags}
	}
	defer c.Close()
	if diag := c.foreign(req.Naming, req.Addr, ""); diag != nil {
		return provider.CreateResponse{Diagnostics: hcl.Diagnostics{diag}}
	}
	if s.kind != linkSwitch && s.kind != linkPeer && s.peerNS != "" {
		if diag := host.ForeignNamespace(req.Naming, req.Addr, s.peerNS, ""); diag != nil {
			return provider.CreateResponse{Diagnostics: hcl.Diagnostics{diag}}
		}
	}
	alias := req.Naming.Alias(req.Addr)
	s.alias = alias
	template := req.Desired.Clone()

	var link netlink.Link
	var peer *nsConn
	defer func() { peer.Close() }()
	switch s.kind {
	case linkSwitch, linkPeer:
		link, peer = p.createVeth(c, s, req, d)
	case linkPeerOf:
		link = p.awaitFarEnd(ctx, c, s, req, d)
	case linkNone:
		link = p.createSink(c, s, req.Naming, alias, d)
	case linkDevice:
		if s.movesDevice() {
			if link = p.moveIn(c, s, template, d); link == nil {
				return provider.CreateResponse{Diagnostics: d.diags}
			}
			break
		}
		link, err = c.linkByName(s.target)
		if err == nil && link == nil {
			err = errors.New("no such device")
		}
		if err != nil {
			d.errorf("adopt device %s", err, s.target)
			return provider.CreateResponse{Diagnostics: d.diags}
		}
		recordOriginals(c, link, s, template, nil, d)
	}
	if link == nil {
		return provider.CreateResponse{Diagnostics: d.diags}
	}
	if s.kind != linkDevice {
		if err := ensureAliasUp(c, link, alias); err != nil {
			d.errorf("configure %s", err, s.ifname)
		}
	}
	configure(c, peer, link, s, nil, template, d)
	return provider.CreateResponse{New: p.observe(c, peer, nil, nil, s, template, d), Diagnostics: d.diags}
}

// createVeth makes (or finds, after an interrupted apply) the veth of a
// switch or peer NIC with each end created directly in its namespace,
// and sets up the far end: a bridge port of the switch, or the peer NIC's
// end carrying that NIC's alias.
func (p *Provider) createVeth(c *nsConn, s spec, req provider.CreateRequest, d *diags) (netlink.Link, *nsConn) {
	alias := req.Naming.Alias(req.Addr)
	peer, err := openNS(s.peerNS)
	if err != nil {
		d.errorf("create veth %s", err, s.ifname)
		return nil, nil
	}
	if diag := peer.foreign(req.Naming, req.Addr, ""); diag != nil {
		d.diags = append(d.diags, diag)
		return nil, peer
	}
	link, err := c.linkByName(s.ifname)
	if err != nil {
		d.errorf("create veth %s", err, s.ifname)
		return nil, peer
	}
	if link != nil && link.Attrs().Alias != alias && !halfMade(c, peer, link, s, req.Naming) {
		d.errorf("create veth %s", foreignLink(c.name, link), s.ifname)
		return nil, peer
	}
	farAlias := alias
	if s.kind == linkPeer {
		farAlias = req.Naming.Alias(provider.Addr{Kind: provider.KindNIC, Name: s.target})
	}
	if link == nil {
		if err := removeOrphan(peer, s.peerIf, farAlias); err != nil {
			d.errorf("create veth %s", err, s.ifname)
			return nil, peer
		}
		attrs := linkAttrs(s.ifname)
		attrs.Alias = alias
		attrs.MTU = s.mtu
		attrs.Namespace = netlink.NsFd(c.fd)
		veth := &netlink.Veth{
			LinkAttrs:     attrs,
			PeerName:      s.peerIf,
			PeerTxQLen:    -1,
			PeerNamespace: netlink.NsFd(peer.fd),
		}
		if err := c.nl.LinkAdd(veth); err != nil {
			if errors.Is(err, unix.EEXIST) {
				err = fmt.Errorf("%s in %s or %s in %s already exists: %w", s.ifname, nsName(c.name), s.peerIf, nsName(peer.name), err)
			}
			d.errorf("create veth %s", err, s.ifname)
			return nil, peer
		}
		if link, err = c.linkByName(s.ifname); err != nil || link == nil {
			d.errorf("create veth %s", fmt.Errorf("not found after creation (%v)", err), s.ifname)
			return nil, peer
		}
	}
	// The kernel ignores IFLA_IFALIAS on creation: mark the link at once.
	if link.Attrs().Alias != alias {
		if err := c.nl.LinkSetAlias(link, alias); err != nil {
			d.errorf("mark veth %s", err, s.ifname)
			return nil, peer
		}
		link.Attrs().Alias = alias
	}
	far, err := peer.linkByName(s.peerIf)
	if err == nil && far == nil {
		err = fmt.Errorf("the other end %s is missing from %s", s.peerIf, nsName(peer.name))
	}
	if err != nil {
		d.errorf("create veth %s", err, s.ifname)
		return nil, peer
	}
	if s.kind == linkSwitch {
		// configure attaches the port to the bridge and brings it up.
		if far.Attrs().Alias != farAlias {
			if err := peer.nl.LinkSetAlias(far, farAlias); err != nil {
				d.errorf("mark port %s", err, s.peerIf)
				return nil, peer
			}
		}
		return link, peer
	}
	if err := ensureAliasUp(peer, far, farAlias); err != nil {
		d.errorf("configure the other end %s", err, s.peerIf)
	}
	return link, peer
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
func (p *Provider) awaitFarEnd(ctx context.Context, c *nsConn, s spec, req provider.CreateRequest, d *diags) netlink.Link {
	alias := req.Naming.Alias(req.Addr)
	ctx, cancel := context.WithTimeout(ctx, p.PeerWait)
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
		if link != nil && link.Attrs().Alias == alias {
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

// createSink makes the link of a NIC with nothing behind it: a dummy, or
// an ifb where the kernel has no dummy driver.
func (p *Provider) createSink(c *nsConn, s spec, n provider.Naming, alias string, d *diags) netlink.Link {
	link, err := c.linkByName(s.ifname)
	if err != nil {
		d.errorf("create %s", err, s.ifname)
		return nil
	}
	caps, err := p.probe.get()
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
		halfMade := link.Attrs().Alias == "" && link.Type() == caps.sinkKind && n.OwnsNS(s.ns)
		if link.Attrs().Alias != alias && !halfMade {
			d.errorf("create %s", foreignLink(c.name, link), s.ifname)
			return nil
		}
		return link
	}
	attrs := linkAttrs(s.ifname)
	attrs.Alias = alias
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
	return link
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

// configure brings the link up and makes its MTU, address, offloads and
// shaping what s declares, and a switch NIC's port an up port of the
// switch's bridge with the NIC's MTU. prior holds the attributes as they
// were (nil on create), to remove an address that was replaced. Every
// failure becomes a diagnostic; configure carries on with the rest.
func configure(c, peer *nsConn, link netlink.Link, s spec, prior, out provider.Attrs, d *diags) {
	if link.Attrs().Flags&net.FlagUp == 0 {
		if err := c.nl.LinkSetUp(link); err != nil {
			d.errorf("set %s up", err, s.ifname)
		}
	}
	if s.mtu > 0 && link.Attrs().MTU != s.mtu {
		if err := c.nl.LinkSetMTU(link, s.mtu); err != nil {
			d.errorf("set mtu %d", err, s.mtu)
		}
	}
	if s.kind == linkSwitch {
		ensurePort(peer, s, d)
	}

	if old := prior[provider.AttrAddress]; old != "" && old != s.address.String() {
		if p, err := netip.ParsePrefix(old); err == nil {
			if err := c.nl.AddrDel(link, toAddr(p)); err != nil && !errors.Is(err, unix.EADDRNOTAVAIL) {
				d.errorf("remove address %s", err, old)
			}
		}
	}
	if s.address.IsValid() {
		addrs, err := addresses(c, link)
		if err != nil {
			d.errorf("list addresses", err)
		} else if !contains(addrs, s.address) {
			err := c.nl.AddrAdd(link, toAddr(s.address))
			if err != nil && !errors.Is(err, unix.EEXIST) {
				d.errorf("set address %s", err, s.address)
			} else if s.kind == linkDevice {
				out[restoreAddress] = s.address.String()
			}
		}
	}

	if len(s.offloads) > 0 {
		setOffloads(c, s, d)
	}

	if err := applyShaping(c, link, s.shape, s.queueManaged); err != nil {
		d.errorf("set shaping", err)
	}
}

// ensurePort makes the switch end of a switch NIC's veth (in peer, the
// switch's namespace; opened when nil) a port of the switch's bridge, up,
// with the NIC's MTU when it declares one. A port without the NIC's alias
// is left alone.
func ensurePort(peer *nsConn, s spec, d *diags) {
	fail := func(err error) { d.errorf("connect %s to switch %s", err, s.ifname, s.target) }
	if peer == nil {
		var err error
		if peer, err = openNS(s.peerNS); err != nil {
			fail(err)
			return
		}
		defer peer.Close()
	}
	port, err := peer.linkByName(s.peerIf)
	if err == nil && port == nil {
		err = fmt.Errorf("port %s is missing from %s", s.peerIf, nsName(peer.name))
	}
	if err == nil && port.Attrs().Alias != s.alias {
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

// setOffloads asks for the declared offloads in one ethtool request,
// reads the features back and reports every offload the kernel did not
// put in force.
func setOffloads(c *nsConn, s spec, d *diags) {
	before, err := c.features(s.ifname)
	if err != nil {
		d.errorf("set offloads", err)
		return
	}
	changes := false
	for _, w := range s.offloads {
		if on, _, _ := before.State(w.o); on != w.on {
			changes = true
		}
	}
	if changes {
		if req := before.request(s.offloads); len(req) > 0 {
			if err := c.setFeatures(s.ifname, req); err != nil {
				d.errorf("set offloads", err)
			}
		}
	}
	after, err := c.features(s.ifname)
	if err != nil {
		d.errorf("read offloads back", err)
		return
	}
	for _, w := range s.offloads {
		if on, _, _ := after.State(w.o); on != w.on {
			d.fix(fmt.Sprintf("set offload %s: %s", w, after.why(w)),
				"The kernel holds offloads together (netdev_fix_features): TSO needs scatter-gather and a tx checksum offload, GSO needs scatter-gather; a [fixed] feature cannot change on this device.")
		}
	}
}

// observe returns template's keys with the values the kernel holds now
// for the NIC's interface; identity and restore.* keys are carried over.
// link and a switch NIC's port are the ones just read, or nil to read
// them (after a change).
func (p *Provider) observe(c, peer *nsConn, link, port netlink.Link, s spec, template provider.Attrs, d *diags) provider.Attrs {
	if link == nil {
		var err error
		link, err = c.linkByName(s.ifname)
		if err == nil && link == nil {
			err = errors.New("the link is gone")
		}
		if err != nil {
			d.errorf("read back %s", err, s.ifname)
			return nil
		}
	}
	out := template.Clone()
	if _, ok := out[provider.AttrUp]; ok {
		out[provider.AttrUp] = strconv.FormatBool(link.Attrs().Flags&net.FlagUp != 0)
	}
	if _, ok := out[provider.AttrMTU]; ok {
		out[provider.AttrMTU] = strconv.Itoa(link.Attrs().MTU)
	}
	if s.kind == linkSwitch {
		observePort(peer, port, s, out, d)
	}
	if rec, ok := out[provider.AttrAddress]; ok {
		addrs, err := addresses(c, link)
		if err != nil {
			d.errorf("read back addresses", err)
		}
		out[provider.AttrAddress] = pickAddress(addrs, rec, s.kind == linkDevice)
	}
	_, hasRate := out[provider.AttrRate]
	_, hasQueue := out[provider.AttrQueue]
	_, hasDelay := out[provider.AttrDelay]
	if hasRate || hasQueue || hasDelay {
		sh, _, err := readShaping(c, link)
		if err != nil {
			d.errorf("read back shaping", err)
		}
		if hasRate {
			out[provider.AttrRate] = formatNonZero(sh.rate)
		}
		if hasQueue {
			out[provider.AttrQueue] = formatNonZero(uint64(sh.queue))
		}
		if hasDelay {
			out[provider.AttrDelay] = ""
			if sh.delay > 0 {
				out[provider.AttrDelay] = sh.delay.String()
			}
		}
	}
	offs, _ := declaredOffloads(template)
	if len(offs) > 0 {
		feats, err := c.features(s.ifname)
		if err != nil {
			d.errorf("read back offloads", err)
		} else {
			for _, w := range offs {
				on, _, _ := feats.State(w.o)
				out[provider.PrefixOffload+w.o.String()] = strconv.FormatBool(on)
			}
		}
	}
	return out
}

// observePort fills in the port.* keys out has with what a switch NIC's
// port is: up or not, the name of its master ("" for none), its MTU. peer
// is the switch's namespace, opened when nil; port is the port just read,
// or nil to read it.
func observePort(peer *nsConn, port netlink.Link, s spec, out provider.Attrs, d *diags) {
	var keys []string
	for _, k := range []string{provider.AttrPortUp, provider.AttrPortMaster, provider.AttrPortMTU} {
		if _, ok := out[k]; ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return
	}
	if peer == nil {
		var err error
		if peer, err = openNS(s.peerNS); err != nil {
			d.errorf("read back port %s", err, s.peerIf)
			return
		}
		defer peer.Close()
	}
	if port == nil {
		var err error
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

func formatNonZero(v uint64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatUint(v, 10)
}

// pickAddress is the address to report: the recorded one if the link
// still has it, else the first the link has ("" for none; on an adopted
// device, whose other addresses are not tsolab's, "" unless recorded).
func pickAddress(addrs []netip.Prefix, recorded string, device bool) string {
	for _, a := range addrs {
		if a.String() == recorded {
			return recorded
		}
	}
	if device && recorded == "" || len(addrs) == 0 {
		return ""
	}
	return addrs[0].String()
}

// Read reports the NIC as it is, or Gone when its namespace or link no
// longer exists, or the link (or a switch NIC's port) there is not ours
// (no alias of this NIC). A port set down or off the bridge by hand is
// drift of port.up and port.master, which Update repairs.
func (p *Provider) Read(ctx context.Context, req provider.ReadRequest) provider.ReadResponse {
	d := newDiags(req.Addr)
	s, err := parseSpec(req.Recorded)
	if err != nil {
		d.errorf("read", err)
		return provider.ReadResponse{Diagnostics: d.diags}
	}
	// The marks of the NIC's namespace and of a switch's are read through
	// the sockets the read uses there; a peer's namespace, which the read
	// does not open, on its own.
	c, err := p.open(s.ns)
	if errors.Is(err, errNoNamespace) {
		return provider.ReadResponse{Gone: true}
	}
	if err != nil {
		d.errorf("read", err)
		return provider.ReadResponse{Diagnostics: d.diags}
	}
	defer c.Close()
	if w := c.foreign(req.Naming, req.Addr, "read"); w != nil {
		return provider.ReadResponse{Gone: w.Severity != hcl.DiagError, Diagnostics: hcl.Diagnostics{w}}
	}
	if s.kind != linkSwitch && s.peerNS != "" {
		if w := host.ForeignNamespace(req.Naming, req.Addr, s.peerNS, "read"); w != nil {
			return provider.ReadResponse{Gone: w.Severity != hcl.DiagError, Diagnostics: hcl.Diagnostics{w}}
		}
	}
	var peer *nsConn
	if s.kind == linkSwitch {
		peer, err = openNS(s.peerNS)
		if err == nil {
			defer peer.Close()
			if w := peer.foreign(req.Naming, req.Addr, "read"); w != nil {
				return provider.ReadResponse{Gone: w.Severity != hcl.DiagError, Diagnostics: hcl.Diagnostics{w}}
			}
		}
	}
	name := s.ifname
	link, err := c.linkByName(name)
	if err != nil {
		d.errorf("read %s", err, name)
		return provider.ReadResponse{Diagnostics: d.diags}
	}
	if link == nil {
		return provider.ReadResponse{Gone: true}
	}
	if s.kind != linkDevice && link.Attrs().Alias != req.Naming.Alias(req.Addr) {
		d.warnf("read %s", foreignLink(c.name, link), name)
		return provider.ReadResponse{Gone: true, Diagnostics: d.diags}
	}
	var port netlink.Link
	if s.kind == linkSwitch {
		if port = portOurs(peer, s, req.Naming.Alias(req.Addr)); port == nil {
			return provider.ReadResponse{Gone: true}
		}
	}
	actual := p.observe(c, peer, link, port, s, withUpKeys(req.Recorded, s.kind), d)
	return provider.ReadResponse{Actual: actual, Gone: actual == nil, Diagnostics: d.diags}
}

// withUpKeys returns a copy of a NIC's record with the keys tsolab
// records since it watches up states (up; a switch NIC's port.up,
// port.master and, with mtu, port.mtu) added where an older tsolab did
// not record them, so that Read reports them and a lab applied before
// reads as it is, not as changes to make.
func withUpKeys(rec provider.Attrs, k linkKind) provider.Attrs {
	out := rec.Clone()
	keys := []string{provider.AttrUp}
	if k == linkSwitch {
		keys = append(keys, provider.AttrPortUp, provider.AttrPortMaster)
		if _, ok := rec[provider.AttrMTU]; ok {
			keys = append(keys, provider.AttrPortMTU)
		}
	}
	for _, key := range keys {
		if _, ok := out[key]; !ok {
			out[key] = ""
		}
	}
	return out
}

// portOurs returns a switch NIC's port when the switch's namespace (peer,
// nil when it could not be opened) has it and it carries the NIC's alias;
// nil otherwise.
func portOurs(peer *nsConn, s spec, alias string) netlink.Link {
	if peer == nil {
		return nil
	}
	port, err := peer.linkByName(s.peerIf)
	if err != nil || port == nil || port.Attrs().Alias != alias {
		return nil
	}
	return port
}

// Update changes MTU, address, shaping and offloads in place, and brings
// the NIC and its switch port back up and onto the bridge.
func (p *Provider) Update(ctx context.Context, req provider.UpdateRequest) provider.UpdateResponse {
	d := newDiags(req.Addr)
	s, err := parseSpec(req.Desired)
	if err != nil {
		d.errorf("update", err)
		return provider.UpdateResponse{Diagnostics: d.diags}
	}
	if diag := foreignNS(req.Naming, req.Addr, s, ""); diag != nil {
		return provider.UpdateResponse{Diagnostics: hcl.Diagnostics{diag}}
	}
	c, err := p.open(s.ns)
	if err != nil {
		d.errorf("update", err)
		return provider.UpdateResponse{Diagnostics: d.diags}
	}
	defer c.Close()
	link, err := c.linkByName(s.ifname)
	if err == nil && link == nil {
		err = fmt.Errorf("%s is gone from %s", s.ifname, nsName(c.name))
	}
	if err == nil && s.kind != linkDevice && link.Attrs().Alias != req.Naming.Alias(req.Addr) {
		err = foreignLink(c.name, link)
	}
	if err != nil {
		d.errorf("update", err)
		return provider.UpdateResponse{Diagnostics: d.diags}
	}
	s.alias = req.Naming.Alias(req.Addr)
	template := req.Desired.Clone()
	if s.kind == linkDevice {
		restoreDropped(c, link, s, req.Prior, d)
		recordOriginals(c, link, s, template, req.Prior, d)
		// Originals of what the lab no longer manages were put back above.
		if s.mtu == 0 {
			delete(template, restoreMTU)
		}
		declared := map[string]bool{}
		for _, w := range s.offloads {
			declared[w.o.String()] = true
		}
		for k := range template {
			if name, ok := strings.CutPrefix(k, restoreOffload); ok && !declared[name] {
				delete(template, k)
			}
		}
		if a := req.Prior[restoreAddress]; a != "" && a != s.address.String() {
			delete(template, restoreAddress)
		}
	}
	configure(c, nil, link, s, req.Prior, template, d)
	return provider.UpdateResponse{New: p.observe(c, nil, nil, nil, s, template, d), Diagnostics: d.diags}
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
	declared := map[string]bool{}
	for _, w := range s.offloads {
		declared[w.o.String()] = true
	}
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

// Delete removes the NIC's link (both ends of the veth go together) if it
// carries this NIC's alias; an adopted device gets its original MTU and
// offloads back and loses what tsolab added (a device moved into a
// namespace host goes back to the machine's namespace with its addresses),
// and is never deleted.
func (p *Provider) Delete(ctx context.Context, req provider.DeleteRequest) provider.DeleteResponse {
	d := newDiags(req.Addr)
	s, err := parseSpec(req.Recorded)
	if err != nil {
		d.errorf("delete", err)
		return provider.DeleteResponse{Diagnostics: d.diags}
	}
	if w := foreignNS(req.Naming, req.Addr, s, "delete"); w != nil {
		return provider.DeleteResponse{Diagnostics: hcl.Diagnostics{w}}
	}
	if s.movesDevice() {
		p.moveOut(s, req.Recorded, d)
		return provider.DeleteResponse{Diagnostics: d.diags}
	}
	c, err := p.open(s.ns)
	if errors.Is(err, errNoNamespace) {
		return provider.DeleteResponse{} // the namespace took the link with it
	}
	if err != nil {
		d.errorf("delete", err)
		return provider.DeleteResponse{Diagnostics: d.diags}
	}
	defer c.Close()
	link, err := c.linkByName(s.ifname)
	if err != nil {
		d.errorf("delete %s", err, s.ifname)
		return provider.DeleteResponse{Diagnostics: d.diags}
	}
	if s.kind == linkDevice {
		if link != nil {
			p.release(c, link, s, req.Recorded, d)
		}
		return provider.DeleteResponse{Diagnostics: d.diags}
	}
	alias := req.Naming.Alias(req.Addr)
	if link == nil {
		if s.kind == linkSwitch {
			deletePort(s, alias, d)
		}
		return provider.DeleteResponse{Diagnostics: d.diags}
	}
	if link.Attrs().Alias != alias {
		d.fix(fmt.Sprintf("refusing to delete %s in %s: %v", s.ifname, nsName(c.name), foreignLink(c.name, link)),
			fmt.Sprintf("tsolab deletes only links whose alias is %q. Remove it by hand if it is really yours.", alias))
		return provider.DeleteResponse{Diagnostics: d.diags}
	}
	if err := c.nl.LinkDel(link); err != nil && !isNotFound(err) {
		d.errorf("delete %s", err, s.ifname)
	}
	return provider.DeleteResponse{Diagnostics: d.diags}
}

// deletePort removes a switch port whose NIC end is already gone.
func deletePort(s spec, alias string, d *diags) {
	peer, err := openNS(s.peerNS)
	if errors.Is(err, errNoNamespace) {
		return
	}
	if err != nil {
		d.errorf("delete port %s", err, s.peerIf)
		return
	}
	defer peer.Close()
	port, err := peer.linkByName(s.peerIf)
	if err != nil || port == nil || port.Attrs().Alias != alias {
		return
	}
	if err := peer.nl.LinkDel(port); err != nil && !isNotFound(err) {
		d.errorf("delete port %s", err, s.peerIf)
	}
}

// release gives an adopted device back as it was, down again if it was
// down before tsolab.
func (p *Provider) release(c *nsConn, link netlink.Link, s spec, rec provider.Attrs, d *diags) {
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

func isNotFound(err error) bool { return errors.Is(err, unix.ENODEV) || errors.Is(err, unix.ENOENT) }

// foreignLink explains that a link is not this NIC's.
func foreignLink(ns string, l netlink.Link) error {
	if l.Attrs().Alias == "" {
		return fmt.Errorf("%s in %s exists without a tsolab alias: it is not this lab's", l.Attrs().Name, nsName(ns))
	}
	return fmt.Errorf("%s in %s has alias %q: it is not this NIC's", l.Attrs().Name, nsName(ns), l.Attrs().Alias)
}

func nsName(ns string) string {
	if ns == "" {
		return "the machine's namespace"
	}
	return "namespace " + ns
}

// addresses lists the link's addresses, link-local ones left out, sorted.
func addresses(c *nsConn, link netlink.Link) ([]netip.Prefix, error) {
	as, err := c.nl.AddrList(link, netlink.FAMILY_ALL)
	if err != nil {
		return nil, err
	}
	var out []netip.Prefix
	for _, a := range as {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok || ip.IsLinkLocalUnicast() {
			continue
		}
		ones, _ := a.Mask.Size()
		out = append(out, netip.PrefixFrom(ip.Unmap(), ones))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

func contains(ps []netip.Prefix, p netip.Prefix) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// toAddr is a netlink address for p; IPv6 ones skip duplicate address
// detection, which would hold them tentative for a second.
func toAddr(p netip.Prefix) *netlink.Addr {
	a := &netlink.Addr{IPNet: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}}
	if p.Addr().Is6() {
		a.Flags = unix.IFA_F_NODAD
	}
	return a
}

// open opens the namespace a NIC lives in, with the kernel's feature
// table for offloads.
func (p *Provider) open(ns string) (*nsConn, error) {
	caps, err := p.probe.get()
	if err != nil {
		return nil, err
	}
	c, err := openNS(ns)
	if err != nil {
		return nil, err
	}
	c.table = caps.table
	return c, nil
}

// foreignNS checks the NIC's namespaces (its host's and, for a veth, its
// peer's) against another copy of the lab owning them now: for op "read"
// and "delete" it returns host.ForeignNamespace's warning (the NIC is
// gone for this state; nothing is touched), for a change (op "") the
// error that names the owner and the fix; nil when both are this state's.
func foreignNS(n provider.Naming, a provider.Addr, s spec, op string) *hcl.Diagnostic {
	for _, ns := range []string{s.ns, s.peerNS} {
		if ns == "" {
			continue
		}
		if d := host.ForeignNamespace(n, a, ns, op); d != nil {
			return d
		}
	}
	return nil
}
