package outcome

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/result"
)

// seed001 is the first table of seed 001 (2.6.12-rc4): Gb/s and sender
// CPU per scenario, workload bulk, one run each.
func seed001() [][]result.WorkloadResult {
	row := func(scenario string, gbps, cpu float64) []result.WorkloadResult {
		return runs(scenario, "bulk", allMetrics(map[string]float64{
			result.MetricThroughputBps: gbps * 1e9,
			result.MetricCPUTxPerGbit:  cpu / gbps,
		}), result.MetricCPUTxPct, cpu)
	}
	return [][]result.WorkloadResult{
		row("tso=true,mtu=1500", 4.0, 47),
		row("tso=true,mtu=9000", 6.1, 35),
		row("tso=false,mtu=1500", 2.5, 55),
		row("tso=false,mtu=9000", 5.3, 40),
	}
}

// cpuRuns is workload bulk in one scenario with the given sender CPU, one
// run per value.
func cpuRuns(scenario string, cpu ...float64) []result.WorkloadResult {
	return runs(scenario, "bulk", allMetrics(nil), result.MetricCPUTxPct, cpu...)
}

// row is what a test checks of a verdict.
type row struct {
	Scenario string
	Status   Status
	Detail   string
	Sides    []Side
}

func rows(vs []Verdict, withSides bool) []row {
	var out []row
	for _, v := range vs {
		r := row{Scenario: v.Scenario, Status: v.Status, Detail: v.Detail}
		if withSides {
			r.Sides = v.Sides
		}
		out = append(out, r)
	}
	return out
}

func side(expr string, value float64, runs int) Side {
	return Side{Expr: expr, Value: value, Runs: runs}
}

func sideCI(expr string, value float64, runs int, lo, hi float64) Side {
	return Side{Expr: expr, Value: value, Runs: runs, CI: &[2]float64{lo, hi}}
}

const oneRun = "1 run: no confidence interval"

func TestEvaluate(t *testing.T) {
	inf := math.Inf(1) // benchmath needs 6 runs for a finite 95% interval
	tests := []struct {
		name      string
		when      string
		condition string
		workload  string // default "bulk"
		results   [][]result.WorkloadResult
		baseline  [][]result.WorkloadResult // nil: no baseline file
		withSides bool
		want      []row
		wantDiags []string // substrings, one per diagnostic
	}{
		{
			name:      "threshold passes and fails per scenario",
			condition: "result.cpu_tx_pct < 50",
			results:   seed001(),
			withSides: true,
			want: []row{
				{"tso=true,mtu=1500", Pass, oneRun, []Side{side("result.cpu_tx_pct", 47, 1), side("50", 50, 0)}},
				{"tso=true,mtu=9000", Pass, oneRun, []Side{side("result.cpu_tx_pct", 35, 1), side("50", 50, 0)}},
				{"tso=false,mtu=1500", Fail, oneRun, []Side{side("result.cpu_tx_pct", 55, 1), side("50", 50, 0)}},
				{"tso=false,mtu=9000", Pass, oneRun, []Side{side("result.cpu_tx_pct", 40, 1), side("50", 50, 0)}},
			},
		},
		{
			name:      "when reads the engine the results come from (sim here)",
			when:      `matrix.tso && engine == "sim"`,
			condition: "result.cpu_tx_pct < 50",
			results:   seed001(),
			want: []row{
				{"tso=true,mtu=1500", Pass, oneRun, nil},
				{"tso=true,mtu=9000", Pass, oneRun, nil},
			},
		},
		{
			name:      "an expectation for another engine is not judged",
			when:      `engine == "kernel"`,
			condition: "result.cpu_tx_pct < 50",
			results:   seed001(),
		},
		{
			name:      "when filters scenarios; scenario() reads the sibling",
			when:      "matrix.tso",
			condition: "result.cpu_tx_pct < scenario({tso = false}).cpu_tx_pct",
			results:   seed001(),
			withSides: true,
			want: []row{
				{"tso=true,mtu=1500", Pass, oneRun, []Side{side("result.cpu_tx_pct", 47, 1), side("scenario({tso = false}).cpu_tx_pct", 55, 1)}},
				{"tso=true,mtu=9000", Pass, oneRun, []Side{side("result.cpu_tx_pct", 35, 1), side("scenario({tso = false}).cpu_tx_pct", 40, 1)}},
			},
		},
		{
			name:      "when reads var and matrix",
			when:      "var.streams == 8 && matrix.mtu == 9000",
			condition: "result.throughput_bps > 5.5e9",
			results:   seed001(),
			want: []row{
				{Scenario: "tso=true,mtu=9000", Status: Pass, Detail: oneRun},
				{Scenario: "tso=false,mtu=9000", Status: Fail, Detail: oneRun},
			},
		},
		{
			name:      "scenario() changes two axes and converts values",
			when:      `matrix.tso && matrix.mtu == 9000`,
			condition: `(result.throughput_bps > scenario({tso = "false", mtu = "1500"}).throughput_bps * 2)`,
			results:   seed001(),
			withSides: true,
			want: []row{
				{"tso=true,mtu=9000", Pass, oneRun, []Side{
					side("result.throughput_bps", 6.1e9, 1),
					side(`scenario({tso = "false", mtu = "1500"}).throughput_bps * 2`, 5e9, 1),
				}},
			},
		},
		{
			name:      "a condition that is not a comparison",
			when:      "!matrix.tso",
			condition: "result.cpu_tx_pct > 50 && result.throughput_bps < 3e9",
			results:   seed001(),
			want: []row{
				{Scenario: "tso=false,mtu=1500", Status: Pass, Detail: oneRun},
				{Scenario: "tso=false,mtu=9000", Status: Fail, Detail: oneRun},
			},
		},
		{
			name:      "scenario() with a key that is not an axis",
			when:      "matrix.mtu == 1500 && matrix.tso",
			condition: "result.cpu_tx_pct < scenario({gro = false}).cpu_tx_pct",
			results:   seed001(),
			want: []row{{
				Scenario: "tso=true,mtu=1500", Status: Error,
				Detail: `Invalid function argument: Invalid value for "matrix" parameter: "gro" is not a matrix axis; the axes are: tso, mtu.`,
			}},
			wantDiags: []string{`"gro" is not a matrix axis; the axes are: tso, mtu`},
		},
		{
			name:      "scenario() that matches no scenario",
			when:      "matrix.mtu == 1500 && matrix.tso",
			condition: "result.cpu_tx_pct < scenario({mtu = 4000}).cpu_tx_pct",
			results:   seed001(),
			want: []row{{
				Scenario: "tso=true,mtu=1500", Status: Error,
				Detail: `Invalid function argument: Invalid value for "matrix" parameter: no scenario has tso=true,mtu=4000; the scenarios are: tso=true,mtu=1500; tso=true,mtu=9000; tso=false,mtu=1500; tso=false,mtu=9000.`,
			}},
			wantDiags: []string{"no scenario has tso=true,mtu=4000"},
		},
		{
			name:      "scenario() of a scenario that was not run is not judged; unrun scenarios are skipped",
			condition: "result.cpu_tx_pct < scenario({tso = false}).cpu_tx_pct",
			results:   seed001()[:3],
			want: []row{
				{Scenario: "tso=true,mtu=1500", Status: Pass, Detail: oneRun},
				{
					Scenario: "tso=true,mtu=9000", Status: Inconclusive,
					Detail: "not judged: the condition compares with scenario tso=false,mtu=9000, which did not run here (a tsolab test that runs both judges it)",
				},
				{Scenario: "tso=false,mtu=1500", Status: Fail, Detail: oneRun},
			},
		},
		{
			name:      "baseline without a baseline file",
			when:      "matrix.tso && matrix.mtu == 1500",
			condition: "result.throughput_bps >= baseline.throughput_bps",
			results:   seed001(),
			want: []row{{
				Scenario: "tso=true,mtu=1500", Status: Error,
				Detail: `No baseline results: expect "e" reads baseline, but no baseline was given: pass -baseline FILE with the -json results of an earlier run.`,
			}},
			wantDiags: []string{"No baseline results"},
		},
		{
			name:      "baseline passes and fails",
			when:      "matrix.tso",
			condition: "result.throughput_bps >= baseline.throughput_bps * 0.95",
			results:   seed001(),
			baseline: [][]result.WorkloadResult{
				// Super TSO v2: 3.5 at 1500 (a regression of 12.5%), 5.7 at 9000.
				runs("tso=true,mtu=1500", "bulk", allMetrics(nil), result.MetricThroughputBps, 3.5e9),
				runs("tso=true,mtu=9000", "bulk", allMetrics(nil), result.MetricThroughputBps, 6.5e9),
			},
			withSides: true,
			want: []row{
				{"tso=true,mtu=1500", Pass, oneRun, []Side{side("result.throughput_bps", 4e9, 1), side("baseline.throughput_bps * 0.95", 3.325e9, 1)}},
				{"tso=true,mtu=9000", Fail, oneRun, []Side{side("result.throughput_bps", 6.1e9, 1), side("baseline.throughput_bps * 0.95", 6.175e9, 1)}},
			},
		},
		{
			name:      "baseline lacking the scenario",
			when:      "matrix.tso && matrix.mtu == 9000",
			condition: "result.throughput_bps >= baseline.throughput_bps",
			results:   seed001(),
			baseline:  [][]result.WorkloadResult{runs("tso=true,mtu=1500", "bulk", allMetrics(nil), result.MetricThroughputBps, 3.5e9)},
			want: []row{{
				Scenario: "tso=true,mtu=9000", Status: Error,
				Detail: `Scenario missing from the baseline: expect "e" reads baseline, but the baseline has no run of workload "bulk" in scenario tso=true,mtu=9000; it has: bulk in tso=true,mtu=1500. Record the baseline with the same matrix and workloads.`,
			}},
			wantDiags: []string{"in scenario tso=true,mtu=9000"},
		},
		{
			name:      "a condition that is not a bool",
			when:      "matrix.tso && matrix.mtu == 1500",
			condition: "result.cpu_tx_pct",
			results:   seed001(),
			want: []row{{
				Scenario: "tso=true,mtu=1500", Status: Error,
				Detail: "Invalid condition: The condition must be true or false; it is a number: compare it, e.g. result.cpu_tx_pct < 50.",
			}},
			wantDiags: []string{"Invalid condition"},
		},
		{
			name:      "a metric that does not exist",
			when:      "matrix.tso && matrix.mtu == 1500",
			condition: "result.goodput < 1",
			results:   seed001(),
			want: []row{{
				Scenario: "tso=true,mtu=1500", Status: Error,
				Detail: `Unsupported attribute: This object does not have an attribute named "goodput".`,
			}},
			wantDiags: []string{"goodput"},
		},
		{
			name:      "a workload that did not run",
			when:      "matrix.tso && matrix.mtu == 1500",
			workload:  "tbench",
			condition: "result.transactions_per_s > 1000",
			results:   seed001(),
			want: []row{{
				Scenario: "tso=true,mtu=1500", Status: Error,
				Detail: `No results for the expectation's workload: expect "e" reads workload "tbench", but scenario tso=true,mtu=1500 has no run of it; the workloads that ran there are: bulk.`,
			}},
			wantDiags: []string{`reads workload "tbench"`},
		},
		{
			name:      "repeats: clearly separated samples are a significant difference",
			when:      "matrix.tso",
			condition: "result.cpu_tx_pct < scenario({tso = false}).cpu_tx_pct",
			results: [][]result.WorkloadResult{
				cpuRuns("tso=true,mtu=1500", 44, 40, 41, 45, 42, 43),
				cpuRuns("tso=false,mtu=1500", 50, 51, 55, 52, 53, 54),
			},
			withSides: true,
			want: []row{{
				"tso=true,mtu=1500", Pass, "significant difference (p=0.0022, n=6+6)",
				[]Side{
					sideCI("result.cpu_tx_pct", 42.5, 6, 40, 45),
					sideCI("scenario({tso = false}).cpu_tx_pct", 52.5, 6, 50, 55),
				},
			}},
		},
		{
			name:      "repeats: a significant difference the wrong way fails",
			when:      "matrix.tso",
			condition: "result.cpu_tx_pct > scenario({tso = false}).cpu_tx_pct",
			results: [][]result.WorkloadResult{
				cpuRuns("tso=true,mtu=1500", 44, 40, 41, 45, 42, 43),
				cpuRuns("tso=false,mtu=1500", 50, 51, 55, 52, 53, 54),
			},
			want: []row{{Scenario: "tso=true,mtu=1500", Status: Fail, Detail: "significant difference (p=0.0022, n=6+6)"}},
		},
		{
			name:      "repeats: overlapping samples make a strict ordering inconclusive",
			when:      "matrix.tso",
			condition: "result.cpu_tx_pct < scenario({tso = false}).cpu_tx_pct",
			results: [][]result.WorkloadResult{
				cpuRuns("tso=true,mtu=1500", 40, 42, 44, 46, 48, 50),
				cpuRuns("tso=false,mtu=1500", 41, 43, 45, 47, 49, 51),
			},
			withSides: true,
			want: []row{{
				"tso=true,mtu=1500", Inconclusive, "no significant difference (p=0.7, n=6+6); < needs a real difference",
				[]Side{
					sideCI("result.cpu_tx_pct", 45, 6, 40, 50),
					sideCI("scenario({tso = false}).cpu_tx_pct", 46, 6, 41, 51),
				},
			}},
		},
		{
			name:      "repeats: overlapping samples pass <= when the medians satisfy it",
			when:      "matrix.tso",
			condition: "result.cpu_tx_pct <= scenario({tso = false}).cpu_tx_pct",
			results: [][]result.WorkloadResult{
				cpuRuns("tso=true,mtu=1500", 40, 42, 44, 46, 48, 50),
				cpuRuns("tso=false,mtu=1500", 41, 43, 45, 47, 49, 51),
			},
			want: []row{{Scenario: "tso=true,mtu=1500", Status: Pass, Detail: "no significant difference (p=0.7, n=6+6)"}},
		},
		{
			name:      "repeats: overlapping samples violating >= on medians are inconclusive",
			when:      "matrix.tso",
			condition: "result.cpu_tx_pct >= scenario({tso = false}).cpu_tx_pct",
			results: [][]result.WorkloadResult{
				cpuRuns("tso=true,mtu=1500", 40, 42, 44, 46, 48, 50),
				cpuRuns("tso=false,mtu=1500", 41, 43, 45, 47, 49, 51),
			},
			want: []row{{
				Scenario: "tso=true,mtu=1500", Status: Inconclusive,
				Detail: "no significant difference (p=0.7, n=6+6); the medians violate >= by less than the noise",
			}},
		},
		{
			name:      "repeats: a tolerance around an unchanged metric passes",
			when:      "matrix.tso",
			condition: "result.cpu_tx_pct <= scenario({tso = false}).cpu_tx_pct * 1.5",
			results: [][]result.WorkloadResult{
				cpuRuns("tso=true,mtu=1500", 40, 60, 44, 46, 80, 50),
				cpuRuns("tso=false,mtu=1500", 41, 30, 45, 47, 49, 51),
			},
			withSides: true,
			want: []row{{
				"tso=true,mtu=1500", Pass, "no significant difference (p=0.18, n=6+6)",
				[]Side{
					sideCI("result.cpu_tx_pct", 48, 6, 40, 80),
					sideCI("scenario({tso = false}).cpu_tx_pct * 1.5", 69, 6, 45, 76.5),
				},
			}},
		},
		{
			name:      "repeats: five runs have no finite interval",
			when:      "matrix.tso",
			condition: "result.cpu_tx_pct < scenario({tso = false}).cpu_tx_pct",
			results: [][]result.WorkloadResult{
				cpuRuns("tso=true,mtu=1500", 40, 41, 42, 43, 44),
				cpuRuns("tso=false,mtu=1500", 50, 51, 52, 53, 54),
			},
			withSides: true,
			want: []row{{
				"tso=true,mtu=1500", Pass, "significant difference (p=0.0079, n=5+5)",
				[]Side{
					sideCI("result.cpu_tx_pct", 42, 5, -inf, 44),
					sideCI("scenario({tso = false}).cpu_tx_pct", 52, 5, -inf, 54),
				},
			}},
		},
		{
			name:      "repeats: three runs can never show a difference",
			when:      "matrix.tso",
			condition: "result.cpu_tx_pct < scenario({tso = false}).cpu_tx_pct",
			results: [][]result.WorkloadResult{
				cpuRuns("tso=true,mtu=1500", 40, 41, 42),
				cpuRuns("tso=false,mtu=1500", 50, 51, 52),
			},
			want: []row{{
				Scenario: "tso=true,mtu=1500", Status: Inconclusive,
				Detail: "no significant difference (p=0.1, n=3+3): need >= 4 samples to detect a difference at alpha level 0.05; < needs a real difference",
			}},
		},
		{
			name:      "repeats against a constant are judged on medians",
			when:      "matrix.tso",
			condition: "result.cpu_tx_pct < 50",
			results:   [][]result.WorkloadResult{cpuRuns("tso=true,mtu=1500", 40, 60, 44, 46, 48, 42)},
			withSides: true,
			want: []row{{
				"tso=true,mtu=1500", Pass, "one side reads no results: judged on medians of 6 runs, no significance test",
				[]Side{sideCI("result.cpu_tx_pct", 45, 6, 40, 60), side("50", 50, 0)},
			}},
		},
		{
			name:      "repeats against a single run",
			when:      "matrix.tso",
			condition: "result.cpu_tx_pct < scenario({tso = false}).cpu_tx_pct",
			results: [][]result.WorkloadResult{
				cpuRuns("tso=true,mtu=1500", 40, 41, 42, 43, 44, 45),
				cpuRuns("tso=false,mtu=1500", 50),
			},
			want: []row{{Scenario: "tso=true,mtu=1500", Status: Pass, Detail: "1 run on one side (n=6+1): no confidence interval, judged on medians"}},
		},
		{
			name:      "repeats: a condition that is not a single comparison is judged on medians",
			when:      "matrix.tso",
			condition: "result.cpu_tx_pct < 50 && result.cpu_tx_pct < scenario({tso = false}).cpu_tx_pct",
			results: [][]result.WorkloadResult{
				cpuRuns("tso=true,mtu=1500", 40, 42, 44, 46, 48, 50),
				cpuRuns("tso=false,mtu=1500", 41, 43, 45, 47, 49, 51),
			},
			want: []row{{
				Scenario: "tso=true,mtu=1500", Status: Pass,
				Detail: "the condition is not a comparison of numbers: judged on medians of 6 runs, no significance test",
			}},
		},
		{
			name:      "repeats: == is not an ordering",
			when:      "matrix.tso",
			condition: "result.cpu_tx_pct == scenario({tso = false}).cpu_tx_pct",
			results: [][]result.WorkloadResult{
				cpuRuns("tso=true,mtu=1500", 40, 42, 44, 46, 48, 50),
				cpuRuns("tso=false,mtu=1500", 40, 42, 44, 46, 48, 50),
			},
			want: []row{{Scenario: "tso=true,mtu=1500", Status: Pass, Detail: "== is not an ordering: judged on medians of 6 runs"}},
		},
		{
			name:      "a when that is not a bool",
			when:      "matrix.mtu",
			condition: "result.cpu_tx_pct < 50",
			results:   seed001()[:1],
			want: []row{{
				Scenario: "tso=true,mtu=1500", Status: Error,
				Detail: "Invalid when: The when must be true or false; it is a number: compare it, e.g. matrix.mtu == 9000.",
			}},
			wantDiags: []string{"Invalid when"},
		},
		{
			name:      "repeats against a baseline",
			condition: "result.throughput_bps >= baseline.throughput_bps",
			results: [][]result.WorkloadResult{
				runs("tso=true,mtu=1500", "bulk", allMetrics(nil), result.MetricThroughputBps, 3.9e9, 4.0e9, 4.1e9, 4.0e9, 3.95e9, 4.05e9),
			},
			baseline: [][]result.WorkloadResult{
				runs("tso=true,mtu=1500", "bulk", allMetrics(nil), result.MetricThroughputBps, 3.4e9, 3.5e9, 3.6e9, 3.5e9, 3.45e9, 3.55e9),
			},
			want: []row{{Scenario: "tso=true,mtu=1500", Status: Pass, Detail: "significant difference (p=0.0022, n=6+6)"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lab := testLab()
			workload := tt.workload
			if workload == "" {
				workload = "bulk"
			}
			addExpect(t, lab, "e", workload, tt.when, tt.condition)
			var base *result.Results
			if tt.baseline != nil {
				base = results(tt.baseline...)
			}
			got, diags := Evaluate(lab, results(tt.results...), base)
			if diff := cmp.Diff(tt.want, rows(got, tt.withSides)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			checkDiags(t, diags, tt.wantDiags)
			for _, v := range got {
				if v.Expression != tt.condition {
					t.Errorf("Expression = %q, want %q", v.Expression, tt.condition)
				}
				if v.Range.Filename != expectFile {
					t.Errorf("Range = %s, want one in %s", v.Range, expectFile)
				}
			}
		})
	}
}

func checkDiags(t *testing.T, diags hcl.Diagnostics, want []string) {
	t.Helper()
	if len(diags) != len(want) {
		t.Fatalf("got %d diagnostics, want %d: %s", len(diags), len(want), diags)
	}
	for i, w := range want {
		d := diags[i]
		if d.Severity != hcl.DiagError {
			t.Errorf("diagnostic %d: severity %v, want error", i, d.Severity)
		}
		if got := d.Summary + ": " + d.Detail; !strings.Contains(got, w) {
			t.Errorf("diagnostic %d = %q, want it to contain %q", i, got, w)
		}
		if d.Subject == nil || d.Subject.Filename != expectFile {
			t.Errorf("diagnostic %d has subject %v, want a range in %s", i, d.Subject, expectFile)
		}
	}
}

// BenchmarkEvaluate judges a scenario() comparison over the four
// scenarios with 10 runs each: the cost of -repeat 10 on a 2x2 matrix.
func BenchmarkEvaluate(b *testing.B) {
	lab := testLab()
	addExpect(b, lab, "e", "bulk", "matrix.tso", "result.cpu_tx_pct < scenario({tso = false}).cpu_tx_pct")
	var rs [][]result.WorkloadResult
	for _, sc := range lab.Scenarios {
		cpu := make([]float64, 10)
		for i := range cpu {
			cpu[i] = 40 + float64(i)
		}
		rs = append(rs, cpuRuns(sc.Name, cpu...))
	}
	res := results(rs...)
	b.ResetTimer()
	for b.Loop() {
		if _, diags := Evaluate(lab, res, nil); diags.HasErrors() {
			b.Fatal(diags)
		}
	}
}

// TestNotRunNamesTheScenario: a verdict not judged because its sibling did
// not run names that scenario, for the CLI's command that judges it, and
// only that verdict does.
func TestNotRunNamesTheScenario(t *testing.T) {
	lab := testLab()
	addExpect(t, lab, "e", "bulk", "", "result.cpu_tx_pct < scenario({tso = false}).cpu_tx_pct")
	got, _ := Evaluate(lab, results(seed001()[:3]...), nil)
	want := map[string]string{"tso=true,mtu=1500": "", "tso=true,mtu=9000": "tso=false,mtu=9000", "tso=false,mtu=1500": ""}
	if len(got) != len(want) {
		t.Fatalf("got %d verdicts, want %d", len(got), len(want))
	}
	for _, v := range got {
		if v.NotRun != want[v.Scenario] {
			t.Errorf("scenario %s: NotRun = %q, want %q", v.Scenario, v.NotRun, want[v.Scenario])
		}
	}
}

// TestDiagTextOnce: a mistake that each evaluation of a condition reports
// (the medians, then every run) is said once.
func TestDiagTextOnce(t *testing.T) {
	d := &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unsupported attribute", Detail: `This object does not have an attribute named "acks_quick".`}
	other := &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Other", Detail: "x."}
	got := diagText(hcl.Diagnostics{d, d, other, d})
	want := `Unsupported attribute: This object does not have an attribute named "acks_quick". Other: x.`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestMeasuredCompound: a condition joined with && and || shows each of
// its comparisons with its operands' values, the rest as true or false.
func TestMeasuredCompound(t *testing.T) {
	lab := testLab()
	addExpect(t, lab, "e", "bulk", "matrix.tso && matrix.mtu == 1500",
		"result.throughput_bps >= 1e9 && (result.cpu_tx_pct < scenario({tso = false}).cpu_tx_pct || !matrix.tso)")
	got, _ := Evaluate(lab, results(seed001()...), nil)
	if len(got) != 1 {
		t.Fatalf("got %d verdicts, want 1", len(got))
	}
	want := "4e9 >= 1e9 && (47 < 55 || !true)"
	if got[0].Measured != want {
		t.Errorf("Measured = %q, want %q", got[0].Measured, want)
	}
	if m := measuredText(got[0]); m != want {
		t.Errorf("the table's MEASURED = %q, want %q", m, want)
	}
}

// TestVerdictNamesItsCondition: a verdict points at its condition's line
// (not the expect block's) and lists the metrics the condition reads,
// which the engines' comparison shows beside each verdict.
func TestVerdictNamesItsCondition(t *testing.T) {
	lab := testLab()
	ex := addExpect(t, lab, "e", "bulk", "", "result.cpu_tx_pct < scenario({tso = false}).cpu_tx_pct && result.throughput_bps > 1")
	ex.Range = hcl.Range{Filename: expectFile, Start: hcl.Pos{Line: 1, Column: 1}, End: hcl.Pos{Line: 1, Column: 2}}
	got, diags := Evaluate(lab, results(seed001()...), nil)
	if diags.HasErrors() || len(got) == 0 {
		t.Fatalf("got %d verdicts, %s", len(got), diags)
	}
	for _, v := range got {
		if want := []string{"cpu_tx_pct", "throughput_bps"}; !cmp.Equal(v.Metrics, want) {
			t.Errorf("scenario %s: metrics %v, want %v", v.Scenario, v.Metrics, want)
		}
		if v.Range != ex.Condition.Range() {
			t.Errorf("scenario %s: range %v, want the condition's %v", v.Scenario, v.Range, ex.Condition.Range())
		}
	}
}

// TestBaselineNotReadNotCounted: a side that does not read baseline
// counts the current runs only, even when a baseline file of fewer runs
// was given (for another expectation).
func TestBaselineNotReadNotCounted(t *testing.T) {
	lab := testLab()
	addExpect(t, lab, "e", "bulk", "", "result.throughput_bps >= 3e9")
	res := results(runs("tso=true,mtu=1500", "bulk", allMetrics(nil), result.MetricThroughputBps, 3.9e9, 4.0e9, 4.1e9, 4.0e9, 3.95e9, 4.05e9))
	base := results(runs("tso=true,mtu=1500", "bulk", allMetrics(nil), result.MetricThroughputBps, 3.5e9))
	got, diags := Evaluate(lab, res, base)
	if diags.HasErrors() || len(got) != 1 || len(got[0].Sides) == 0 {
		t.Fatalf("got %+v, %s; want one verdict with sides", got, diags)
	}
	if s := got[0].Sides[0]; s.Runs != 6 || s.CI == nil {
		t.Errorf("side %s: %d runs, interval %v; want 6 runs with an interval", s.Expr, s.Runs, s.CI)
	}
}
