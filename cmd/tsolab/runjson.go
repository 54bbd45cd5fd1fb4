package main

import (
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/outcome"
	"github.com/tsolab/tsolab/view"
)

// runStream is `-json -` of run and test: one JSON object per line on
// stdout, in the view package's JSON vocabulary (the plan and apply
// messages of each scenario, then this file's workload, results, verdict
// and summary messages). docs/json-format.md documents every type.
type runStream struct {
	v *view.JSON
}

func newRunStream(w io.Writer) *runStream {
	return &runStream{v: view.NewJSON(w, view.JSONOptions{Version: version})}
}

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

type jsonPos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

type jsonRange struct {
	Filename string  `json:"filename"`
	Start    jsonPos `json:"start"`
	End      jsonPos `json:"end"`
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
	BaselineChanged []string   `json:"baseline_changed,omitempty"`
	Range           *jsonRange `json:"range,omitempty"`
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

func (s *runStream) scenarioStart(scenario, engineKind string) {
	s.v.Message("info", "scenario_start", "Scenario "+scenario, map[string]any{
		"scenario": scenario, "engine": engineKind,
	})
}

func (s *runStream) workloadStart(r jsonRun) {
	s.v.Message("info", "workload_start", "Running "+r.label(), map[string]any{"run": r})
}

func (s *runStream) workloadProgress(r jsonRun, p engine.Progress) {
	s.v.Message("info", "workload_progress",
		fmt.Sprintf("%s: %s of %s, %s", r.label(), p.Elapsed.Round(100*time.Millisecond), p.Planned.Round(100*time.Millisecond), formatBps(p.ThroughputBps)),
		map[string]any{"run": r, "progress": jsonProgress{
			ElapsedS: p.Elapsed.Seconds(), PlannedS: p.Planned.Seconds(), ThroughputBps: p.ThroughputBps,
		}})
}

func (s *runStream) workloadComplete(r jsonRun, res *engine.WorkloadResult, wall time.Duration) {
	s.v.Message("info", "workload_complete",
		fmt.Sprintf("%s: %s in %.2fs of workload time", r.label(), formatBps(res.Metrics[engine.MetricThroughputBps]), res.Metrics[engine.MetricDurationS]),
		map[string]any{"run": r, "wall_s": wall.Seconds(), "result": res})
}

func (s *runStream) results(res *engine.Results) {
	s.v.Message("info", "results", fmt.Sprintf("Results: %d runs of lab %s on the %s engine", len(res.Runs), res.Lab, res.Engine),
		map[string]any{"results": res})
}

func (s *runStream) verdicts(vs []outcome.Verdict) {
	for _, v := range vs {
		jv := jsonVerdict{
			Expect: v.Expect, Scenario: v.Scenario, Workload: v.Workload, Status: v.Status.String(),
			Message: v.Message, Expression: v.Expression, Op: v.Op, Sides: v.Sides, Measured: v.Measured, Detail: v.Detail,
			BaselineChanged: v.BaselineChanged,
		}
		if v.Range.Filename != "" {
			jv.Range = &jsonRange{
				Filename: v.Range.Filename,
				Start:    jsonPos{v.Range.Start.Line, v.Range.Start.Column, v.Range.Start.Byte},
				End:      jsonPos{v.Range.End.Line, v.Range.End.Column, v.Range.End.Byte},
			}
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

func (s *runStream) summary(vs []outcome.Verdict, strict bool, code int) {
	c := outcome.Count(vs)
	level := "info"
	if code != outcome.ExitOK {
		level = "error"
	}
	s.v.Message(level, "test_summary",
		fmt.Sprintf("Expectations: %d passed, %d failed, %d inconclusive, %d errors.", c.Pass, c.Fail, c.Inconclusive, c.Error),
		map[string]any{"summary": jsonSummary{Pass: c.Pass, Fail: c.Fail, Inconclusive: c.Inconclusive, Error: c.Error, Strict: strict, ExitCode: code}})
}

func (s *runStream) diagnostics(diags hcl.Diagnostics) { s.v.Diagnostics(diags) }

func (s *runStream) errored(err error) {
	s.v.Message("error", "run_errored", "Error: "+err.Error(), map[string]any{"error": err.Error()})
}
