package nic

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/hashicorp/hcl/v2"
	"github.com/vishvananda/netlink"

	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
)

// Switch manages provider.KindSwitch resources: a namespace of the
// switch's own ("tsl.LAB.switch.SW") holding one bridge, up, carrying the
// lab's alias. NICs connected to the switch are ports of that bridge.
// It is safe for concurrent calls. Its only memory between calls is the
// namespaces whose marks Read found (host.Checked), for Delete.
type Switch struct {
	checked host.Checked
}

// NewSwitch returns the switch provider.
func NewSwitch() *Switch { return &Switch{} }

var _ provider.Interface = (*Switch)(nil)

// Validate checks the switch's namespace and bridge names.
func (s *Switch) Validate(ctx context.Context, req provider.ValidateRequest) provider.ValidateResponse {
	d := newDiags(req.Addr)
	d.rng = req.Range
	if ns := req.Desired[provider.AttrNetNS]; !req.Naming.OwnsNS(ns) {
		d.fix(fmt.Sprintf("namespace %q is not one of lab %s's", ns, req.Naming.LabID), "This is a bug in tsolab.")
	} else if fd := host.ForeignNamespace(req.Naming, req.Addr, ns, ""); fd != nil {
		if req.Range.Filename != "" {
			r := req.Range
			fd.Subject = &r
		}
		d.diags = append(d.diags, fd)
	}
	if err := checkIfName(req.Desired[provider.AttrBridge]); err != nil {
		d.fix("bridge: "+err.Error(), "This is a bug in tsolab.")
	}
	return provider.ValidateResponse{Diagnostics: d.diags}
}

// Create makes the namespace and the bridge, completing what an
// interrupted apply left.
func (s *Switch) Create(ctx context.Context, req provider.CreateRequest) provider.CreateResponse {
	d := newDiags(req.Addr)
	ns, brName := req.Desired[provider.AttrNetNS], req.Desired[provider.AttrBridge]
	created, diags := host.CreateNamespace(req.Naming, req.Addr, ns, noLinkLocalHere)
	if diags.HasErrors() {
		return provider.CreateResponse{Diagnostics: diags}
	}
	c, err := openNS(ns)
	if err != nil {
		d.errorf("open namespace", err)
		return provider.CreateResponse{Diagnostics: d.diags}
	}
	defer c.Close()
	if !created {
		if err := c.inside(noLinkLocalHere); err != nil {
			d.errorf("configure namespace %s", err, ns)
		}
	}
	alias := req.Naming.Alias(req.Addr)
	br, err := c.linkByName(brName)
	switch {
	case err != nil:
		d.errorf("find bridge %s", err, brName)
		return provider.CreateResponse{Diagnostics: d.diags}
	case br == nil:
		attrs := linkAttrs(brName)
		attrs.Flags = net.FlagUp
		br = &netlink.Bridge{LinkAttrs: attrs}
		if err := c.nl.LinkAdd(br); err != nil {
			d.errorf("create bridge %s", err, brName)
			return provider.CreateResponse{Diagnostics: d.diags}
		}
		// Read it back: what the kernel holds, not what was asked.
		if br, err = c.linkByName(brName); err != nil || br == nil {
			d.errorf("create bridge %s", fmt.Errorf("not found after creation (%v)", err), brName)
			return provider.CreateResponse{Diagnostics: d.diags}
		}
	case br.Attrs().Alias != "" && br.Attrs().Alias != alias:
		d.errorf("create bridge %s", fmt.Errorf("a link of that name exists in %s with alias %q, not tsolab's", ns, br.Attrs().Alias), brName)
		return provider.CreateResponse{Diagnostics: d.diags}
	}
	if err := ensureAliasUp(c, br, alias); err != nil {
		d.errorf("configure bridge %s", err, brName)
	}
	return provider.CreateResponse{New: s.observe(c, req.Naming, req.Addr, req.Desired), Diagnostics: d.diags}
}

// switchAddrGenMode is the sysctl a switch's namespace gets before any
// link is in it: the bridge and the ports come up without an IPv6
// link-local address (IN6_ADDR_GEN_MODE_NONE): a switch has no address
// of its own. Written once per switch, against once per port in the
// request that makes the port (the kernel gives a link its link-local
// address as it comes up, before the rest of a request: a port would
// need a request of its own for its mode before the one that brings it
// up). It is the only write of this sysctl: the kernel takes the rtnl
// lock for it with a trylock it retries at once, which spun 720 k
// write(2) restarts when every host of a 1000-host apply wrote it.
const switchAddrGenMode = "/proc/sys/net/ipv6/conf/default/addr_gen_mode"

// noLinkLocalHere sets switchAddrGenMode to none in the calling thread's
// namespace (a switch's); a kernel without IPv6 has nothing to set.
func noLinkLocalHere() error {
	err := os.WriteFile(switchAddrGenMode, []byte("1"), 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("set net.ipv6.conf.default.addr_gen_mode=1: %w", err)
	}
	return nil
}

// observe returns the switch's attributes as they are when the bridge is
// there and ours (with whether it is up, if want has the key); nil
// otherwise.
func (s *Switch) observe(c *nsConn, n provider.Naming, a provider.Addr, want provider.Attrs) provider.Attrs {
	br, err := c.linkByName(want[provider.AttrBridge])
	if err != nil || br == nil || br.Attrs().Alias != n.Alias(a) {
		return nil
	}
	out := provider.Attrs{provider.AttrNetNS: want[provider.AttrNetNS], provider.AttrBridge: want[provider.AttrBridge]}
	if _, ok := want[provider.AttrUp]; ok {
		out[provider.AttrUp] = strconv.FormatBool(br.Attrs().Flags&net.FlagUp != 0)
	}
	return out
}

// Read reports the switch Gone when its namespace or bridge no longer
// exists, or the bridge is not ours (a Create then completes it); a
// bridge set down by hand is drift of "up".
func (s *Switch) Read(ctx context.Context, req provider.ReadRequest) provider.ReadResponse {
	d := newDiags(req.Addr)
	ns := req.Recorded[provider.AttrNetNS]
	if r := s.checked.ReadNamespace(req.Naming, req.Addr, ns); r != nil {
		return *r
	}
	c, err := openNS(ns)
	if errors.Is(err, errNoNamespace) {
		return provider.ReadResponse{Gone: true}
	}
	if err != nil {
		d.errorf("read", err)
		return provider.ReadResponse{Diagnostics: d.diags}
	}
	defer c.Close()
	// A record made before tsolab watched the bridge's up state has no
	// "up": report it all the same.
	want := req.Recorded.Clone()
	want[provider.AttrUp] = ""
	actual := s.observe(c, req.Naming, req.Addr, want)
	return provider.ReadResponse{Actual: actual, Gone: actual == nil, Diagnostics: d.diags}
}

// Update brings the bridge up (every other switch attribute forces a
// replacement).
func (s *Switch) Update(ctx context.Context, req provider.UpdateRequest) provider.UpdateResponse {
	d := newDiags(req.Addr)
	ns, brName := req.Desired[provider.AttrNetNS], req.Desired[provider.AttrBridge]
	if fd := host.ForeignNamespace(req.Naming, req.Addr, ns, ""); fd != nil {
		return provider.UpdateResponse{Diagnostics: hcl.Diagnostics{fd}}
	}
	c, err := openNS(ns)
	if err != nil {
		d.updateFailed(err)
		return provider.UpdateResponse{Diagnostics: d.diags}
	}
	defer c.Close()
	alias := req.Naming.Alias(req.Addr)
	br, err := c.linkByName(brName)
	if err == nil && br == nil {
		d.fix(fmt.Sprintf("update: the switch's bridge %s is gone from %s", brName, ns), goneSincePlan)
		return provider.UpdateResponse{Diagnostics: d.diags}
	}
	if err == nil && br.Attrs().Alias != alias {
		err = fmt.Errorf("the switch's bridge %s is gone from %s", brName, ns)
	}
	if err == nil && req.Desired[provider.AttrUp] == "true" {
		err = ensureAliasUp(c, br, alias)
	}
	if err != nil {
		d.errorf("update", err)
		return provider.UpdateResponse{Diagnostics: d.diags}
	}
	return provider.UpdateResponse{New: s.observe(c, req.Naming, req.Addr, req.Desired), Diagnostics: d.diags}
}

// Delete removes the switch's namespace (and with it the bridge and its
// ports), only if the namespace carries the lab's prefix.
func (s *Switch) Delete(ctx context.Context, req provider.DeleteRequest) provider.DeleteResponse {
	d := newDiags(req.Addr)
	ns := req.Recorded[provider.AttrNetNS]
	if !req.Naming.OwnsNS(ns) {
		d.fix(fmt.Sprintf("refusing to delete namespace %q", ns),
			fmt.Sprintf("It does not carry lab %s's prefix %s, so tsolab did not create it.", req.Naming.LabID, provider.NamespacePrefix+req.Naming.LabID+"."))
		return provider.DeleteResponse{Diagnostics: d.diags}
	}
	w, release := s.checked.Foreign(req.Naming, req.Addr, ns)
	defer release()
	if w != nil {
		return provider.DeleteResponse{Diagnostics: hcl.Diagnostics{w}}
	}
	if err := netnsfs.Remove(ns); err != nil {
		d.errorf("delete", err)
	}
	return provider.DeleteResponse{Diagnostics: d.diags}
}

// ensureAliasUp gives a link the alias and brings it up, skipping what is
// already so.
func ensureAliasUp(c *nsConn, l netlink.Link, alias string) error {
	if l.Attrs().Alias != alias {
		if err := c.nl.LinkSetAlias(l, alias); err != nil {
			return fmt.Errorf("set alias: %w", err)
		}
	}
	if l.Attrs().Flags&net.FlagUp == 0 {
		if err := c.nl.LinkSetUp(l); err != nil {
			return fmt.Errorf("set up: %w", err)
		}
		l.Attrs().Flags |= net.FlagUp
	}
	return nil
}

// checkIfName checks an interface name the kernel will take.
func checkIfName(name string) error {
	switch {
	case name == "":
		return errors.New("empty interface name")
	case len(name) > 15:
		return fmt.Errorf("interface name %q is longer than 15 bytes", name)
	}
	for _, r := range name {
		if r == '/' || r == ':' || r <= ' ' || r > '~' {
			return fmt.Errorf("interface name %q has a character the kernel refuses (%q)", name, r)
		}
	}
	return nil
}
