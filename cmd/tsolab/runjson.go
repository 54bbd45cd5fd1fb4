package main

import (
	"fmt"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/outcome"
	"github.com/tsolab/tsolab/result"
	"github.com/tsolab/tsolab/view"
)

// jsonTest is `-json -` of run and test: one JSON object per line on
// stdout, in the view package's JSON vocabulary (the plan and apply
// messages of each scenario, then this file's workload, results, verdict
// and summary messages). docs/json-format.md documents every type.
type jsonTest struct {
	v *view.JSON
}

var _ testView = jsonTest{}

// jsonRun names one run of one workload.
type jsonRun struct {
	Scenario   string `json:"scenario"`
	Workload   string `json:"workload"`
	Repetition int    `json:"repetition"` // 0-based
	Repeat     int    `json:"repeat"`     // runs per scenario and workload (-repeat); with -confidence the most
	// AtMost says Repeat is a cap: -confidence stops a workload's runs
	// once its interval is tight enough.
	AtMost bool `json:"at_most,omitempty"`
}

type jsonProgress struct {
	ElapsedS      float64 `json:"elapsed_s"`
	PlannedS      float64 `json:"planned_s"`
	ThroughputBps float64 `json:"throughput_bps"`
}

type jsonVerdict struct {
	Expect     string         `json:"expect"`
	Scenario   string         `json:"scenario"`
	Workload   string         `json:"workload"`
	Status     string         `json:"status"` // PASS, FAIL, INCONCLUSIVE, ERROR
	Message    string         `json:"message,omitempty"`
	Expression string         `json:"expression"`
	Op         string         `json:"op,omitempty"`
	Sides      []outcome.Side `json:"sides,omitempty"`
	Measured   string         `json:"measured,omitempty"`
	Detail     string         `json:"detail,omitempty"`
	// BaselineChanged: what the baseline ran on that this run did not.
	BaselineChanged []string        `json:"baseline_changed,omitempty"`
	Range           *view.JSONRange `json:"range,omitempty"`
}

type jsonSummary struct {
	Pass         int  `json:"pass"`
	Fail         int  `json:"fail"`
	Inconclusive int  `json:"inconclusive"`
	Error        int  `json:"error"`
	Strict       bool `json:"strict"`
	ExitCode     int  `json:"exit_code"`
}

func (r jsonRun) label() string {
	s := r.Scenario + " / " + r.Workload
	if r.Repeat > 1 {
		s += fmt.Sprintf(" (run %d of %d)", r.Repetition+1, r.Repeat)
	}
	return s
}

func (s jsonTest) scenarioStart(scenario string, kind config.EngineKind) {
	s.v.Message("info", "scenario_start", "Scenario "+scenario, map[string]any{
		"scenario": scenario, "engine": string(kind),
	})
}

// applyView shows the plan and apply of each scenario once, in its
// first round.
func (s jsonTest) applyView(v view.View, _ *config.Scenario, rep, _ int, _ bool) (view.View, bool) {
	return v, rep > 0
}

func (s jsonTest) workload(r jsonRun) workloadView {
	s.v.Message("info", "workload_start", "Running "+r.label(), map[string]any{"run": r})
	return &jsonWorkload{s: s, run: r}
}

// jsonWorkload is one run's progress and end as JSON messages.
type jsonWorkload struct {
	s   jsonTest
	run jsonRun
}

func (w *jsonWorkload) update(p engine.Progress) {
	r := w.run
	w.s.v.Message("info", "workload_progress",
		fmt.Sprintf("%s: %s of %s, %s", r.label(), p.Elapsed.Round(100*time.Millisecond), p.Planned.Round(100*time.Millisecond), formatBps(p.ThroughputBps)),
		map[string]any{"run": r, "progress": jsonProgress{
			ElapsedS: p.Elapsed.Seconds(), PlannedS: p.Planned.Seconds(), ThroughputBps: p.ThroughputBps,
		}})
}

func (w *jsonWorkload) done(res *result.WorkloadResult, wall time.Duration) {
	if res == nil {
		return
	}
	r := w.run
	w.s.v.Message("info", "workload_complete",
		fmt.Sprintf("%s: %s in %.2fs of workload time", r.label(), formatBps(res.Metrics[result.MetricThroughputBps]), res.Metrics[result.MetricDurationS]),
		map[string]any{"run": r, "wall_s": wall.Seconds(), "result": res})
}

// confidence: the stream carries the note in the results, not a line.
func (jsonTest) confidence(string, string, string) {}

func (jsonTest) destroying() {}

func (s jsonTest) results(res *result.Results) {
	s.v.Message("info", "results", fmt.Sprintf("Results: %d runs of lab %s on the %s engine", len(res.Runs), res.Lab, res.Engine),
		map[string]any{"results": res})
}

func (s jsonTest) judged(j judgement) error {
	s.verdicts(j.verdicts)
	s.v.Diagnostics(j.diags)
	return nil
}

func (s jsonTest) verdicts(vs []outcome.Verdict) {
	for _, v := range vs {
		jv := jsonVerdict{
			Expect: v.Expect, Scenario: v.Scenario, Workload: v.Workload, Status: v.Status.String(),
			Message: v.Message, Expression: v.Expression, Op: v.Op, Sides: v.Sides, Measured: v.Measured, Detail: v.Detail,
			BaselineChanged: v.BaselineChanged,
		}
		if v.Range.Filename != "" {
			jv.Range = view.NewJSONRange(v.Range)
		}
		level := "info"
		switch v.Status {
		case outcome.Fail, outcome.Error:
			level = "error"
		case outcome.Inconclusive:
			level = "warn"
		}
		s.v.Message(level, "verdict", fmt.Sprintf("%s %s in scenario %s (workload %s)", v.Status, v.Expect, v.Scenario, v.Workload),
			map[string]any{"verdict": jv})
	}
}

func (s jsonTest) summary(vs []outcome.Verdict, strict bool, code int) {
	c := outcome.Count(vs)
	level := "info"
	if code != outcome.ExitOK {
		level = "error"
	}
	s.v.Message(level, "test_summary",
		fmt.Sprintf("Expectations: %d passed, %d failed, %d inconclusive, %d errors.", c.Pass, c.Fail, c.Inconclusive, c.Error),
		map[string]any{"summary": jsonSummary{Pass: c.Pass, Fail: c.Fail, Inconclusive: c.Inconclusive, Error: c.Error, Strict: strict, ExitCode: code}})
}

func (s jsonTest) errored(err error) {
	s.v.Message("error", "run_errored", "Error: "+err.Error(), map[string]any{"error": err.Error()})
}
