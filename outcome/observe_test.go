package outcome

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

// TestObserve puts each observed figure beside the median of its cell's
// runs, a relative figure beside the ratio of two cells' medians, marked
// fitted or predicted; a figure whose cell did not run is left out.
func TestObserve(t *testing.T) {
	lab := testLab()
	lab.Observed = []*config.Observed{
		{Name: "abs", Scenario: "tso=true,mtu=1500", Workload: "bulk", Values: map[string]float64{"throughput_bps": 4e9}},
		{Name: "gap", Scenario: "tso=true,mtu=1500", RelativeTo: "tso=false,mtu=1500", Workload: "bulk", Values: map[string]float64{"throughput_bps": 2}},
		{Name: "not_run", Scenario: "tso=true,mtu=9000", Workload: "bulk", Values: map[string]float64{"throughput_bps": 6e9}},
	}
	lab.Calibrations = []*config.Calibration{{CPU: "modern", Fit: []string{"gap"}}}
	res := &result.Results{}
	for i, v := range []float64{3e9, 5e9, 4.6e9} {
		res.Runs = append(res.Runs, result.WorkloadResult{Scenario: "tso=true,mtu=1500", Workload: "bulk", Repetition: i, Metrics: map[string]float64{"throughput_bps": v}})
	}
	res.Runs = append(res.Runs, result.WorkloadResult{Scenario: "tso=false,mtu=1500", Workload: "bulk", Metrics: map[string]float64{"throughput_bps": 2e9}})
	want := []result.Observation{
		{Observed: "abs", Scenario: "tso=true,mtu=1500", Workload: "bulk", Metric: "throughput_bps", Value: 4e9, Measured: 4.6e9, Error: 4.6e9/4e9 - 1, Role: "predicted"},
		{Observed: "gap", Scenario: "tso=true,mtu=1500", RelativeTo: "tso=false,mtu=1500", Workload: "bulk", Metric: "throughput_bps", Value: 2, Measured: 2.3, Error: 2.3/2 - 1, Role: "fitted"},
	}
	if d := cmp.Diff(want, Observe(lab, res), cmpopts.EquateApprox(0, 1e-12)); d != "" {
		t.Errorf("Observe (-want +got):\n%s", d)
	}
}
