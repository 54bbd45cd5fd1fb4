package nic_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/safchain/ethtool"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
	"github.com/tsolab/tsolab/provider/nic"
)

// linkIn returns the link called name in namespace ns (nil if none).
func linkIn(t *testing.T, ns, name string) netlink.Link {
	t.Helper()
	h, err := netnsfs.Netlink(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	l, err := h.LinkByName(name)
	var nf netlink.LinkNotFoundError
	if errors.As(err, &nf) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func summaries(diags hcl.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		out = append(out, d.Summary)
	}
	return out
}

func TestSwitchedNICsReachEachOther(t *testing.T) {
	f := newFixture(t)
	nsA, nsB, nsC := f.addHost("a"), f.addHost("b"), f.addHost("c")
	swNS := f.addSwitch("sw")
	want := map[string]provider.Attrs{
		"a0": f.switchNIC("a0", "a", "sw", provider.Attrs{
			"address": "10.77.0.1/24", "mtu": "9000",
			"offload.tso": "true", "offload.gso": "true", "offload.gro": "true", "offload.sg": "true", "offload.tx_csum": "true",
		}),
		"b0": f.switchNIC("b0", "b", "sw", provider.Attrs{"address": "10.77.0.2/24", "mtu": "9000"}),
		"c0": f.switchNIC("c0", "c", "sw", provider.Attrs{"address": "10.77.0.3/24"}),
	}
	for _, name := range []string{"a0", "b0", "c0"} {
		got := f.mustNIC(name, want[name])
		if diff := cmp.Diff(want[name], got); diff != "" {
			t.Errorf("nic.%s New (-want +got):\n%s", name, diff)
		}
		r := f.read(name, got)
		if r.Gone || r.Diagnostics.HasErrors() {
			t.Fatalf("Read nic.%s: gone=%v %v", name, r.Gone, r.Diagnostics)
		}
		if diff := cmp.Diff(got, r.Actual); diff != "" {
			t.Errorf("Read nic.%s right after Create (-recorded +actual):\n%s", name, diff)
		}
	}

	br := linkIn(t, swNS, provider.BridgeName)
	if br == nil {
		t.Fatal("no bridge in the switch namespace")
	}
	for name, ns := range map[string]string{"a0": nsA, "b0": nsB, "c0": nsC} {
		alias := f.n.Alias(provider.Addr{Kind: provider.KindNIC, Name: name})
		end := linkIn(t, ns, name)
		port := linkIn(t, swNS, provider.PortName(name))
		if end == nil || port == nil {
			t.Fatalf("nic.%s: end %v, port %v: want both", name, end, port)
		}
		for _, l := range []netlink.Link{end, port} {
			a := l.Attrs()
			if a.Alias != alias {
				t.Errorf("%s alias = %q, want %q", a.Name, a.Alias, alias)
			}
			if a.Flags&unix.IFF_UP == 0 {
				t.Errorf("%s is down, want up", a.Name)
			}
		}
		if port.Attrs().MasterIndex != br.Attrs().Index {
			t.Errorf("port %s master = %d, want the bridge %d", port.Attrs().Name, port.Attrs().MasterIndex, br.Attrs().Index)
		}
		if wantMTU := want[name]["mtu"]; wantMTU != "" {
			for _, l := range []netlink.Link{end, port} {
				if got := l.Attrs().MTU; strconv.Itoa(got) != wantMTU {
					t.Errorf("%s mtu = %d, want %s on both ends", l.Attrs().Name, got, wantMTU)
				}
			}
		}
	}

	reach(t, nsA, nsB, "10.77.0.2")
	reach(t, nsB, nsC, "10.77.0.3")
	reach(t, nsC, nsA, "10.77.0.1")
}

func TestBackToBackPair(t *testing.T) {
	f := newFixture(t)
	nsX, nsY := f.addHost("x"), f.addHost("y")
	x0 := provider.Attrs{
		"host": "x", "netns": nsX, "ifname": "x0", "link": "peer:y0",
		"peer_netns": nsY, "peer_ifname": "y0",
		"address": "10.78.0.1/30", "mtu": "9000", "offload.tso": "true",
	}
	y0 := provider.Attrs{
		"host": "y", "netns": nsY, "ifname": "y0", "link": "peer-of:x0",
		"address": "10.78.0.2/30", "mtu": "9000", "offload.gro": "true",
	}
	if diff := cmp.Diff(x0, f.mustNIC("x0", x0)); diff != "" {
		t.Errorf("nic.x0 New (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(y0, f.mustNIC("y0", y0)); diff != "" {
		t.Errorf("nic.y0 New (-want +got):\n%s", diff)
	}
	far := linkIn(t, nsY, "y0")
	if got, want := far.Attrs().Alias, f.n.Alias(provider.Addr{Kind: provider.KindNIC, Name: "y0"}); got != want {
		t.Errorf("far end alias = %q, want %q", got, want)
	}
	reach(t, nsX, nsY, "10.78.0.2")
	reach(t, nsY, nsX, "10.78.0.1")
}

// TestPairFarEndWithoutMTU: the far NIC of a pair that declares no MTU
// gets the kernel's default, as the model gives it, not the owner's
// (netlink copies the owner's MTU to a new veth's peer unless told).
func TestPairFarEndWithoutMTU(t *testing.T) {
	f := newFixture(t)
	nsX, nsY := f.addHost("x"), f.addHost("y")
	f.mustNIC("x0", provider.Attrs{
		"host": "x", "netns": nsX, "ifname": "x0", "link": "peer:y0",
		"peer_netns": nsY, "peer_ifname": "y0", "address": "10.78.0.1/30", "mtu": "9000",
	})
	f.mustNIC("y0", provider.Attrs{"host": "y", "netns": nsY, "ifname": "y0", "link": "peer-of:x0", "address": "10.78.0.2/30"})
	if got := linkIn(t, nsX, "x0").Attrs().MTU; got != 9000 {
		t.Errorf("x0 mtu = %d, want its declared 9000", got)
	}
	if got := linkIn(t, nsY, "y0").Attrs().MTU; got != 1500 {
		t.Errorf("y0 (no mtu declared) mtu = %d, want the veth default 1500, not x0's", got)
	}
}

// TestOffloads walks one veth through offload changes and checks what the
// kernel really holds after each, and the diagnostic when it refuses.
func TestOffloads(t *testing.T) {
	f := newFixture(t)
	f.addHost("a")
	f.addSwitch("sw")
	base := f.switchNIC("a0", "a", "sw", nil)
	rec := f.mustNIC("a0", base)
	steps := []struct {
		name     string
		offloads provider.Attrs
		want     provider.Attrs // offload.* in New
		diags    []string
	}{
		{"tso off", provider.Attrs{"offload.tso": "false"}, provider.Attrs{"offload.tso": "false"}, nil},
		{"all on", provider.Attrs{"offload.tso": "true", "offload.gso": "true", "offload.sg": "true", "offload.tx_csum": "true", "offload.gro": "true"},
			provider.Attrs{"offload.tso": "true", "offload.gso": "true", "offload.sg": "true", "offload.tx_csum": "true", "offload.gro": "true"}, nil},
		{"tso without sg", provider.Attrs{"offload.tso": "true", "offload.sg": "false"},
			provider.Attrs{"offload.tso": "false", "offload.sg": "false"},
			[]string{"nic.a0: set offload tso=on: the kernel kept it off (requires scatter-gather)"}},
		{"tso without csum", provider.Attrs{"offload.tso": "true", "offload.sg": "true", "offload.tx_csum": "false"},
			provider.Attrs{"offload.tso": "false", "offload.sg": "true", "offload.tx_csum": "false"},
			[]string{"nic.a0: set offload tso=on: the kernel kept it off (requires a tx checksum offload)"}},
		{"gso without sg", provider.Attrs{"offload.gso": "true", "offload.sg": "false"},
			provider.Attrs{"offload.gso": "false", "offload.sg": "false"},
			[]string{"nic.a0: set offload gso=on: the kernel kept it off (requires scatter-gather)"}},
		{"lro is fixed", provider.Attrs{"offload.lro": "true"}, provider.Attrs{"offload.lro": "false"},
			[]string{"nic.a0: set offload lro=on: the device has it [fixed] off"}},
		{"back on", provider.Attrs{"offload.tso": "true", "offload.gso": "true", "offload.sg": "true", "offload.tx_csum": "true"},
			provider.Attrs{"offload.tso": "true", "offload.gso": "true", "offload.sg": "true", "offload.tx_csum": "true"}, nil},
	}
	for _, st := range steps {
		desired := base.Clone()
		for k, v := range st.offloads {
			desired[k] = v
		}
		r := f.nic.Update(context.Background(), provider.UpdateRequest{Naming: f.n, Addr: provider.Addr{Kind: provider.KindNIC, Name: "a0"}, Prior: rec, Desired: desired})
		if diff := cmp.Diff(st.diags, summaries(r.Diagnostics)); diff != "" {
			t.Errorf("%s: diagnostics (-want +got):\n%s", st.name, diff)
		}
		wantNew := base.Clone()
		for k, v := range st.want {
			wantNew[k] = v
		}
		if diff := cmp.Diff(wantNew, r.New); diff != "" {
			t.Errorf("%s: New (-want +got):\n%s", st.name, diff)
		}
		if r.New != nil {
			rec = r.New
		}
	}
}

// TestReadSeesDriftAndGone changes a NIC behind tsolab's back (ip and tc
// when installed, else netlink; ethtool features through the ioctl), then
// deletes it.
func TestReadSeesDriftAndGone(t *testing.T) {
	f := newFixture(t)
	ns := f.addHost("a")
	f.addSwitch("sw")
	desired := f.switchNIC("a0", "a", "sw", provider.Attrs{
		"address": "10.79.0.1/24", "mtu": "1500", "rate": "100000000", "offload.tso": "true",
	})
	rec := f.mustNIC("a0", desired)

	runOr := func(args []string, fallback func() error) {
		t.Helper()
		if path, err := exec.LookPath(args[0]); err == nil {
			if out, err := exec.Command(path, args[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, out)
			}
			return
		}
		if err := netnsfs.Do(ns, fallback); err != nil {
			t.Fatal(err)
		}
	}
	runOr([]string{"ip", "-n", ns, "link", "set", "dev", "a0", "mtu", "1400"}, func() error {
		l, err := netlink.LinkByName("a0")
		if err != nil {
			return err
		}
		return netlink.LinkSetMTU(l, 1400)
	})
	runOr([]string{"tc", "-n", ns, "qdisc", "del", "dev", "a0", "root"}, func() error {
		l, err := netlink.LinkByName("a0")
		if err != nil {
			return err
		}
		qs, err := netlink.QdiscList(l)
		if err != nil {
			return err
		}
		for _, q := range qs {
			if q.Attrs().Parent == netlink.HANDLE_ROOT {
				return netlink.QdiscDel(q)
			}
		}
		return errors.New("no root qdisc")
	})
	// `ethtool -K a0 tso off`, by the ioctl (the binary is not always there).
	err := netnsfs.Do(ns, func() error {
		et, err := ethtool.NewEthtool()
		if err != nil {
			return err
		}
		defer et.Close()
		return et.Change("a0", map[string]bool{"tx-tcp-segmentation": false, "tx-tcp6-segmentation": false})
	})
	if err != nil {
		t.Fatal(err)
	}

	r := f.read("a0", rec)
	if r.Gone || r.Diagnostics.HasErrors() {
		t.Fatalf("Read: gone=%v %v", r.Gone, r.Diagnostics)
	}
	drifted := rec.Clone()
	drifted["mtu"] = "1400"
	drifted["rate"] = ""
	drifted["offload.tso"] = "false"
	if diff := cmp.Diff(drifted, r.Actual); diff != "" {
		t.Errorf("Read after drift (-want +got):\n%s", diff)
	}

	u := f.nic.Update(context.Background(), provider.UpdateRequest{Naming: f.n, Addr: provider.Addr{Kind: provider.KindNIC, Name: "a0"}, Prior: r.Actual, Desired: desired})
	if u.Diagnostics.HasErrors() {
		t.Fatalf("Update: %v", u.Diagnostics)
	}
	if diff := cmp.Diff(desired, u.New); diff != "" {
		t.Errorf("Update New (-want +got):\n%s", diff)
	}
	if r := f.read("a0", u.New); !r.Actual.Equal(desired) {
		t.Errorf("Read after Update = %v, want %v", r.Actual, desired)
	}

	runOr([]string{"ip", "-n", ns, "link", "del", "a0"}, func() error {
		l, err := netlink.LinkByName("a0")
		if err != nil {
			return err
		}
		return netlink.LinkDel(l)
	})
	if r := f.read("a0", u.New); !r.Gone {
		t.Errorf("Read after the link was deleted: Gone = false (actual %v), want true", r.Actual)
	}
}

// TestUpdateOfDeletedNIC: a plan read a NIC and its switch, then they (or
// the namespaces they live in) were deleted by hand before its apply (a
// saved plan applied later): the update fails naming what is gone, and
// says to run tsolab apply again, which plans against what is there.
func TestUpdateOfDeletedNIC(t *testing.T) {
	f := newFixture(t)
	ns := f.addHost("a")
	swNS := f.addSwitch("sw")
	desired := f.switchNIC("a0", "a", "sw", provider.Attrs{"mtu": "1500"})
	rec := f.mustNIC("a0", desired)
	desired["mtu"], desired["port.mtu"] = "1400", "1400"
	ctx := context.Background()
	nicAddr := provider.Addr{Kind: provider.KindNIC, Name: "a0"}
	swAddr := provider.Addr{Kind: provider.KindSwitch, Name: "sw"}
	swAttrs := provider.Attrs{provider.AttrNetNS: swNS, provider.AttrBridge: provider.BridgeName, provider.AttrUp: "true"}
	check := func(what string, diags hcl.Diagnostics, summary string) {
		t.Helper()
		errs := errorsOnly(diags)
		if len(errs) != 1 || errs[0].Summary != summary || errs[0].Detail != "It was deleted outside tsolab after the plan was made. Run tsolab apply again: it plans against what is there now and creates what is missing." {
			t.Errorf("%s: diagnostics %v, want one error %q whose detail says to apply again", what, diags, summary)
		}
	}
	updateNIC := func() hcl.Diagnostics {
		return f.nic.Update(ctx, provider.UpdateRequest{Naming: f.n, Addr: nicAddr, Prior: rec, Desired: desired}).Diagnostics
	}
	updateSwitch := func() hcl.Diagnostics {
		return f.sw.Update(ctx, provider.UpdateRequest{Naming: f.n, Addr: swAddr, Prior: swAttrs, Desired: swAttrs}).Diagnostics
	}

	byHand(t, ns, "a0", func(h *netlink.Handle, l netlink.Link) error { return h.LinkDel(l) })
	check("the link deleted", updateNIC(), "nic.a0: update: a0 is gone from namespace "+ns)
	byHand(t, swNS, provider.BridgeName, func(h *netlink.Handle, l netlink.Link) error { return h.LinkDel(l) })
	check("the bridge deleted", updateSwitch(), "switch.sw: update: the switch's bridge "+provider.BridgeName+" is gone from "+swNS)
	for _, n := range []string{ns, swNS} {
		if err := netnsfs.Remove(n); err != nil {
			t.Fatal(err)
		}
	}
	check("the host's namespace deleted", updateNIC(), "nic.a0: update: "+ns+": namespace does not exist")
	check("the switch's namespace deleted", updateSwitch(), "switch.sw: update: "+swNS+": namespace does not exist")
}

func TestRateUpdates(t *testing.T) {
	f := newFixture(t)
	ns := f.addHost("a")
	f.addSwitch("sw")
	base := f.switchNIC("a0", "a", "sw", nil)
	tbf := func() *netlink.Tbf {
		t.Helper()
		var found *netlink.Tbf
		err := netnsfs.Do(ns, func() error {
			l, err := netlink.LinkByName("a0")
			if err != nil {
				return err
			}
			qs, err := netlink.QdiscList(l)
			for _, q := range qs {
				if q, ok := q.(*netlink.Tbf); ok && q.Parent == netlink.HANDLE_ROOT {
					found = q
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return found
	}
	with := func(extra provider.Attrs) provider.Attrs {
		a := base.Clone()
		for k, v := range extra {
			a[k] = v
		}
		return a
	}
	rec := f.mustNIC("a0", with(provider.Attrs{"rate": "2000000000"}))
	steps := []struct {
		name              string
		desired           provider.Attrs
		wantRate, wantLim uint64 // bytes/s and bytes in the tbf; 0 = no tbf
		wantQueueReadBack string
	}{
		{"created at 2gbit", with(provider.Attrs{"rate": "2000000000"}), 250000000, 0, ""},
		{"slower with a queue", with(provider.Attrs{"rate": "100000000", "queue": "300000"}), 12500000, 300000, "300000"},
		{"rate removed", base, 0, 0, ""},
		{"rate again", with(provider.Attrs{"rate": "1000000000"}), 125000000, 0, ""},
	}
	for i, st := range steps {
		if i > 0 {
			r := f.nic.Update(context.Background(), provider.UpdateRequest{Naming: f.n, Addr: provider.Addr{Kind: provider.KindNIC, Name: "a0"}, Prior: rec, Desired: st.desired})
			if r.Diagnostics.HasErrors() {
				t.Fatalf("%s: Update: %v", st.name, r.Diagnostics)
			}
			rec = r.New
		}
		if diff := cmp.Diff(st.desired, rec); diff != "" {
			t.Errorf("%s: New (-want +got):\n%s", st.name, diff)
		}
		q := tbf()
		switch {
		case st.wantRate == 0 && q != nil:
			t.Errorf("%s: tbf %+v still there, want none", st.name, q)
		case st.wantRate != 0 && q == nil:
			t.Errorf("%s: no tbf, want rate %d B/s", st.name, st.wantRate)
		case q != nil:
			if q.Rate != st.wantRate {
				t.Errorf("%s: tbf rate = %d B/s, want %d", st.name, q.Rate, st.wantRate)
			}
			if st.wantLim != 0 && uint64(q.Limit) != st.wantLim {
				t.Errorf("%s: tbf limit = %d, want %d", st.name, q.Limit, st.wantLim)
			}
		}
	}
}

func TestOwnership(t *testing.T) {
	f := newFixture(t)
	ns := f.addHost("a")
	f.addSwitch("sw")
	// A link called a0 that tsolab did not make (no alias).
	err := netnsfs.Do(ns, func() error {
		a := netlink.NewLinkAttrs()
		a.Name = "a0"
		return netlink.LinkAdd(&netlink.Veth{LinkAttrs: a, PeerName: "other", PeerTxQLen: -1})
	})
	if err != nil {
		t.Fatal(err)
	}
	attrs := f.switchNIC("a0", "a", "sw", nil)
	addr := provider.Addr{Kind: provider.KindNIC, Name: "a0"}
	ctx := context.Background()

	cr := f.nic.Create(ctx, provider.CreateRequest{Naming: f.n, Addr: addr, Desired: attrs})
	wantCreate := []string{"nic.a0: create veth a0: a0 in namespace " + ns + " exists without a tsolab alias: it is not this lab's"}
	if diff := cmp.Diff(wantCreate, summaries(cr.Diagnostics)); diff != "" {
		t.Errorf("Create over a foreign link (-want +got):\n%s", diff)
	}
	if r := f.read("a0", attrs); !r.Gone {
		t.Errorf("Read of a foreign link: Gone = false, want true (a link without our alias is not ours)")
	}
	dr := f.nic.Delete(ctx, provider.DeleteRequest{Naming: f.n, Addr: addr, Recorded: attrs})
	wantDelete := []string{"nic.a0: refusing to delete a0 in namespace " + ns + ": a0 in namespace " + ns + " exists without a tsolab alias: it is not this lab's"}
	if diff := cmp.Diff(wantDelete, summaries(dr.Diagnostics)); diff != "" {
		t.Errorf("Delete of a foreign link (-want +got):\n%s", diff)
	}
	if linkIn(t, ns, "a0") == nil {
		t.Errorf("the foreign link a0 was deleted")
	}
	// Another lab's switch namespace is refused too.
	other := provider.Naming{LabID: f.n.LabID + "-other"}
	sr := f.sw.Delete(ctx, provider.DeleteRequest{Naming: other, Addr: provider.Addr{Kind: provider.KindSwitch, Name: "sw"},
		Recorded: provider.Attrs{"netns": f.n.SwitchNS("sw"), "bridge": provider.BridgeName}})
	if !sr.Diagnostics.HasErrors() {
		t.Errorf("deleting lab %s's switch namespace as lab %s: no error", f.n.LabID, other.LabID)
	}
	if ok, _ := netnsfs.Exists(f.n.SwitchNS("sw")); !ok {
		t.Errorf("switch namespace deleted by another lab")
	}
}

// TestInterruptedCreate leaves a veth as an apply killed right after
// creating it would (the alias asked for on creation, which the kernel
// ignores; nothing else), and checks Create completes it.
func TestInterruptedCreate(t *testing.T) {
	f := newFixture(t)
	ns := f.addHost("a")
	swNS := f.addSwitch("sw")
	alias := f.n.Alias(provider.Addr{Kind: provider.KindNIC, Name: "a0"})
	peer, err := netnsfs.Open(swNS)
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	err = netnsfs.Do(ns, func() error {
		a := netlink.NewLinkAttrs()
		a.Name, a.Alias = "a0", alias
		return netlink.LinkAdd(&netlink.Veth{LinkAttrs: a, PeerName: provider.PortName("a0"), PeerTxQLen: -1, PeerNamespace: netlink.NsFd(peer)})
	})
	if err != nil {
		t.Fatal(err)
	}
	desired := f.switchNIC("a0", "a", "sw", provider.Attrs{"address": "10.80.0.1/24"})
	if diff := cmp.Diff(desired, f.mustNIC("a0", desired)); diff != "" {
		t.Errorf("New (-want +got):\n%s", diff)
	}
	port := linkIn(t, swNS, provider.PortName("a0"))
	if port.Attrs().MasterIndex == 0 || port.Attrs().Flags&unix.IFF_UP == 0 || port.Attrs().Alias != alias {
		t.Errorf("port after completion: master %d, flags %v, alias %q; want on the bridge, up, %q",
			port.Attrs().MasterIndex, port.Attrs().Flags, port.Attrs().Alias, alias)
	}
}

func TestNoLinkNIC(t *testing.T) {
	f := newFixture(t)
	ns := f.addHost("a")
	desired := provider.Attrs{"host": "a", "netns": ns, "ifname": "lone0", "link": "none", "address": "10.81.0.1/24", "mtu": "9000"}
	if diff := cmp.Diff(desired, f.mustNIC("lone0", desired)); diff != "" {
		t.Errorf("New (-want +got):\n%s", diff)
	}
	if l := linkIn(t, ns, "lone0"); l == nil || l.Attrs().Alias != f.n.Alias(provider.Addr{Kind: provider.KindNIC, Name: "lone0"}) {
		t.Errorf("lone0 = %v, want a link with the lab's alias", l)
	}
}

func TestValidate(t *testing.T) {
	netnstest.Require(t)
	n := provider.Naming{LabID: "val"}
	// Whether this kernel has netem, found independently of the provider.
	netemErr := netnsfs.Scratch(func() error {
		return netlink.QdiscAdd(netlink.NewNetem(netlink.QdiscAttrs{LinkIndex: 1, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}, netlink.NetemQdiscAttrs{Latency: 1000}))
	})
	var delayDiag []string
	if netemErr != nil {
		delayDiag = []string{"nic.a0: delay = 10ms needs the netem qdisc: the kernel has no netem qdisc (sch_netem, CONFIG_NET_SCH_NETEM)"}
	}
	sw := provider.Attrs{"host": "a", "netns": "tsl.val.a", "ifname": "a0", "address": "", "link": "switch:sw", "peer_netns": "tsl.val.switch.sw", "peer_ifname": "p-a0"}
	with := func(base provider.Attrs, extra provider.Attrs) provider.Attrs {
		a := base.Clone()
		for k, v := range extra {
			a[k] = v
		}
		return a
	}
	tests := []struct {
		name  string
		attrs provider.Attrs
		want  []string
	}{
		{"plain", sw, nil},
		{"delay", with(sw, provider.Attrs{"delay": "10ms"}), delayDiag},
		{"fixed lro", with(sw, provider.Attrs{"offload.lro": "true"}), []string{"nic.a0: offload lro=on: the device has it [fixed] off (veth)"}},
		{"lro off is fine", with(sw, provider.Attrs{"offload.lro": "false"}), nil},
		{"unknown offload", with(sw, provider.Attrs{"offload.tsx": "true"}),
			[]string{`nic.a0: unknown offload "tsx" (known: tso, gso, gro, lro, sg, tx_csum, rx_csum)`}},
		{"no such device", provider.Attrs{"host": "me", "netns": "", "ifname": "nosuch0", "address": "", "link": "device:nosuch0"},
			[]string{`nic.a0: device "nosuch0": no such device`}},
		{"no such device to move", provider.Attrs{"host": "a", "netns": "tsl.val.a", "ifname": "nosuch9", "address": "", "link": "device:nosuch9"},
			[]string{`nic.a0: device "nosuch9": no such device in the machine's namespace`}},
		{"long name", with(sw, provider.Attrs{"ifname": "a-very-long-name0"}),
			[]string{`nic.a0: interface name "a-very-long-name0" is longer than 15 bytes`}},
	}
	p := nic.New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := p.Validate(context.Background(), provider.ValidateRequest{Naming: n, Addr: provider.Addr{Kind: provider.KindNIC, Name: "a0"}, Desired: tt.attrs})
			if diff := cmp.Diff(tt.want, summaries(got.Diagnostics)); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSwitchOwnership: a switch's namespace carries the state that made
// it; another copy of the lab (another state) is refused at plan and
// apply, sees it as gone and never deletes it.
func TestSwitchOwnership(t *testing.T) {
	f := newFixture(t)
	f.n.Owner = "state-a"
	ns := f.addSwitch("sw")
	other := f.n
	other.Owner = "state-b"
	a := provider.Addr{Kind: provider.KindSwitch, Name: "sw"}
	attrs := provider.Attrs{provider.AttrNetNS: ns, provider.AttrBridge: provider.BridgeName}
	ctx := context.Background()
	foreign := []string{"switch.sw: namespace " + ns + " belongs to another copy of lab " + f.n.LabID}
	if mark, ok, err := netnsfs.Mark(ns); err != nil || !ok || mark != f.n.OwnerMark() {
		t.Fatalf("mark of %s = %q, %v, %v: want %q", ns, mark, ok, err, f.n.OwnerMark())
	}
	v := f.sw.Validate(ctx, provider.ValidateRequest{Naming: other, Addr: a, Desired: attrs})
	if diff := cmp.Diff(foreign, summaries(v.Diagnostics)); diff != "" {
		t.Errorf("Validate by another state (-want +got):\n%s", diff)
	}
	cr := f.sw.Create(ctx, provider.CreateRequest{Naming: other, Addr: a, Desired: attrs})
	if diff := cmp.Diff(foreign, summaries(cr.Diagnostics)); diff != "" {
		t.Errorf("Create by another state (-want +got):\n%s", diff)
	}
	if r := f.sw.Read(ctx, provider.ReadRequest{Naming: other, Addr: a, Recorded: attrs}); !r.Gone || r.Diagnostics.HasErrors() {
		t.Errorf("Read by another state: Gone %v, %v; want gone with a warning", r.Gone, r.Diagnostics)
	}
	if d := f.sw.Delete(ctx, provider.DeleteRequest{Naming: other, Addr: a, Recorded: attrs}); d.Diagnostics.HasErrors() || len(d.Diagnostics) != 1 {
		t.Errorf("Delete by another state: %v, want one warning", d.Diagnostics)
	}
	if r := f.sw.Read(ctx, provider.ReadRequest{Naming: f.n, Addr: a, Recorded: attrs}); r.Gone {
		t.Error("the switch is gone for its own state after another state's Delete")
	}
}

// byHand changes link name in namespace ns the way `ip link set` would,
// behind tsolab's back.
func byHand(t *testing.T, ns, name string, change func(h *netlink.Handle, l netlink.Link) error) {
	t.Helper()
	h, err := netnsfs.Netlink(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	l, err := h.LinkByName(name)
	if err == nil {
		err = change(h, l)
	}
	if err != nil {
		t.Fatalf("%s in %s by hand: %v", name, ns, err)
	}
}

func isUp(l netlink.Link) bool { return l != nil && l.Attrs().Flags&unix.IFF_UP != 0 }

// TestDownIsDrift sets a NIC, its switch port and the bridge down by
// hand, takes the port off the bridge and gives it another MTU: Read
// shows each (none of it is the resource being gone), and Update puts
// every one back.
func TestDownIsDrift(t *testing.T) {
	f := newFixture(t)
	ns := f.addHost("a")
	swNS := f.addSwitch("sw")
	desired := f.switchNIC("a0", "a", "sw", provider.Attrs{"address": "10.79.1.1/24", "mtu": "1400"})
	rec := f.mustNIC("a0", desired)
	if diff := cmp.Diff(desired, rec); diff != "" {
		t.Errorf("Create New (-want +got):\n%s", diff)
	}
	nsB := f.addHost("b")
	f.mustNIC("b0", f.switchNIC("b0", "b", "sw", provider.Attrs{"address": "10.79.1.2/24"}))
	port := provider.PortName("a0")

	// A record made before tsolab watched up states reads with them, so a
	// lab applied then is not a plan full of changes.
	old := rec.Clone()
	for _, k := range []string{"up", "port.up", "port.master", "port.mtu"} {
		delete(old, k)
	}
	if r := f.read("a0", old); r.Gone || r.Diagnostics.HasErrors() || !r.Actual.Equal(rec) {
		t.Errorf("Read of a record without the up keys: gone=%v %v actual %v, want %v", r.Gone, r.Diagnostics, r.Actual, rec)
	}

	byHand(t, ns, "a0", func(h *netlink.Handle, l netlink.Link) error { return h.LinkSetDown(l) })
	byHand(t, swNS, port, func(h *netlink.Handle, l netlink.Link) error {
		if err := h.LinkSetDown(l); err != nil {
			return err
		}
		if err := h.LinkSetNoMaster(l); err != nil {
			return err
		}
		return h.LinkSetMTU(l, 1300)
	})
	r := f.read("a0", rec)
	if r.Gone || r.Diagnostics.HasErrors() {
		t.Fatalf("Read: gone=%v %v, want the NIC with its drift", r.Gone, r.Diagnostics)
	}
	drifted := rec.Clone()
	drifted["up"] = "false"
	drifted["port.up"] = "false"
	drifted["port.master"] = ""
	drifted["port.mtu"] = "1300"
	if diff := cmp.Diff(drifted, r.Actual); diff != "" {
		t.Errorf("Read after drift (-want +got):\n%s", diff)
	}
	addr := provider.Addr{Kind: provider.KindNIC, Name: "a0"}
	u := f.nic.Update(context.Background(), provider.UpdateRequest{Naming: f.n, Addr: addr, Prior: r.Actual, Desired: desired})
	if u.Diagnostics.HasErrors() {
		t.Fatalf("Update: %v", u.Diagnostics)
	}
	if diff := cmp.Diff(desired, u.New); diff != "" {
		t.Errorf("Update New (-want +got):\n%s", diff)
	}
	l, p := linkIn(t, ns, "a0"), linkIn(t, swNS, port)
	br := linkIn(t, swNS, provider.BridgeName)
	if !isUp(l) || !isUp(p) || p.Attrs().MasterIndex != br.Attrs().Index || p.Attrs().MTU != 1400 {
		t.Errorf("after Update: a0 up %v, port up %v, master %d (bridge %d), mtu %d; want up, up, the bridge, 1400",
			isUp(l), isUp(p), p.Attrs().MasterIndex, br.Attrs().Index, p.Attrs().MTU)
	}

	// The bridge set down is drift of the switch, not a switch gone (which
	// would replace every NIC connected to it).
	byHand(t, swNS, provider.BridgeName, func(h *netlink.Handle, l netlink.Link) error { return h.LinkSetDown(l) })
	sw := provider.Addr{Kind: provider.KindSwitch, Name: "sw"}
	swAttrs := provider.Attrs{provider.AttrNetNS: swNS, provider.AttrBridge: provider.BridgeName, provider.AttrUp: "true"}
	swOld := provider.Attrs{provider.AttrNetNS: swNS, provider.AttrBridge: provider.BridgeName}
	if sr := f.sw.Read(context.Background(), provider.ReadRequest{Naming: f.n, Addr: sw, Recorded: swOld}); sr.Actual[provider.AttrUp] != "false" {
		t.Errorf("switch Read of a record without up, bridge down: gone=%v actual %v, want up=false", sr.Gone, sr.Actual)
	}
	sr := f.sw.Read(context.Background(), provider.ReadRequest{Naming: f.n, Addr: sw, Recorded: swAttrs})
	if sr.Gone || sr.Diagnostics.HasErrors() || sr.Actual[provider.AttrUp] != "false" {
		t.Fatalf("switch Read with the bridge down: gone=%v %v actual %v, want up=false", sr.Gone, sr.Diagnostics, sr.Actual)
	}
	su := f.sw.Update(context.Background(), provider.UpdateRequest{Naming: f.n, Addr: sw, Prior: sr.Actual, Desired: swAttrs})
	if su.Diagnostics.HasErrors() {
		t.Fatalf("switch Update: %v", su.Diagnostics)
	}
	if diff := cmp.Diff(swAttrs, su.New); diff != "" {
		t.Errorf("switch Update New (-want +got):\n%s", diff)
	}
	if br := linkIn(t, swNS, provider.BridgeName); !isUp(br) {
		t.Errorf("bridge down after the switch's Update, want up")
	}
	// The repaired lab carries traffic again.
	reach(t, ns, nsB, "10.79.1.2")
}

// featuresIn reads every kernel feature of link name in ns, on or off,
// through the ethtool ioctl.
func featuresIn(t *testing.T, ns, name string) map[string]bool {
	t.Helper()
	var feats map[string]bool
	err := netnsfs.Do(ns, func() error {
		et, err := ethtool.NewEthtool()
		if err != nil {
			return err
		}
		defer et.Close()
		feats, err = et.Features(name)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return feats
}

// ethtoolGroups runs the ethtool binary's `ethtool -k` on link name in
// ns and returns its groups: each offload it prints ("tcp-segmentation-
// offload") with the kernel features listed under it. A group of one
// feature is printed without members and maps to nil.
func ethtoolGroups(t *testing.T, ns, name, path string) map[string][]string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, path, "-k", name).Output()
	if err != nil {
		t.Fatalf("ethtool -k %s in %s: %v", name, ns, err)
	}
	groups := map[string][]string{}
	last := ""
	for _, line := range strings.Split(string(out), "\n") {
		n, _, ok := strings.Cut(strings.TrimSpace(line), ":")
		switch {
		case !ok:
		case strings.HasPrefix(line, "\t") && last != "":
			groups[last] = append(groups[last], n)
		default:
			last = n
			groups[n] = nil
		}
	}
	return groups
}

// tsoGroup returns the feature names `ethtool -K DEV tso off` changes on
// link name in ns, as the ethtool binary groups them under
// "tcp-segmentation-offload:" in `ethtool -k`; without the binary, every
// name the device has that speaks of TCP segmentation.
func tsoGroup(t *testing.T, ns, name string, feats map[string]bool) []string {
	t.Helper()
	var group []string
	if path, err := exec.LookPath("ethtool"); err == nil {
		group = ethtoolGroups(t, ns, name, path)["tcp-segmentation-offload"]
	} else {
		t.Logf("no ethtool binary: the TSO group is every feature named tx-tcp...segmentation")
		for n := range feats {
			if strings.Contains(n, "tcp") && strings.Contains(n, "segmentation") {
				group = append(group, n)
			}
		}
	}
	sort.Strings(group)
	return group
}

// TestFeatureGroupsAreTheKernels checks every offload's feature group
// (the one home of kernel feature names, features.go) against the
// feature names a real veth reports through the ethtool ioctl and the
// ethtool binary's grouping of them (off_flag_def in its common.c): the
// features a group changes are the ones `ethtool -K DEV OFFLOAD off`
// changes, and the features it reads are among them.
func TestFeatureGroupsAreTheKernels(t *testing.T) {
	path, err := exec.LookPath("ethtool")
	if err != nil {
		t.Skip("no ethtool binary to group the kernel's feature names (CI installs it)")
	}
	f := newFixture(t)
	ns := f.addHost("a")
	f.addSwitch("sw")
	f.mustNIC("a0", f.switchNIC("a0", "a", "sw", nil))
	names := featuresIn(t, ns, "a0")
	groups := ethtoolGroups(t, ns, "a0", path)
	header := map[config.Offload]string{
		config.TSO: "tcp-segmentation-offload", config.GSO: "generic-segmentation-offload",
		config.GRO: "generic-receive-offload", config.LRO: "large-receive-offload",
		config.SG: "scatter-gather", config.TxCsum: "tx-checksumming", config.RxCsum: "rx-checksumming",
	}
	for _, o := range config.AllOffloads() {
		h, ok := header[o]
		if !ok {
			t.Errorf("offload %s: no ethtool group named for it in this test", o)
			continue
		}
		want, printed := groups[h]
		if !printed {
			t.Errorf("offload %s: ethtool -k prints no %q", o, h)
			continue
		}
		got, show := nic.FeatureGroup(names, o)
		if len(want) == 0 && len(got) != 1 {
			t.Errorf("offload %s: members %v, want the one feature ethtool prints as %q", o, got, h)
		}
		if len(want) > 0 {
			sort.Strings(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("offload %s: members against ethtool's %q (-want +got):\n%s", o, h, diff)
			}
		}
		for _, n := range show {
			if !slices.Contains(got, n) {
				t.Errorf("offload %s: reads %s, which is not among its kernel features %v", o, n, got)
			}
		}
		t.Logf("offload %s: %v", o, got)
	}
}

// TestTSOGroupIsTheKernels turns tso off and on on a real veth: every TCP
// segmentation feature the kernel offers follows, not a fixed list
// (kernel 6.18 added tx-tcp-accecn-segmentation, which a fixed list of
// four left on).
func TestTSOGroupIsTheKernels(t *testing.T) {
	f := newFixture(t)
	ns := f.addHost("a")
	f.addSwitch("sw")
	desired := f.switchNIC("a0", "a", "sw", provider.Attrs{"offload.tso": "false"})
	rec := f.mustNIC("a0", desired)

	feats := featuresIn(t, ns, "a0")
	group := tsoGroup(t, ns, "a0", feats)
	if !slices.Contains(group, "tx-tcp-segmentation") || !slices.Contains(group, "tx-tcp6-segmentation") {
		t.Fatalf("TSO group of a veth %v lacks tx-tcp-segmentation or tx-tcp6-segmentation", group)
	}
	t.Logf("the kernel's TSO group on a veth: %v", group)
	check := func(when string, want bool) {
		t.Helper()
		feats := featuresIn(t, ns, "a0")
		for _, n := range group {
			if feats[n] != want {
				t.Errorf("%s: %s is %v, want %v (every feature of the TSO group)", when, n, feats[n], want)
			}
		}
	}
	check("after Create with tso=false", false)

	on := desired.Clone()
	on["offload.tso"] = "true"
	u := f.nic.Update(context.Background(), provider.UpdateRequest{Naming: f.n, Addr: provider.Addr{Kind: provider.KindNIC, Name: "a0"}, Prior: rec, Desired: on})
	if u.Diagnostics.HasErrors() {
		t.Fatalf("Update: %v", u.Diagnostics)
	}
	check("after Update to tso=true", true)
}

// TestDeleteGoingWithHost: a switch NIC deleted with its host in Going
// (the same apply deletes the host's namespace right after) leaves its
// veth in place, and the namespace's removal takes the veth and its
// switch port along.
func TestDeleteGoingWithHost(t *testing.T) {
	f := newFixture(t)
	ns := f.addHost("a")
	swNS := f.addSwitch("sw")
	attrs := f.switchNIC("a0", "a", "sw", nil)
	rec := f.mustNIC("a0", attrs)
	hostAddr := provider.Addr{Kind: provider.KindHost, Name: "a"}
	d := f.nic.Delete(context.Background(), provider.DeleteRequest{Naming: f.n, Addr: provider.Addr{Kind: provider.KindNIC, Name: "a0"}, Recorded: rec, Going: []provider.Addr{hostAddr}})
	if d.Diagnostics.HasErrors() {
		t.Fatalf("Delete: %v", d.Diagnostics)
	}
	if linkIn(t, ns, "a0") == nil {
		t.Fatalf("a0 deleted by its NIC's Delete; want it left to its namespace's removal")
	}
	port := provider.PortName("a0")
	h, err := netnsfs.Open(swNS)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	updates, done := make(chan netlink.LinkUpdate, 16), make(chan struct{})
	defer close(done)
	if err := netlink.LinkSubscribeAt(h, updates, done); err != nil {
		t.Fatal(err)
	}
	if linkIn(t, swNS, port) == nil {
		t.Fatalf("port %s gone before the host's namespace", port)
	}
	hd := f.host.Delete(context.Background(), provider.DeleteRequest{Naming: f.n, Addr: hostAddr, Recorded: provider.Attrs{provider.AttrHostKind: "netns", provider.AttrNetNS: ns}})
	if hd.Diagnostics.HasErrors() {
		t.Fatalf("delete host: %v", hd.Diagnostics)
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case u := <-updates:
			if u.Header.Type == unix.RTM_DELLINK && u.Link.Attrs().Name == port {
				return
			}
		case <-timeout:
			t.Fatalf("port %s still in %s 30 s after its host's namespace was removed", port, swNS)
		}
	}
}

// addrGenModes returns each link of ns (lo left out) with its IPv6
// address generation mode as `ip -d link` names it ("none", "eui64"):
// what decides whether the kernel gives the link a link-local address
// when it comes up with a carrier (which it may do later, from its
// linkwatch work, so the addresses themselves are not what is checked).
func addrGenModes(t *testing.T, ns string) map[string]string {
	t.Helper()
	out, err := exec.Command("ip", "-n", ns, "-j", "-d", "link", "show").Output()
	if err != nil {
		t.Fatalf("ip -n %s -j -d link show: %v", ns, err)
	}
	var links []struct {
		Name string `json:"ifname"`
		Mode string `json:"inet6_addr_gen_mode"`
	}
	if err := json.Unmarshal(out, &links); err != nil {
		t.Fatal(err)
	}
	modes := map[string]string{}
	for _, l := range links {
		if l.Name != "lo" {
			modes[l.Name] = l.Mode
		}
	}
	return modes
}

// TestNoLinkLocal: the links tsolab makes (a switch NIC's veth, its
// port, the bridge, a pair's two ends, a dummy) get the IPv6 address
// generation mode none before they come up, so no link-local address;
// a NIC whose host declares net.ipv6.conf.default.addr_gen_mode
// (AttrAddrGenMode, and AttrPeerAddrGenMode for a pair's far end) gets
// the mode it declares.
func TestNoLinkLocal(t *testing.T) {
	if _, err := os.Stat("/proc/sys/net/ipv6"); err != nil {
		t.Skip("this kernel has no IPv6: there is no link-local address to leave out")
	}
	f := newFixture(t)
	nsA, nsB, nsC := f.addHost("a"), f.addHost("b"), f.addHost("c")
	nsSw := f.addSwitch("sw")
	f.mustNIC("a0", f.switchNIC("a0", "a", "sw", provider.Attrs{"address": "10.82.0.1/24"}))
	f.mustNIC("b0", f.switchNIC("b0", "b", "sw", provider.Attrs{"address": "10.82.0.2/24", provider.AttrAddrGenMode: "0"}))
	f.mustNIC("a1", provider.Attrs{
		"host": "a", "netns": nsA, "ifname": "a1", "link": "peer:c1",
		"peer_netns": nsC, "peer_ifname": "c1", provider.AttrPeerAddrGenMode: "0",
	})
	f.mustNIC("c1", provider.Attrs{"host": "c", "netns": nsC, "ifname": "c1", "link": "peer-of:a1", provider.AttrAddrGenMode: "0"})
	f.mustNIC("lone0", provider.Attrs{"host": "a", "netns": nsA, "ifname": "lone0", "link": "none"})
	for _, tt := range []struct {
		ns   string
		want map[string]string
	}{
		{nsA, map[string]string{"a0": "none", "a1": "none", "lone0": "none"}},
		{nsB, map[string]string{"b0": "eui64"}}, // its host declares 0
		{nsC, map[string]string{"c1": "eui64"}}, // the far end of a1's pair, whose host declares 0
		{nsSw, map[string]string{provider.BridgeName: "none", provider.PortName("a0"): "none", provider.PortName("b0"): "none"}},
	} {
		if diff := cmp.Diff(tt.want, addrGenModes(t, tt.ns)); diff != "" {
			t.Errorf("IPv6 address generation modes in %s (-want +got):\n%s", tt.ns, diff)
		}
	}
}

// TestHostMarksSwapped: the NIC provider takes a namespace's mark from
// the host provider (HostMarks) only while the namespace bound at the
// name is the one the host provider made; one swapped in by hand since
// (unmarked: not tsolab's) is asked, and refused.
func TestHostMarksSwapped(t *testing.T) {
	f := newFixture(t)
	f.nic.HostMarks = f.host.Marks()
	ns := f.addHost("a")
	f.addSwitch("sw")
	f.mustNIC("a0", f.switchNIC("a0", "a", "sw", nil))
	if err := netnsfs.Remove(ns); err != nil {
		t.Fatal(err)
	}
	if _, err := netnsfs.Create(ns); err != nil { // by hand, as ip netns add does
		t.Fatal(err)
	}
	t.Cleanup(func() { netnsfs.Remove(ns) })
	r := f.createNIC("a1", f.switchNIC("a1", "a", "sw", nil))
	if !r.Diagnostics.HasErrors() {
		t.Errorf("Create in a namespace swapped in by hand: no error, want the namespace refused")
	}
	if l := linkIn(t, ns, "a1"); l != nil {
		t.Errorf("a1 was made in the namespace swapped in by hand")
	}
}
