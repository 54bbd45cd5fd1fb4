package outcome

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsolab/tsolab/result"
)

// TestCompareEngines pairs two engines' verdicts by expectation, scenario
// and workload, with the medians of the metrics each condition reads, and
// counts which agree; a verdict only one engine judged agrees with
// nothing, and a disagreement shows both sides.
func TestCompareEngines(t *testing.T) {
	runs := func(eng string, bps ...float64) *result.Results {
		r := &result.Results{Engine: eng}
		for i, v := range bps {
			r.Runs = append(r.Runs, result.WorkloadResult{Scenario: "tso=true", Workload: "bulk", Repetition: i,
				Metrics: map[string]float64{"throughput_bps": v, "cpu_tx_pct": v / 1e8}})
		}
		return r
	}
	kernel := runs("kernel", 10e9, 30e9, 20e9)
	sim := runs("sim", 9e9)
	floor := Verdict{Expect: "floor", Scenario: "tso=true", Workload: "bulk", Status: Pass, Metrics: []string{"throughput_bps"}}
	cpu := Verdict{Expect: "cpu", Scenario: "tso=true", Workload: "bulk", Status: Inconclusive, Metrics: []string{"cpu_tx_pct", "throughput_bps"},
		Op: "<", Sides: []Side{{Value: 200}, {Value: 300}}, Detail: "no significant difference (p=0.2, n=4+4)"}
	simCPU := cpu
	simCPU.Status, simCPU.Sides, simCPU.Detail = Pass, []Side{{Value: 90}, {Value: 300}}, ""
	onlySim := Verdict{Expect: "model_only", Scenario: "tso=true", Workload: "bulk", Status: Fail}

	ags := CompareEngines(kernel, []Verdict{floor, cpu}, sim, []Verdict{simCPU, floor, onlySim})
	type row struct {
		Expect      string
		A, B        string
		Agrees      bool
		MetricPairs []MetricPair
	}
	status := func(v *Verdict) string {
		if v == nil {
			return ""
		}
		return v.Status.String()
	}
	var got []row
	for _, ag := range ags {
		got = append(got, row{ag.Expect, status(ag.A), status(ag.B), ag.Agrees(), ag.Metrics})
	}
	want := []row{
		{"floor", "PASS", "PASS", true, []MetricPair{{Metric: "throughput_bps", A: 20e9, B: 9e9, HasA: true, HasB: true}}},
		{"cpu", "INCONCLUSIVE", "PASS", false, []MetricPair{
			{Metric: "cpu_tx_pct", A: 200, B: 90, HasA: true, HasB: true},
			{Metric: "throughput_bps", A: 20e9, B: 9e9, HasA: true, HasB: true}}},
		{"model_only", "", "FAIL", false, nil},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("CompareEngines (-want +got):\n%s", d)
	}

	var buf bytes.Buffer
	WriteComparison(&buf, "kernel", "sim", ags)
	table := "EXPECT      SCENARIO  WORKLOAD  METRIC          KERNEL  SIM  DIFF    KERNEL VERDICT  SIM VERDICT  AGREE\n" +
		"floor       tso=true  bulk      throughput_bps  2e10    9e9  -55.0%  PASS            PASS         yes\n" +
		"cpu         tso=true  bulk      cpu_tx_pct      200     90   -55.0%  INCONCLUSIVE    PASS         NO\n" +
		"                                throughput_bps  2e10    9e9  -55.0%                               \n" +
		"model_only  tso=true  bulk      -               -       -    -       not judged      FAIL         -\n" +
		"\nDISAGREE cpu in scenario tso=true (workload bulk)\n" +
		"  kernel: INCONCLUSIVE  200 < 300  (no significant difference (p=0.2, n=4+4))\n" +
		"  sim: PASS  90 < 300\n" +
		"\nVerdicts: 1 agree, 1 disagree, 1 judged on one engine only.\n"
	if d := cmp.Diff(strings.Split(table, "\n"), strings.Split(buf.String(), "\n")); d != "" {
		t.Errorf("WriteComparison (-want +got):\n%s", d)
	}
}
