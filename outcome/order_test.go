package outcome

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

// The lab's order comes first and only what ran is listed; what the lab
// does not declare follows in the order the results have it.
func TestOrderOf(t *testing.T) {
	lab := &config.Lab{Scenarios: []*config.Scenario{
		{Name: "tso=true", Workloads: []*config.Workload{{Name: "bulk"}, {Name: "rr"}}},
		{Name: "tso=false", Workloads: []*config.Workload{{Name: "bulk"}, {Name: "rr"}}},
		{Name: "never-ran", Workloads: []*config.Workload{{Name: "bulk"}}},
	}}
	run := func(sc, wl string) result.WorkloadResult { return result.WorkloadResult{Scenario: sc, Workload: wl} }
	res := &result.Results{Runs: []result.WorkloadResult{
		run("old", "bulk"), run("tso=false", "extra"), run("tso=false", "bulk"),
		run("tso=true", "rr"), run("tso=true", "bulk"), run("tso=true", "bulk"),
	}}
	want := Order{
		Runs: []result.Key{
			{Scenario: "tso=true", Workload: "bulk"}, {Scenario: "tso=true", Workload: "rr"},
			{Scenario: "tso=false", Workload: "bulk"},
			{Scenario: "old", Workload: "bulk"}, {Scenario: "tso=false", Workload: "extra"},
		},
		Scenarios: []string{"tso=true", "tso=false", "old"},
		Workloads: []string{"bulk", "rr", "extra"},
	}
	if diff := cmp.Diff(want, OrderOf(lab, res)); diff != "" {
		t.Errorf("OrderOf (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Order{Runs: want.Runs[3:4], Scenarios: []string{"old"}, Workloads: []string{"bulk"}},
		OrderOf(nil, &result.Results{Runs: res.Runs[:1]})); diff != "" {
		t.Errorf("OrderOf without a lab (-want +got):\n%s", diff)
	}
}
