package planner_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider/providertest"
)

// TestStateRecordsMachines: apply records how to reach the machines the
// lab declares (the lab's blocks winning over the state's record), so
// that a destroy without the lab's files reaches them; a machine no
// record names any more leaves the state with its last object.
func TestStateRecordsMachines(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	r1 := config.Reach{Address: "192.0.2.1", User: "tso", IdentityFile: "~/.ssh/id_ed25519", KnownHosts: "lab_known_hosts", Sudo: true}
	r2 := config.Reach{Address: "192.0.2.2", Port: 2222}
	sc := twoReceivers(true)
	sc.Hosts[1].Machine, sc.Hosts[2].Machine = "r1", "r2"
	sc.NICs, sc.Switches = nil, nil
	withMachines := func(m map[string]config.Reach) func(*planner.Options) {
		return func(o *planner.Options) { o.Machines = m }
	}
	recorded := func() map[string]config.Reach {
		t.Helper()
		st, err := planner.ReadState(dir)
		if err != nil {
			t.Fatal(err)
		}
		return st.Machines
	}

	p := newPlanner(dir, w, withMachines(map[string]config.Reach{"r1": r1, "r2": r2}))
	plan := mustPlan(t, p, sc)
	if d := cmp.Diff(map[string]config.Reach{"r1": r1, "r2": r2}, plan.Machines); d != "" {
		t.Errorf("plan's machines (-want +got):\n%s", d)
	}
	mustApply(t, p, plan)
	if d := cmp.Diff(map[string]config.Reach{"r1": r1, "r2": r2}, recorded()); d != "" {
		t.Errorf("state's machines after apply (-want +got):\n%s", d)
	}

	// rx1 replaced on r1 (deleted, then made again): r1 stays recorded
	// all along.
	sc.Hosts[1].Kind = config.HostLocal
	plan = mustPlan(t, p, sc)
	if got := actions(plan); got["host.rx1"] != "-/+" {
		t.Fatalf("plan with rx1 local: %v, want host.rx1 replaced", got)
	}
	mustApply(t, p, plan)
	if d := cmp.Diff(map[string]config.Reach{"r1": r1, "r2": r2}, recorded()); d != "" {
		t.Errorf("state's machines after rx1 was replaced (-want +got):\n%s", d)
	}

	// r1 moved: the lab's block wins. r2 is no longer declared, and rx2
	// no longer in the lab: the state's record reaches it to delete it,
	// then goes.
	moved := r1
	moved.Address = "192.0.2.11"
	sc.Hosts = sc.Hosts[:2]
	p = newPlanner(dir, w, withMachines(map[string]config.Reach{"r1": moved}))
	plan = mustPlan(t, p, sc)
	if got := actions(plan); got["host.rx2"] != "-" {
		t.Fatalf("plan without rx2: %v, want host.rx2 deleted", got)
	}
	if got := plan.Prior.Machines["r2"]; got != r2 {
		t.Errorf("the plan's prior state records r2 as %+v, want %+v", got, r2)
	}
	mustApply(t, p, plan)
	if d := cmp.Diff(map[string]config.Reach{"r1": moved}, recorded()); d != "" {
		t.Errorf("state's machines after rx2 went (-want +got):\n%s", d)
	}

	// Destroy from the state alone: nothing declared; r1 goes with rx1.
	p = newPlanner(dir, w)
	mustDestroy(t, p)
	if got := recorded(); got != nil {
		t.Errorf("state's machines after destroy: %+v, want none", got)
	}
	if st, err := planner.ReadState(dir); err != nil || len(st.Resources) != 0 {
		t.Errorf("destroy left records: %v %+v", err, st)
	}
}
