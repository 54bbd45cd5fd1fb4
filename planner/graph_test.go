package planner_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider/providertest"
)

func TestDOT(t *testing.T) {
	sc := twoReceivers(true)
	sc.NICs = sc.NICs[:1]
	sc.Hosts = sc.Hosts[:1]
	want := `digraph tsolab {
  compound = "true"
  newrank = "true"
  rankdir = "RL"
  "host.tx" [label = "host.tx", shape = "box"]
  "nic.tx0" [label = "nic.tx0", shape = "ellipse"]
  "switch.sw" [label = "switch.sw", shape = "diamond"]
  "nic.tx0" -> "host.tx"
  "nic.tx0" -> "switch.sw"
}
`
	if diff := cmp.Diff(want, string(planner.DOT(desired(sc), sc.Reaches()))); diff != "" {
		t.Errorf("DOT (-want +got):\n%s", diff)
	}
}

// TestDOTGroupsByMachine: the objects of another machine are a cluster.
func TestDOTGroupsByMachine(t *testing.T) {
	sc := twoReceivers(true)
	sc.Machines = []*config.Machine{{Name: "r1", Reach: config.Reach{Address: "192.0.2.1"}}}
	sc.Hosts[1].Machine = "r1"                                                    // rx1
	sc.Switches = append(sc.Switches, &config.Switch{Name: "sw1", Machine: "r1"}) // its ports' machine
	sc.NICs = []*config.NIC{sc.NICs[0], {Name: "rx10", Host: sc.Hosts[1].Name, Connect: "sw1"}}
	sc.Hosts = sc.Hosts[:2]
	want := `digraph tsolab {
  compound = "true"
  newrank = "true"
  rankdir = "RL"
  "host.tx" [label = "host.tx", shape = "box"]
  "nic.tx0" [label = "nic.tx0", shape = "ellipse"]
  "switch.sw" [label = "switch.sw", shape = "diamond"]
  subgraph "cluster_machine_r1" {
    label = "machine r1 (192.0.2.1)"
    "host.rx1" [label = "host.rx1", shape = "box"]
    "nic.rx10" [label = "nic.rx10", shape = "ellipse"]
    "switch.sw1" [label = "switch.sw1", shape = "diamond"]
  }
  "nic.rx10" -> "host.rx1"
  "nic.rx10" -> "switch.sw1"
  "nic.tx0" -> "host.tx"
  "nic.tx0" -> "switch.sw"
}
`
	if diff := cmp.Diff(want, string(planner.DOT(desired(sc), sc.Reaches()))); diff != "" {
		t.Errorf("DOT (-want +got):\n%s", diff)
	}
}

func TestPlanDOT(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	p := newPlanner(dir, w)
	mustApply(t, p, mustPlan(t, p, twoReceivers(true)))
	sc := twoReceivers(false)
	sc.NICs[2].Host = "rx1" // nic.rx20 is replaced
	sc.Hosts = sc.Hosts[:2] // host.rx2 is deleted
	plan, err := p.Plan(context.Background(), "x", desired(sc))
	if err != nil {
		t.Fatal(err)
	}
	want := `digraph tsolab_plan {
  rankdir = "LR"
  "- host.rx2"
  "-/+ nic.rx20 (create)"
  "-/+ nic.rx20 (delete)"
  "~ nic.tx0"
  "- host.rx2" -> "-/+ nic.rx20 (create)"
  "- host.rx2" -> "~ nic.tx0"
  "-/+ nic.rx20 (delete)" -> "- host.rx2"
  "-/+ nic.rx20 (delete)" -> "-/+ nic.rx20 (create)"
}
`
	if diff := cmp.Diff(want, string(planner.PlanDOT(plan))); diff != "" {
		t.Errorf("PlanDOT (-want +got):\n%s", diff)
	}
	mustApply(t, p, plan)
	if got := mustPlan(t, p, sc).Summary(); got != "No changes." {
		t.Errorf("after applying: %q", got)
	}
}
