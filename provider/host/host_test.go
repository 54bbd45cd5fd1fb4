package host_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
)

// summaries returns the summaries of diags, for comparing with cmp.Diff.
func summaries(diags hcl.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		out = append(out, d.Summary)
	}
	return out
}

func TestValidate(t *testing.T) {
	netnstest.Require(t)
	n := provider.Naming{LabID: "val"}
	addr := provider.Addr{Kind: provider.KindHost, Name: "tx"}
	tests := []struct {
		name  string
		attrs provider.Attrs
		want  []string
	}{
		{"plain", provider.Attrs{"kind": "netns", "netns": "tsl.val.tx"}, nil},
		{"sysctl ok", provider.Attrs{"kind": "netns", "netns": "tsl.val.tx", "sysctl.net.ipv4.tcp_wmem": "4096 1 2"}, nil},
		{"foreign namespace", provider.Attrs{"kind": "netns", "netns": "other"},
			[]string{`host.tx: namespace "other" is not one of lab val's`}},
		{"bad kind", provider.Attrs{"kind": "vm", "netns": "tsl.val.tx"},
			[]string{`host.tx: unknown host kind "vm"`}},
		{"not net", provider.Attrs{"kind": "netns", "netns": "tsl.val.tx", "sysctl.kernel.pid_max": "1"},
			[]string{`host.tx: sysctl "kernel.pid_max" is not a net.* key`}},
		{"misspelt", provider.Attrs{"kind": "netns", "netns": "tsl.val.tx", "sysctl.net.ipv4.tcp_wmen": "1"},
			[]string{`host.tx: sysctl "net.ipv4.tcp_wmen" does not exist in a network namespace`}},
		{"initial namespace only", provider.Attrs{"kind": "netns", "netns": "tsl.val.tx", "sysctl.net.ipv4.tcp_mem": "1 2 3"},
			[]string{`host.tx: sysctl "net.ipv4.tcp_mem" does not exist in a network namespace`}},
		{"local has it", provider.Attrs{"kind": "local", "netns": "", "sysctl.net.ipv4.tcp_mem": "1 2 3"}, nil},
	}
	p := host.New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := p.Validate(context.Background(), provider.ValidateRequest{Naming: n, Addr: addr, Desired: tt.attrs})
			if diff := cmp.Diff(tt.want, summaries(got.Diagnostics)); diff != "" {
				t.Errorf("Validate diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}

// nsInode identifies the network namespace of a /proc ns link.
func nsInode(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// checkThreadsHome fails if any thread of this process is in another
// network namespace than the process started in.
func checkThreadsHome(t *testing.T, home uint64) {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tasks {
		var st unix.Stat_t
		if unix.Stat(p, &st) == nil && st.Ino != home {
			t.Errorf("thread %s left in another namespace", p)
		}
	}
}

func TestNamespaceLifecycle(t *testing.T) {
	netnstest.Require(t)
	n := netnstest.Naming(t)
	netnstest.CheckNoLeftovers(t, provider.NamespacePrefix+n.LabID+".")
	home := nsInode(t, "/proc/self/ns/net")
	ns := n.HostNS("tx")
	t.Cleanup(func() { netnsfs.Remove(ns) })
	addr := provider.Addr{Kind: provider.KindHost, Name: "tx"}
	ctx := context.Background()
	p := host.New()
	desired := provider.Attrs{
		"kind": "netns", "netns": ns, "lo.up": "true",
		"sysctl.net.ipv4.tcp_wmem":   "4096 1048576 4194304",
		"sysctl.net.ipv4.ip_forward": "1",
	}
	rootWmem, err := os.ReadFile("/proc/sys/net/ipv4/tcp_wmem")
	if err != nil {
		t.Fatal(err)
	}

	cr := p.Create(ctx, provider.CreateRequest{Naming: n, Addr: addr, Desired: desired})
	if cr.Diagnostics.HasErrors() {
		t.Fatalf("Create: %v", cr.Diagnostics)
	}
	if diff := cmp.Diff(desired, cr.New); diff != "" {
		t.Errorf("Create New (-want +got):\n%s", diff)
	}
	checkThreadsHome(t, home)
	if got, _ := os.ReadFile("/proc/sys/net/ipv4/tcp_wmem"); string(got) != string(rootWmem) {
		t.Errorf("the machine's tcp_wmem changed: got %q, want %q", got, rootWmem)
	}
	err = netnsfs.Do(ns, func() error {
		lo, err := netlink.LinkByName("lo")
		if err != nil {
			return err
		}
		if lo.Attrs().Flags&unix.IFF_UP == 0 {
			t.Errorf("lo in %s is down, want up", ns)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// A second Create (an interrupted apply re-run) completes, not fails.
	cr = p.Create(ctx, provider.CreateRequest{Naming: n, Addr: addr, Desired: desired})
	if cr.Diagnostics.HasErrors() {
		t.Fatalf("second Create: %v", cr.Diagnostics)
	}

	// Drift made inside the namespace shows in Read: a sysctl, and lo
	// set down (`ip link set lo down`).
	loUp := func() bool {
		up := false
		err := netnsfs.Do(ns, func() error {
			lo, err := netlink.LinkByName("lo")
			up = err == nil && lo.Attrs().Flags&unix.IFF_UP != 0
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return up
	}
	err = netnsfs.Do(ns, func() error {
		lo, err := netlink.LinkByName("lo")
		if err != nil {
			return err
		}
		if err := netlink.LinkSetDown(lo); err != nil {
			return err
		}
		return os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("0"), 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	rr := p.Read(ctx, provider.ReadRequest{Naming: n, Addr: addr, Recorded: cr.New})
	if rr.Gone || rr.Diagnostics.HasErrors() {
		t.Fatalf("Read: gone=%v %v", rr.Gone, rr.Diagnostics)
	}
	drifted := desired.Clone()
	drifted["sysctl.net.ipv4.ip_forward"] = "0"
	drifted["lo.up"] = "false"
	if diff := cmp.Diff(drifted, rr.Actual); diff != "" {
		t.Errorf("Read after drift (-want +got):\n%s", diff)
	}
	// A record made before tsolab watched lo reads with lo.up all the same.
	old := cr.New.Clone()
	delete(old, "lo.up")
	if r := p.Read(ctx, provider.ReadRequest{Naming: n, Addr: addr, Recorded: old}); r.Actual["lo.up"] != "false" {
		t.Errorf("Read of a record without lo.up: %v, want lo.up false", r.Actual)
	}

	// Update puts it back.
	ur := p.Update(ctx, provider.UpdateRequest{Naming: n, Addr: addr, Prior: rr.Actual, Desired: desired})
	if ur.Diagnostics.HasErrors() {
		t.Fatalf("Update: %v", ur.Diagnostics)
	}
	if diff := cmp.Diff(desired, ur.New); diff != "" {
		t.Errorf("Update New (-want +got):\n%s", diff)
	}
	if !loUp() {
		t.Errorf("lo in %s is down after Update, want up", ns)
	}
	// The namespace itself has it back, not only Update's report.
	var fwd []byte
	err = netnsfs.Do(ns, func() (err error) {
		fwd, err = os.ReadFile("/proc/sys/net/ipv4/ip_forward")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(fwd)), desired["sysctl.net.ipv4.ip_forward"]; got != want {
		t.Errorf("ip_forward in %s after Update = %q, want %q", ns, got, want)
	}
	rr = p.Read(ctx, provider.ReadRequest{Naming: n, Addr: addr, Recorded: ur.New})
	if got, want := rr.Actual["sysctl.net.ipv4.ip_forward"], desired["sysctl.net.ipv4.ip_forward"]; got != want {
		t.Errorf("Read ip_forward after Update = %q, want %q", got, want)
	}

	dr := p.Delete(ctx, provider.DeleteRequest{Naming: n, Addr: addr, Recorded: ur.New})
	if dr.Diagnostics.HasErrors() {
		t.Fatalf("Delete: %v", dr.Diagnostics)
	}
	rr = p.Read(ctx, provider.ReadRequest{Naming: n, Addr: addr, Recorded: ur.New})
	if !rr.Gone {
		t.Errorf("Read after Delete: Gone = false, want true (actual %v)", rr.Actual)
	}
	checkThreadsHome(t, home)
}

func TestDeleteRefusesForeignNamespace(t *testing.T) {
	netnstest.Require(t)
	n := provider.NewNaming(netnstest.LabID(t))
	foreign := "tsltest." + n.LabID + ".notours"
	netnstest.CheckNoLeftovers(t, "tsltest."+n.LabID+".")
	if _, err := netnsfs.Create(foreign); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { netnsfs.Remove(foreign) })
	p := host.New()
	dr := p.Delete(context.Background(), provider.DeleteRequest{
		Naming:   n,
		Addr:     provider.Addr{Kind: provider.KindHost, Name: "x"},
		Recorded: provider.Attrs{"kind": "netns", "netns": foreign},
	})
	want := []string{`host.x: refusing to delete namespace "` + foreign + `"`}
	if diff := cmp.Diff(want, summaries(dr.Diagnostics)); diff != "" {
		t.Errorf("Delete diagnostics (-want +got):\n%s", diff)
	}
	if ok, err := netnsfs.Exists(foreign); !ok || err != nil {
		t.Errorf("foreign namespace after Delete: exists=%v err=%v, want it kept", ok, err)
	}
}

// TestLocalHost runs the local-host calls on a thread inside a test
// namespace, which then stands for "the machine's own": the real
// machine's sysctls are never touched.
func TestLocalHost(t *testing.T) {
	n, stand := netnstest.StandIn(t)
	addr := provider.Addr{Kind: provider.KindHost, Name: "me"}
	desired := provider.Attrs{"kind": "local", "netns": "", "sysctl.net.ipv4.tcp_fin_timeout": "17"}

	err := netnsfs.Do(stand, func() error {
		ctx := context.Background()
		p := host.New()
		read := func() string {
			b, _ := os.ReadFile("/proc/sys/net/ipv4/tcp_fin_timeout")
			return strings.TrimSpace(string(b))
		}
		orig := read()
		cr := p.Create(ctx, provider.CreateRequest{Naming: n, Addr: addr, Desired: desired})
		if cr.Diagnostics.HasErrors() {
			t.Errorf("Create: %v", cr.Diagnostics)
		}
		want := desired.Clone()
		want["restore.sysctl.net.ipv4.tcp_fin_timeout"] = orig
		if diff := cmp.Diff(want, cr.New); diff != "" {
			t.Errorf("Create New (-want +got):\n%s", diff)
		}
		if got := read(); got != "17" {
			t.Errorf("tcp_fin_timeout after Create = %s, want 17", got)
		}
		rr := p.Read(ctx, provider.ReadRequest{Naming: n, Addr: addr, Recorded: cr.New})
		if rr.Gone || !rr.Actual.Equal(cr.New) {
			t.Errorf("Read: gone=%v actual=%v, want %v", rr.Gone, rr.Actual, cr.New)
		}
		// Changed by hand: the refresh sees the drift.
		if err := os.WriteFile("/proc/sys/net/ipv4/tcp_fin_timeout", []byte("23"), 0o644); err != nil {
			t.Errorf("change tcp_fin_timeout by hand: %v", err)
		}
		rr = p.Read(ctx, provider.ReadRequest{Naming: n, Addr: addr, Recorded: cr.New})
		if got := rr.Actual["sysctl.net.ipv4.tcp_fin_timeout"]; got != "23" {
			t.Errorf("Read after a change by hand: sysctl %q, want 23", got)
		}
		// The lab stops managing it: Update puts the original back and
		// records neither the sysctl nor its original.
		ur := p.Update(ctx, provider.UpdateRequest{Naming: n, Addr: addr, Prior: cr.New, Desired: provider.Attrs{"kind": "local", "netns": ""}})
		if ur.Diagnostics.HasErrors() {
			t.Errorf("Update: %v", ur.Diagnostics)
		}
		if got := read(); got != orig {
			t.Errorf("tcp_fin_timeout after the Update that drops it = %s, want the original %s", got, orig)
		}
		if diff := cmp.Diff(provider.Attrs{"kind": "local", "netns": ""}, ur.New); diff != "" {
			t.Errorf("Update New (-want +got):\n%s", diff)
		}
		dr := p.Delete(ctx, provider.DeleteRequest{Naming: n, Addr: addr, Recorded: cr.New})
		if dr.Diagnostics.HasErrors() {
			t.Errorf("Delete: %v", dr.Diagnostics)
		}
		if read() != orig {
			t.Errorf("tcp_fin_timeout after Delete = %s, want the original %s", read(), orig)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOwnership: two copies of one lab (two states, the same names) on
// one machine. The namespace carries the state that created it; the other
// copy's plan and apply refuse it, its refresh sees its own namespace as
// gone, and its destroy leaves the namespace alone.
func TestOwnership(t *testing.T) {
	mine := netnstest.Lab(t)
	mine.Owner = "state-a"
	other := mine
	other.Owner = "state-b"
	fresh := mine
	fresh.Owner = ""
	ns := mine.HostNS("tx")
	t.Cleanup(func() { netnsfs.Remove(ns) })
	addr := provider.Addr{Kind: provider.KindHost, Name: "tx"}
	desired := provider.Attrs{"kind": "netns", "netns": ns}
	ctx := context.Background()
	p := host.New()
	foreign := []string{"host.tx: namespace " + ns + " belongs to another copy of lab " + mine.LabID}

	if cr := p.Create(ctx, provider.CreateRequest{Naming: mine, Addr: addr, Desired: desired}); cr.Diagnostics.HasErrors() {
		t.Fatalf("Create: %v", cr.Diagnostics)
	}
	if mark, ok, err := netnsfs.Mark(ns); err != nil || !ok || mark != "tsolab:"+mine.LabID+":state=state-a" {
		t.Fatalf("mark of %s = %q, %v, %v: want state-a's", ns, mark, ok, err)
	}
	// Creating it again is completing an interrupted apply: fine for its
	// own state.
	if cr := p.Create(ctx, provider.CreateRequest{Naming: mine, Addr: addr, Desired: desired}); cr.Diagnostics.HasErrors() {
		t.Errorf("Create again by its own state: %v", cr.Diagnostics)
	}
	for _, n := range []provider.Naming{other, fresh} {
		v := p.Validate(ctx, provider.ValidateRequest{Naming: n, Addr: addr, Desired: desired})
		if diff := cmp.Diff(foreign, summaries(v.Diagnostics)); diff != "" {
			t.Errorf("Validate by state %q (-want +got):\n%s", n.Owner, diff)
		}
		cr := p.Create(ctx, provider.CreateRequest{Naming: n, Addr: addr, Desired: desired})
		if diff := cmp.Diff(foreign, summaries(cr.Diagnostics)); diff != "" || cr.New != nil {
			t.Errorf("Create by state %q: New %v, diagnostics (-want +got):\n%s", n.Owner, cr.New, diff)
		}
	}
	if r := p.Read(ctx, provider.ReadRequest{Naming: other, Addr: addr, Recorded: desired}); !r.Gone || r.Diagnostics.HasErrors() {
		t.Errorf("Read by the other state: Gone %v, %v; want gone with a warning", r.Gone, r.Diagnostics)
	}
	if r := p.Read(ctx, provider.ReadRequest{Naming: mine, Addr: addr, Recorded: desired}); r.Gone {
		t.Errorf("Read by its own state: gone, want there")
	}
	d := p.Delete(ctx, provider.DeleteRequest{Naming: other, Addr: addr, Recorded: desired})
	if d.Diagnostics.HasErrors() || len(d.Diagnostics) != 1 {
		t.Errorf("Delete by the other state: %v, want one warning", d.Diagnostics)
	}
	if ok, _ := netnsfs.Exists(ns); !ok {
		t.Fatalf("the other state's Delete removed %s", ns)
	}
	if d := p.Delete(ctx, provider.DeleteRequest{Naming: mine, Addr: addr, Recorded: desired}); d.Diagnostics.HasErrors() {
		t.Errorf("Delete by its own state: %v", d.Diagnostics)
	}
	if ok, _ := netnsfs.Exists(ns); ok {
		t.Errorf("%s still there after its own state's Delete", ns)
	}
}

// handMade makes the namespace ns the way a user does with `ip netns
// add`, with a veth pair of the user's inside (mine0, mine1), and removes it when t
// ends; it returns a check that both are still there.
func handMade(t *testing.T, ns string) (stillThere func(when string)) {
	t.Helper()
	t.Cleanup(func() { netnsfs.Remove(ns) })
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", ns, err, out)
	}
	if out, err := exec.Command("ip", "-n", ns, "link", "add", "mine0", "type", "veth", "peer", "name", "mine1").CombinedOutput(); err != nil {
		t.Fatalf("add a veth pair in %s: %v: %s", ns, err, out)
	}
	return func(when string) {
		t.Helper()
		if out, err := exec.Command("ip", "-n", ns, "link", "show", "mine0").CombinedOutput(); err != nil {
			t.Errorf("%s: the user's namespace %s or its link mine0 is gone: %v: %s", when, ns, err, out)
		}
		if mark, _, err := netnsfs.Mark(ns); mark != "" || err != nil {
			t.Errorf("%s: the user's namespace %s carries the mark %q (%v), want none", when, ns, mark, err)
		}
	}
}

// TestHandMadeNamespace: a namespace made by hand under the name a lab's
// host would have (with the user's own links inside) is never tsolab's,
// for a lab with no state yet and for one whose state records the host:
// plan refuses it naming the fix, Create neither takes nor marks it, a
// refresh sees the recorded host gone, and Delete leaves it alone.
func TestHandMadeNamespace(t *testing.T) {
	mine := netnstest.Lab(t)
	mine.Owner = "state-a"
	fresh := mine
	fresh.Owner = ""
	ns := mine.HostNS("tx")
	stillThere := handMade(t, ns)
	addr := provider.Addr{Kind: provider.KindHost, Name: "tx"}
	desired := provider.Attrs{"kind": "netns", "netns": ns}
	ctx := context.Background()
	p := host.New()
	notOurs := []string{"host.tx: namespace " + ns + " exists and tsolab did not make it"}

	for _, n := range []provider.Naming{fresh, mine} {
		v := p.Validate(ctx, provider.ValidateRequest{Naming: n, Addr: addr, Desired: desired})
		if diff := cmp.Diff(notOurs, summaries(v.Diagnostics)); diff != "" {
			t.Errorf("Validate by state %q (-want +got):\n%s", n.Owner, diff)
		}
		for _, d := range v.Diagnostics {
			if !strings.Contains(d.Detail, "ip netns delete "+ns) || !strings.Contains(d.Detail, "-name") {
				t.Errorf("Validate by state %q: %q lacks the fix (delete it, or -name)", n.Owner, d.Detail)
			}
		}
		cr := p.Create(ctx, provider.CreateRequest{Naming: n, Addr: addr, Desired: desired})
		if diff := cmp.Diff(notOurs, summaries(cr.Diagnostics)); diff != "" || cr.New != nil {
			t.Errorf("Create by state %q: New %v, diagnostics (-want +got):\n%s", n.Owner, cr.New, diff)
		}
		stillThere("after Create by state " + n.Owner)
	}
	r := p.Read(ctx, provider.ReadRequest{Naming: mine, Addr: addr, Recorded: desired})
	if !r.Gone || r.Diagnostics.HasErrors() || len(r.Diagnostics) != 1 {
		t.Errorf("Read of a recorded host: Gone %v, %v; want gone with a warning", r.Gone, r.Diagnostics)
	}
	d := p.Delete(ctx, provider.DeleteRequest{Naming: mine, Addr: addr, Recorded: desired})
	if d.Diagnostics.HasErrors() || len(d.Diagnostics) != 1 {
		t.Errorf("Delete of a recorded host: %v, want one warning", d.Diagnostics)
	}
	stillThere("after Delete")
}

// leaveFile puts at the path of namespace ns what a kill -9 of tsolab
// leaves there: a file with no namespace bound on it, either never
// mounted (killed between creating the file and mounting) or unmounted
// (killed between unmounting and removing it).
func leaveFile(t *testing.T, ns string, unmounted bool) {
	t.Helper()
	if !unmounted {
		if err := os.WriteFile(netnsfs.Path(ns), nil, 0o444); err != nil {
			t.Fatal(err)
		}
		return
	}
	if _, err := netnsfs.Create(ns); err != nil {
		t.Fatal(err)
	}
	if err := unix.Unmount(netnsfs.Path(ns), unix.MNT_DETACH); err != nil {
		t.Fatal(err)
	}
}

// TestLeftoverFile: a file of a recorded host's namespace with no
// namespace bound on it is not a namespace, but it is the host's: a
// refresh reports the host gone with the file remaining, Delete removes
// the file and Create completes the namespace on it.
func TestLeftoverFile(t *testing.T) {
	n := netnstest.Lab(t)
	n.Owner = "state-a"
	ctx := context.Background()
	p := host.New()
	for _, unmounted := range []bool{false, true} {
		addr := provider.Addr{Kind: provider.KindHost, Name: fmt.Sprintf("h%v", unmounted)}
		ns := n.HostNS(addr.Name)
		t.Cleanup(func() { netnsfs.Remove(ns) })
		recorded := provider.Attrs{"kind": "netns", "netns": ns}

		leaveFile(t, ns, unmounted)
		r := p.Read(ctx, provider.ReadRequest{Naming: n, Addr: addr, Recorded: recorded})
		if !r.Gone || !r.Remains || r.Diagnostics.HasErrors() {
			t.Errorf("unmounted=%v: Read: Gone %v Remains %v %v; want gone, the file remaining", unmounted, r.Gone, r.Remains, r.Diagnostics)
		}
		if d := p.Delete(ctx, provider.DeleteRequest{Naming: n, Addr: addr, Recorded: recorded}); d.Diagnostics.HasErrors() {
			t.Errorf("unmounted=%v: Delete: %v", unmounted, d.Diagnostics)
		}
		if _, err := os.Lstat(netnsfs.Path(ns)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("unmounted=%v: after Delete, %s: %v; want it removed", unmounted, netnsfs.Path(ns), err)
		}

		leaveFile(t, ns, unmounted)
		if cr := p.Create(ctx, provider.CreateRequest{Naming: n, Addr: addr, Desired: recorded}); cr.Diagnostics.HasErrors() {
			t.Errorf("unmounted=%v: Create: %v", unmounted, cr.Diagnostics)
		}
		if mark, ok, err := netnsfs.Mark(ns); !ok || err != nil || mark != n.OwnerMark() {
			t.Errorf("unmounted=%v: after Create: exists %v, mark %q, %v; want ours", unmounted, ok, mark, err)
		}
		if d := p.Delete(ctx, provider.DeleteRequest{Naming: n, Addr: addr, Recorded: recorded}); d.Diagnostics.HasErrors() {
			t.Errorf("unmounted=%v: Delete: %v", unmounted, d.Diagnostics)
		}
	}
}

// TestUnknownOwner: a namespace file whose owner cannot be read (here a
// UTS namespace bound where a lab host's network namespace would be) is
// not touched: Delete fails with the reason and leaves it bound, and a
// refresh is an error, not a host gone.
func TestUnknownOwner(t *testing.T) {
	n := netnstest.Lab(t)
	n.Owner = "state-a"
	ns := n.HostNS("tx")
	p := netnsfs.Path(ns)
	t.Cleanup(func() { netnsfs.Remove(ns) })
	if err := os.WriteFile(p, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("/proc/self/ns/uts", p, "none", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	addr := provider.Addr{Kind: provider.KindHost, Name: "tx"}
	recorded := provider.Attrs{"kind": "netns", "netns": ns}
	ctx := context.Background()
	hp := host.New()
	if r := hp.Read(ctx, provider.ReadRequest{Naming: n, Addr: addr, Recorded: recorded}); r.Gone || !r.Diagnostics.HasErrors() {
		t.Errorf("Read: Gone %v, %v; want an error", r.Gone, r.Diagnostics)
	}
	if d := hp.Delete(ctx, provider.DeleteRequest{Naming: n, Addr: addr, Recorded: recorded}); !d.Diagnostics.HasErrors() {
		t.Errorf("Delete: %v, want an error", d.Diagnostics)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil || st.Type != unix.NSFS_MAGIC {
		t.Errorf("after Delete, %s: %v, type %x; want still bound", p, err, st.Type)
	}
}

// TestDeleteAfterSwap: a host's namespace removed by hand after a
// refresh read it as the lab's, and another made by hand under its name,
// is left alone by Delete, which then reads the new one's mark instead of
// taking the refresh's word (Checked); the host's own, read
// and still bound, is removed.
func TestDeleteAfterSwap(t *testing.T) {
	n := netnstest.Lab(t)
	n.Owner = "state-a"
	ctx := context.Background()
	p := host.New()
	for _, swap := range []bool{false, true} {
		ns := n.HostNS(fmt.Sprintf("swap%v", swap))
		addr := provider.Addr{Kind: provider.KindHost, Name: fmt.Sprintf("swap%v", swap)}
		rec := provider.Attrs{"kind": "netns", "netns": ns, "lo.up": "true"}
		t.Cleanup(func() { netnsfs.Remove(ns) })
		if cr := p.Create(ctx, provider.CreateRequest{Naming: n, Addr: addr, Desired: rec}); cr.Diagnostics.HasErrors() {
			t.Fatal(cr.Diagnostics)
		}
		if r := p.Read(ctx, provider.ReadRequest{Naming: n, Addr: addr, Recorded: rec}); r.Gone || len(r.Diagnostics) > 0 {
			t.Fatalf("Read: gone %v, %v", r.Gone, r.Diagnostics)
		}
		stillThere := func(string) {}
		if swap {
			if err := netnsfs.Remove(ns); err != nil {
				t.Fatal(err)
			}
			stillThere = handMade(t, ns)
		}
		d := p.Delete(ctx, provider.DeleteRequest{Naming: n, Addr: addr, Recorded: rec})
		ok, err := netnsfs.Exists(ns)
		if swap {
			if d.Diagnostics.HasErrors() || len(d.Diagnostics) != 1 || !ok || err != nil {
				t.Errorf("Delete after the swap: %v, exists %v (%v); want one warning and the namespace kept", d.Diagnostics, ok, err)
			}
			stillThere("after Delete")
			continue
		}
		if len(d.Diagnostics) > 0 || ok || err != nil {
			t.Errorf("Delete of the lab's own: %v, exists %v (%v); want it removed", d.Diagnostics, ok, err)
		}
	}
}

// TestHiddenNamespace: a lab host's namespace bound in netnsfs.Dir while
// it was a plain directory (netnsfs leaves Dir so when a namespace is
// bound in it already: here one bound by hand), then hidden by the bind
// a later `ip netns add` makes over Dir. Its copy in that bind is read as
// the host, with a warning (what plan's refresh shows) that it is hidden,
// naming the umount that uncovers it; Delete, which unmounts the copy and
// then cannot remove the name (EBUSY), says that it is hidden and the umount that uncovers it,
// and so does a later Read, which would otherwise take the file for a
// left-over (and a plan bind another namespace over it).
func TestHiddenNamespace(t *testing.T) {
	if !netnstest.InPrivateMounts(t) {
		return
	}
	n := netnstest.Lab(t)
	n.Owner = "state-a"
	ns, old := n.HostNS("tx"), "tsltest.old"
	t.Cleanup(func() {
		unix.Unmount(netnsfs.Dir, unix.MNT_DETACH)
		netnsfs.Remove(ns)
		netnsfs.Remove(old)
	})
	netnstest.BindByHand(t, old)
	if _, err := netnsfs.CreateMarked(ns, n.OwnerMark()); err != nil {
		t.Fatal(err)
	}
	netnstest.HideUnderIPNetnsAdd(t, "tsltest.theirs")
	addr := provider.Addr{Kind: provider.KindHost, Name: "tx"}
	recorded := provider.Attrs{"kind": "netns", "netns": ns}
	ctx := context.Background()
	p := host.New()
	want := "umount " + netnsfs.Dir
	r := p.Read(ctx, provider.ReadRequest{Naming: n, Addr: addr, Recorded: recorded})
	if r.Gone || r.Diagnostics.HasErrors() || len(r.Diagnostics) != 1 || !strings.Contains(r.Diagnostics[0].Summary, want) {
		t.Errorf("Read of the copy: Gone %v, %v; want the host and one warning naming %q", r.Gone, r.Diagnostics, want)
	}
	if d := p.Delete(ctx, provider.DeleteRequest{Naming: n, Addr: addr, Recorded: recorded}); !strings.Contains(d.Diagnostics.Error(), want) {
		t.Errorf("Delete: %v; want an error naming %q", d.Diagnostics, want)
	}
	if r := p.Read(ctx, provider.ReadRequest{Naming: n, Addr: addr, Recorded: recorded}); r.Gone || !strings.Contains(r.Diagnostics.Error(), want) {
		t.Errorf("Read after Delete: Gone %v, %v; want an error naming %q", r.Gone, r.Diagnostics, want)
	}
}
