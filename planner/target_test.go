package planner_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/providertest"
)

// TestTarget: -target narrows a plan to the target and what it depends
// on, a destroy to the target and what depends on it; the rest is left
// as it is, and a later whole plan shows it again.
func TestTarget(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	p := newPlanner(dir, w)

	plan := mustPlan(t, p, twoReceivers(true))
	if err := plan.Target([]provider.Addr{addr("nic.rx10")}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"nic.rx10": "+", "host.rx1": "+", "switch.sw": "+"}
	if diff := cmp.Diff(want, actions(plan)); diff != "" {
		t.Errorf("targeted plan (-want +got):\n%s", diff)
	}
	mustApply(t, p, plan)
	if diff := cmp.Diff([]string{"host.rx1", "nic.rx10", "switch.sw"}, w.Addrs()); diff != "" {
		t.Errorf("world after the targeted apply (-want +got):\n%s", diff)
	}
	if got, want := mustPlan(t, p, twoReceivers(true)).Summary(), "Plan: 4 to add, 0 to change, 0 to destroy."; got != want {
		t.Errorf("the whole plan after it: got %q, want %q", got, want)
	}
	mustApply(t, p, mustPlan(t, p, twoReceivers(true)))

	// destroy -target switch.sw: the switch and the NICs on it, no host.
	d, err := p.PlanDestroy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Target([]provider.Addr{addr("switch.sw")}); err != nil {
		t.Fatal(err)
	}
	want = map[string]string{"switch.sw": "-", "nic.tx0": "-", "nic.rx10": "-", "nic.rx20": "-"}
	if diff := cmp.Diff(want, actions(d)); diff != "" {
		t.Errorf("targeted destroy (-want +got):\n%s", diff)
	}
	mustApply(t, p, d)
	if diff := cmp.Diff([]string{"host.rx1", "host.rx2", "host.tx"}, w.Addrs()); diff != "" {
		t.Errorf("world after the targeted destroy (-want +got):\n%s", diff)
	}
	st, err := planner.ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(st.Resources); got != 3 {
		t.Errorf("state after the targeted destroy: %d resources, want the 3 hosts", got)
	}

	// An address the lab does not have is an error naming the closest.
	bad := mustPlan(t, p, twoReceivers(true))
	err = bad.Target([]provider.Addr{addr("nic.rx01")})
	if err == nil || !strings.Contains(err.Error(), "did you mean nic.rx10?") {
		t.Errorf("-target nic.rx01: got %v, want an error suggesting nic.rx10", err)
	}
}
