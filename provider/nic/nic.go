package nic

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strconv"
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

	// HostMarks, when set, is what the host provider knows of the marks
	// of the namespaces it made or read (host.Provider.Marks): a NIC's
	// namespace among them is not asked for its mark again.
	HostMarks *host.Checked

	probe prober
	far   nsPool // the namespaces of veths' far ends, shared by the calls in flight
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

// NeedsRoot is the fix for a kernel that refuses the probe for want of
// privilege (EPERM): what needs root and what does not. tsolab run and
// test say it too, before they plan, when the kernel engine would make
// namespaces on this machine.
const NeedsRoot = "plan and apply probe the kernel's offloads in a scratch network namespace, " +
	"and the kernel engine (tsolab run and test) makes namespaces: both need root " +
	"(CAP_SYS_ADMIN and CAP_NET_ADMIN), so run tsolab with sudo (sudo tsolab test LAB). " +
	"tsolab validate and tsolab test -engine sim need no root."

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
	if errors.Is(err, unix.EPERM) {
		d.fix(fmt.Sprintf("probe the kernel: %v", err), NeedsRoot)
		return provider.ValidateResponse{Diagnostics: d.diags}
	}
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
	x := newCall(p, s, req.Naming, req.Addr, d)
	defer x.done()
	feats, device := s.link.validate(x, caps)
	for _, w := range s.offloads {
		if feats == nil {
			break
		}
		if why := feats.fixedConflict(w); why != "" {
			d.fixAt("offload", fmt.Sprintf("offload %s: %s (%s)", w, why, device),
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
	// through the sockets the create opens there (createVeth).
	c, err := p.openWith(s.ns, true)
	if err != nil {
		d.errorf("create", err)
		return provider.CreateResponse{Diagnostics: d.diags}
	}
	x := newCall(p, s, req.Naming, req.Addr, d)
	x.c = c
	defer x.done()
	if diag := c.foreign(req.Naming, req.Addr, ""); diag != nil {
		return provider.CreateResponse{Diagnostics: hcl.Diagnostics{diag}}
	}
	template := req.Desired.Clone()
	link := s.link.create(ctx, x, template)
	if link == nil {
		return provider.CreateResponse{Diagnostics: d.diags}
	}
	// A link the call made is as the kernel reported it unless configure
	// changed its up state or MTU.
	if configure(x, link, nil, template) || !x.created {
		link = nil
	}
	return provider.CreateResponse{New: observe(x, link, template), Diagnostics: d.diags}
}

// configure brings the link up and makes its MTU, address, offloads and
// shaping what the spec declares, and what the link has beyond itself
// (a switch NIC's port) what its kind needs. prior holds the attributes
// as they were (nil on create), to remove an address that was replaced.
// Every failure becomes a diagnostic; configure carries on with the rest.
// It reports whether it asked the kernel to change link's up state or
// MTU (link as given is then out of date).
func configure(x *call, link netlink.Link, prior, out provider.Attrs) (changed bool) {
	c, s, d := x.c, x.s, x.d
	if link.Attrs().Flags&net.FlagUp == 0 {
		changed = true
		if err := c.nl.LinkSetUp(link); err != nil {
			d.errorf("set %s up", err, s.ifname)
		}
	}
	if s.mtu > 0 && link.Attrs().MTU != s.mtu {
		changed = true
		if err := c.nl.LinkSetMTU(link, s.mtu); err != nil {
			d.errorf("set mtu %d", err, s.mtu)
		}
	}
	s.link.configureFar(x)

	if old := prior[provider.AttrAddress]; old != "" && old != s.address.String() {
		if p, err := netip.ParsePrefix(old); err == nil {
			if err := c.nl.AddrDel(link, toAddr(p)); err != nil && !errors.Is(err, unix.EADDRNOTAVAIL) {
				d.errorf("remove address %s", err, old)
			}
		}
	}
	if s.address.IsValid() {
		var addrs []netip.Prefix // a link the call created has none yet
		var err error
		if !x.created {
			addrs, err = addressesOf(c, link, familyOf(s.address))
		}
		if err != nil {
			d.errorf("list addresses", err)
		} else if !contains(addrs, s.address) {
			err := c.addAddress(link.Attrs().Index, s.address)
			if err != nil && !errors.Is(err, unix.EEXIST) {
				d.errorf("set address %s", err, s.address)
			} else {
				x.addressAdded = true
				if s.link.adoptsDevice() {
					out[restoreAddress] = s.address.String()
				}
			}
		}
	}

	if len(s.offloads) > 0 {
		setOffloads(c, s, d)
	}

	if x.created && s.shape.none() {
		return changed // a new link has its device's default qdisc
	}
	if err := applyShaping(c, link, s.shape, s.queueManaged); err != nil {
		d.errorf("set shaping", err)
	}
	return changed
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
// for the NIC's interface (and what its kind has beyond it: a switch
// NIC's port); identity and restore.* keys are carried over. link is the
// one just read, or nil to read it (after a change). What the call made
// is what the kernel reported making and acknowledged setting since (the
// creation's echo, a new port's settings, a new link's address), not
// asked for again.
func observe(x *call, link netlink.Link, template provider.Attrs) provider.Attrs {
	c, s, d := x.c, x.s, x.d
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
	s.link.observeFar(x, out)
	if rec, ok := out[provider.AttrAddress]; ok {
		if x.created && x.addressAdded {
			// The link the call made had no address but the one the
			// kernel acknowledged adding.
			out[provider.AttrAddress] = s.address.String()
		} else {
			out[provider.AttrAddress] = readAddress(c, link, rec, s.link.adoptsDevice(), d)
		}
	}
	observeShaping(c, link, out, d)
	observeOffloads(c, s, template, out, d)
	return out
}

// observeShaping fills in the rate, queue and delay keys out has.
func observeShaping(c *nsConn, link netlink.Link, out provider.Attrs, d *diags) {
	_, hasRate := out[provider.AttrRate]
	_, hasQueue := out[provider.AttrQueue]
	_, hasDelay := out[provider.AttrDelay]
	if !hasRate && !hasQueue && !hasDelay {
		return
	}
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

// observeOffloads sets in out the offloads template declares, as the
// kernel holds them.
func observeOffloads(c *nsConn, s spec, template, out provider.Attrs, d *diags) {
	offs, _ := declaredOffloads(template)
	if len(offs) == 0 {
		return
	}
	feats, err := c.features(s.ifname)
	if err != nil {
		d.errorf("read back offloads", err)
		return
	}
	for _, w := range offs {
		on, _, _ := feats.State(w.o)
		out[provider.PrefixOffload+w.o.String()] = strconv.FormatBool(on)
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
	// does not open, on its own (readFar).
	c, err := p.open(s.ns)
	if errors.Is(err, errNoNamespace) {
		return provider.ReadResponse{Gone: true}
	}
	if err != nil {
		d.errorf("read", err)
		return provider.ReadResponse{Diagnostics: d.diags}
	}
	x := newCall(p, s, req.Naming, req.Addr, d)
	x.c = c
	x.snap = req.Snapshot
	defer x.done()
	w := c.foreign(req.Naming, req.Addr, "read")
	if w == nil {
		w = s.link.readFar(x)
	}
	if w != nil {
		return provider.ReadResponse{Gone: w.Severity != hcl.DiagError, Diagnostics: hcl.Diagnostics{w}}
	}
	link, err := c.linkByName(s.ifname)
	if err != nil {
		d.errorf("read %s", err, s.ifname)
		return provider.ReadResponse{Diagnostics: d.diags}
	}
	if link == nil {
		return provider.ReadResponse{Gone: true}
	}
	if !s.link.owns(x, link) {
		d.warnf("read %s", foreignLink(c.name, link), s.ifname)
		return provider.ReadResponse{Gone: true, Diagnostics: d.diags}
	}
	if s.link.farGone(x) {
		return provider.ReadResponse{Gone: true}
	}
	actual := observe(x, link, withKeys(req.Recorded, s.link.watched(req.Recorded)))
	return provider.ReadResponse{Actual: actual, Gone: actual == nil, Diagnostics: d.diags}
}

// withKeys returns a copy of a NIC's record with keys (those tsolab
// records since it watches up states: link.watched) added where an older
// tsolab did not record them, so that Read reports them and a lab
// applied before reads as it is, not as changes to make.
func withKeys(rec provider.Attrs, keys []string) provider.Attrs {
	out := rec.Clone()
	for _, key := range keys {
		if _, ok := out[key]; !ok {
			out[key] = ""
		}
	}
	return out
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
		d.updateFailed(err)
		return provider.UpdateResponse{Diagnostics: d.diags}
	}
	x := newCall(p, s, req.Naming, req.Addr, d)
	x.c = c
	defer x.done()
	link, err := c.linkByName(s.ifname)
	if err == nil && link == nil {
		d.fix(fmt.Sprintf("update: %s is gone from %s", s.ifname, nsName(c.name)), goneSincePlan)
		return provider.UpdateResponse{Diagnostics: d.diags}
	}
	if err == nil && !s.link.owns(x, link) {
		err = foreignLink(c.name, link)
	}
	if err != nil {
		d.errorf("update", err)
		return provider.UpdateResponse{Diagnostics: d.diags}
	}
	template := req.Desired.Clone()
	s.link.update(x, link, req.Prior, template)
	configure(x, link, req.Prior, template)
	return provider.UpdateResponse{New: observe(x, nil, template), Diagnostics: d.diags}
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
	if goesWithHost(req, s) {
		return provider.DeleteResponse{}
	}
	x := newCall(p, s, req.Naming, req.Addr, d)
	defer x.done()
	if w := x.foreignNS("delete"); w != nil {
		return provider.DeleteResponse{Diagnostics: hcl.Diagnostics{w}}
	}
	s.link.release(x, req.Recorded)
	return provider.DeleteResponse{Diagnostics: d.diags}
}

// goesWithHost reports whether the NIC's link goes with its host's
// namespace, which the same apply deletes right after this call
// (req.Going names the host): a link tsolab made in a namespace of the
// lab's. The kernel deletes such a veth when it frees the namespace,
// and its other end with it (a switch port, a pair's far end), without
// the wait for RCU each deletion costs here; the host's Delete checks
// the namespace's mark before it removes it, as this call would have.
// An adopted device is restored all the same.
func goesWithHost(req provider.DeleteRequest, s spec) bool {
	if s.link.adoptsDevice() || s.ns == "" || !req.Naming.OwnsNS(s.ns) {
		return false
	}
	host := provider.Addr{Kind: provider.KindHost, Name: req.Recorded[provider.AttrHost]}
	return slices.Contains(req.Going, host)
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

// readAddress is the address to report (pickAddress) of a NIC whose
// record holds recorded. The recorded address's family is listed first
// and, when the link has it, is all that is read: the kernel lists one
// family's addresses without the rtnl lock, all families' (an
// AF_UNSPEC dump) under it.
func readAddress(c *nsConn, link netlink.Link, recorded string, device bool, d *diags) string {
	if p, err := netip.ParsePrefix(recorded); err == nil {
		addrs, err := addressesOf(c, link, familyOf(p))
		if err == nil && contains(addrs, p) {
			return recorded
		}
	}
	addrs, err := addresses(c, link)
	if err != nil {
		d.errorf("read back addresses", err)
	}
	return pickAddress(addrs, recorded, device)
}

// familyOf is p's address family for AddrList.
func familyOf(p netip.Prefix) int {
	if p.Addr().Is4() {
		return netlink.FAMILY_V4
	}
	return netlink.FAMILY_V6
}

// addresses lists the link's addresses, link-local ones left out, sorted.
func addresses(c *nsConn, link netlink.Link) ([]netip.Prefix, error) {
	return addressesOf(c, link, netlink.FAMILY_ALL)
}

// addressesOf is addresses of one family (netlink.FAMILY_*).
func addressesOf(c *nsConn, link netlink.Link, family int) ([]netip.Prefix, error) {
	as, err := c.nl.AddrList(link, family)
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

// open opens the namespace a NIC lives in; the kernel's feature table
// for offloads is probed when they are first read or set.
func (p *Provider) open(ns string) (*nsConn, error) { return p.openWith(ns, false) }

// openWith is open, opening the socket for requests built by hand at
// once when raw (openNSWith).
func (p *Provider) openWith(ns string, raw bool) (*nsConn, error) {
	c, err := openNSWith(ns, raw)
	if err != nil {
		return nil, err
	}
	c.probe = &p.probe
	c.marks = p.HostMarks
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
