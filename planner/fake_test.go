package planner_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/providertest"
)

// An adopted device's restore values, which the provider returns from
// Create but not from Read, must reach Delete.
func TestRestoreValuesReachDelete(t *testing.T) {
	dir := t.TempDir()
	dev := provider.Resource{Addr: addr("nic.eth"), Attrs: provider.Attrs{"link": "device:eth9", "ifname": "eth9", "mtu": "9000"}}
	var mu sync.Mutex
	actual := provider.Attrs{}
	f := &providertest.Fake{
		CreateFn: func(req provider.CreateRequest) provider.CreateResponse {
			mu.Lock()
			defer mu.Unlock()
			actual = req.Desired.Clone()
			n := req.Desired.Clone()
			n["restore.mtu"] = "1500"
			return provider.CreateResponse{New: n}
		},
		ReadFn: func(req provider.ReadRequest) provider.ReadResponse {
			mu.Lock()
			defer mu.Unlock()
			return provider.ReadResponse{Actual: actual.Clone()}
		},
		UpdateFn: func(req provider.UpdateRequest) provider.UpdateResponse {
			mu.Lock()
			defer mu.Unlock()
			actual = req.Desired.Clone()
			return provider.UpdateResponse{New: req.Desired.Clone()}
		},
	}
	p := planner.New(planner.Options{Dir: dir, Lab: labName, Providers: map[provider.Kind]provider.Interface{provider.KindNIC: f}})
	plan, err := p.Plan(context.Background(), "a", []provider.Resource{dev})
	if err != nil {
		t.Fatal(err)
	}
	if !f.ValidateCalled || f.ValidateRequest.Addr != dev.Addr || f.ValidateRequest.Naming != provider.NewNaming(labName) {
		t.Errorf("Validate: called=%v request=%+v", f.ValidateCalled, f.ValidateRequest)
	}
	mustApply(t, p, plan)

	dev.Attrs = dev.Attrs.Clone()
	dev.Attrs["mtu"] = "4000"
	mustApply(t, p, mustPlan(t, p, planScenario{"b", []provider.Resource{dev}}))
	if diff := cmp.Diff(provider.Attrs{"link": "device:eth9", "ifname": "eth9", "mtu": "9000"}, f.UpdateRequest.Prior); diff != "" {
		t.Errorf("Update Prior (-want +got):\n%s", diff)
	}

	mustDestroy(t, p)
	if !f.DeleteCalled {
		t.Fatal("Delete was not called")
	}
	if got := f.DeleteRequest.Recorded["restore.mtu"]; got != "1500" {
		t.Errorf("Delete got restore.mtu %q, want 1500 (recorded: %v)", got, f.DeleteRequest.Recorded)
	}
	want := []string{"validate nic.eth", "create nic.eth", "read nic.eth", "validate nic.eth", "update nic.eth", "read nic.eth", "delete nic.eth"}
	if diff := cmp.Diff(want, f.Calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// planScenario lets mustPlan take hand-made resources.
type planScenario struct {
	name string
	res  []provider.Resource
}

func TestCancelStopsNewChanges(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.OnOp = func(op providertest.OpKind, a provider.Addr) { cancel() }
	p := newPlanner(dir, w, func(o *planner.Options) { o.Parallelism = 1 })
	plan := mustPlan(t, p, twoReceivers(true))
	res, err := p.Apply(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(w.Log()); got != 1 {
		t.Errorf("%d operations ran after the cancel, want only the one in flight: %v", got, w.Log())
	}
	if res.Added != 1 || len(res.Skipped) != 6 {
		t.Errorf("added %d, skipped %d; want 1 and 6", res.Added, len(res.Skipped))
	}
	if len(res.Diagnostics) != 1 || res.Diagnostics[0].Summary != "Apply interrupted" {
		t.Errorf("diagnostics = %v, want one saying the apply was interrupted", res.Diagnostics)
	}
	// One outcome: interrupted, not "Apply complete!" after the
	// diagnostic saying it was interrupted.
	if got, want := res.Summary(), "Apply interrupted: 6 operation(s) not started. Resources: 1 added, 0 changed, 0 destroyed."; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	// The next apply finishes.
	mustApply(t, newPlanner(dir, w), mustPlan(t, newPlanner(dir, w), twoReceivers(true)))
	if got := len(w.Addrs()); got != 7 {
		t.Errorf("after the second apply the world holds %d objects, want 7", got)
	}
}

func TestPlanRefusesAnotherLabsState(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	p := newPlanner(dir, w)
	mustApply(t, p, mustPlan(t, p, twoReceivers(true)))
	renamed := newPlanner(dir, w, func(o *planner.Options) { o.Lab = "renamed" })
	plan, err := renamed.Plan(context.Background(), "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Diagnostics.HasErrors() || !strings.Contains(plan.Diagnostics[0].Summary, `The state belongs to lab "t", not "renamed"`) {
		t.Errorf("diagnostics = %v", plan.Diagnostics)
	} else if d := plan.Diagnostics[0].Detail; !strings.Contains(d, "Add -name t to work on them") {
		t.Errorf("detail %q does not suggest -name t", d)
	}
	// Destroy still works, under the state's own naming.
	dplan, err := renamed.PlanDestroy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if dplan.Lab != labName {
		t.Errorf("destroy plan lab = %q, want %q", dplan.Lab, labName)
	}
}

func TestReadFailureBlocksApply(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	p := newPlanner(dir, w)
	mustApply(t, p, mustPlan(t, p, twoReceivers(true)))
	f := &providertest.Fake{ReadResponse: provider.ReadResponse{Diagnostics: hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "nic: permission denied"}}}}
	broken := planner.New(planner.Options{Dir: dir, Lab: labName, Providers: map[provider.Kind]provider.Interface{
		provider.KindHost: w, provider.KindSwitch: w, provider.KindNIC: f,
	}})
	plan, err := broken.Plan(context.Background(), "x", desired(twoReceivers(true)))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Diagnostics) != 3 || !plan.Diagnostics.HasErrors() {
		t.Errorf("diagnostics = %v, want one per NIC", plan.Diagnostics)
	}
	if plan.HasChanges() {
		t.Errorf("unread resources planned as changes: %v", actions(plan))
	}
}

func TestDestroyFailureKeepsRecord(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	p := newPlanner(dir, w)
	mustApply(t, p, mustPlan(t, p, twoReceivers(true)))
	w.Fail = func(op providertest.OpKind, a provider.Addr) hcl.Diagnostics {
		if op == providertest.OpDelete && a == addr("nic.tx0") {
			return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "nic.tx0: delete veth: device or resource busy"}}
		}
		return nil
	}
	plan, err := p.PlanDestroy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Apply(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	// host.tx and switch.sw hold nic.tx0: both are skipped; the rest goes.
	want := "Destroy failed: 1 operation(s) failed, 2 skipped because something they depend on failed. Resources: 0 added, 0 changed, 4 destroyed."
	if got := res.Summary(); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	var left []string
	for _, r := range res.State.Resources {
		left = append(left, r.Addr.String())
	}
	if diff := cmp.Diff([]string{"host.tx", "nic.tx0", "switch.sw"}, left); diff != "" {
		t.Errorf("state after the failed destroy (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"host.tx", "nic.tx0", "switch.sw"}, w.Addrs()); diff != "" {
		t.Errorf("world after the failed destroy (-want +got):\n%s", diff)
	}
	w.Fail = nil
	mustDestroy(t, p)
	if got := w.Addrs(); len(got) != 0 {
		t.Errorf("second destroy left %v", got)
	}
}
