package planner_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
	"github.com/tsolab/tsolab/provider/nic"
)

func realProviders() map[provider.Kind]provider.Interface {
	return map[provider.Kind]provider.Interface{
		provider.KindHost: host.New(), provider.KindSwitch: nic.NewSwitch(), provider.KindNIC: nic.New(),
	}
}

// realLab wires a planner to real namespaces under a unique lab name and
// destroys whatever is left when the test ends.
func realLab(t testing.TB) (p *planner.Planner, lab, dir string) {
	netnstest.Require(t)
	lab = netnstest.LabID(t)
	netnstest.CheckNoLeftovers(t, provider.NamespacePrefix+lab+".")
	dir = t.TempDir()
	p = planner.New(planner.Options{Dir: dir, Lab: lab, Providers: realProviders()})
	t.Cleanup(func() {
		plan, err := p.PlanDestroy(context.Background())
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		if res, err := p.Apply(context.Background(), plan); err != nil {
			t.Errorf("cleanup destroy: %v", err)
		} else if res.Diagnostics.HasErrors() {
			t.Errorf("cleanup destroy: %v", res.Diagnostics)
		}
	})
	return p, lab, dir
}

func realPlan(t *testing.T, p *planner.Planner, lab string, sc *config.Scenario) *planner.Plan {
	t.Helper()
	plan, err := p.Plan(context.Background(), sc.Name, provider.Desired(sc, provider.NewNaming(lab)))
	if err != nil || plan.Diagnostics.HasErrors() {
		t.Fatalf("plan: %v %v", err, plan.Diagnostics)
	}
	return plan
}

// TestRealNamespaces runs the cycle on real namespaces: apply,
// no changes, drift made with ip is shown and repaired, tso=false is one
// in-place update, destroy leaves nothing (checked by CheckNoLeftovers).
func TestRealNamespaces(t *testing.T) {
	p, lab, _ := realLab(t)
	plan := realPlan(t, p, lab, twoReceivers(true))
	if got, want := plan.Summary(), "Plan: 7 to add, 0 to change, 0 to destroy."; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	mustApply(t, p, plan)
	if got := realPlan(t, p, lab, twoReceivers(true)).Summary(); got != "No changes." {
		t.Fatalf("second plan: %q", got)
	}

	ns := provider.NewNaming(lab).HostNS("rx1")
	if out, err := exec.Command("ip", "-n", ns, "link", "set", "rx10", "mtu", "1400").CombinedOutput(); err != nil {
		t.Fatalf("make drift: %v: %s", err, out)
	}
	plan = realPlan(t, p, lab, twoReceivers(true))
	wantDrift := []planner.Drift{{Addr: addr("nic.rx10"), Diffs: []planner.AttrDiff{{Key: "mtu", Before: "1500", After: "1400", BeforeSet: true, AfterSet: true}}}}
	if diff := cmp.Diff(wantDrift, plan.Drift); diff != "" {
		t.Errorf("drift (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"nic.rx10": "~"}, actions(plan)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	mustApply(t, p, plan)

	plan = realPlan(t, p, lab, twoReceivers(false))
	if diff := cmp.Diff(map[string]string{"nic.tx0": "~"}, actions(plan)); diff != "" {
		t.Errorf("tso=false (-want +got):\n%s", diff)
	}
	mustApply(t, p, plan)
	if got := realPlan(t, p, lab, twoReceivers(false)).Summary(); got != "No changes." {
		t.Errorf("after tso=false: %q", got)
	}

	res := mustDestroy(t, p)
	if res.Destroyed != 7 {
		t.Errorf("destroyed %d, want 7", res.Destroyed)
	}
}

// BenchmarkRealLab100 applies and destroys the 100-host lab (100
// namespaces, each with a veth to one switch) through the planner and the
// real providers, state writes included. The target is under 2 s
// for each.
func BenchmarkRealLab100(b *testing.B) {
	sc := hundredHosts()
	var apply, destroy time.Duration
	for b.Loop() {
		p, lab, _ := realLab(b)
		plan, err := p.Plan(context.Background(), sc.Name, provider.Desired(sc, provider.NewNaming(lab)))
		if err != nil || plan.Diagnostics.HasErrors() {
			b.Fatalf("plan: %v %v", err, plan.Diagnostics)
		}
		start := time.Now()
		res, err := p.Apply(context.Background(), plan)
		if err != nil || res.Diagnostics.HasErrors() {
			b.Fatalf("apply: %v %v", err, res.Diagnostics)
		}
		apply += time.Since(start)
		start = time.Now()
		dplan, err := p.PlanDestroy(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		res, err = p.Apply(context.Background(), dplan)
		if err != nil || res.Diagnostics.HasErrors() || res.Destroyed != 201 {
			b.Fatalf("destroy: %v %v %d", err, res.Diagnostics, res.Destroyed)
		}
		destroy += time.Since(start)
	}
	b.ReportMetric(apply.Seconds()/float64(b.N), "apply-s")
	b.ReportMetric(destroy.Seconds()/float64(b.N), "destroy-s")
}

// TestUnmountedNamespaceFile: a kill -9 between unmounting a namespace
// and removing its file (or between creating the file and mounting)
// leaves a file in /run/netns with no namespace on it, which makes `ip
// netns list` fail. Such a file of a recorded host is the host's: the
// next apply makes the namespace on it, and destroy removes it.
func TestUnmountedNamespaceFile(t *testing.T) {
	p, lab, _ := realLab(t)
	n := provider.NewNaming(lab)
	mustApply(t, p, realPlan(t, p, lab, twoReceivers(true)))
	unmount := func() {
		t.Helper()
		if err := unix.Unmount(netnsfs.Path(n.HostNS("rx1")), unix.MNT_DETACH); err != nil {
			t.Fatal(err)
		}
	}
	listOK := func(when string) {
		t.Helper()
		if out, err := exec.Command("ip", "netns", "list").CombinedOutput(); err != nil {
			t.Errorf("%s: ip netns list: %v: %s", when, err, out)
		}
	}

	unmount()
	plan := realPlan(t, p, lab, twoReceivers(true))
	if diff := cmp.Diff(map[string]string{"host.rx1": "+", "nic.rx10": "+"}, actions(plan)); diff != "" {
		t.Errorf("plan with the file left (-want +got):\n%s", diff)
	}
	mustApply(t, p, plan)
	if got := realPlan(t, p, lab, twoReceivers(true)).Summary(); got != "No changes." {
		t.Errorf("plan after apply: %q", got)
	}
	listOK("after apply")

	unmount()
	mustDestroy(t, p)
	if left, err := netnsfs.List(provider.NamespacePrefix + lab + "."); len(left) > 0 || err != nil {
		t.Errorf("files left in %s after destroy: %v %v", netnsfs.Dir, left, err)
	}
	listOK("after destroy")
}
