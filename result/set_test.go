package result

import (
	"slices"
	"testing"
)

// TestIndex: runs are grouped by scenario and workload, each group in
// repetition order whatever order the file holds them in; no results
// give no groups.
func TestIndex(t *testing.T) {
	res := &Results{Runs: []WorkloadResult{
		{Scenario: "a", Workload: "bulk", Kind: "stream", Repetition: 1, Metrics: map[string]float64{MetricThroughputBps: 2}},
		{Scenario: "b", Workload: "bulk", Kind: "stream", Repetition: 0, Metrics: map[string]float64{MetricThroughputBps: 9}},
		{Scenario: "a", Workload: "bulk", Kind: "stream", Repetition: 0, Metrics: map[string]float64{MetricThroughputBps: 1}},
	}}
	idx := Index(res)
	if len(idx) != 2 {
		t.Fatalf("got %d sets, want 2", len(idx))
	}
	a := idx[Key{"a", "bulk"}]
	if a == nil || a.Kind != "stream" || !slices.Equal(a.Values(MetricThroughputBps), []float64{1, 2}) {
		t.Errorf("set a/bulk = %+v, want stream runs with throughput 1, 2 in repetition order", a)
	}
	if got := Index(nil); got == nil || len(got) != 0 {
		t.Errorf("Index(nil) = %v, want an empty map", got)
	}
}
