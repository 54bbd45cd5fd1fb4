package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/outcome"
	"github.com/tsolab/tsolab/result"
	"github.com/tsolab/tsolab/view"
)

// testView is where run and test write what happens: text for a person
// (humanTest: a progress line on stderr, the results table on stdout) or
// JSON lines on stdout with -json - (jsonTest, docs/json-format.md). The
// command chooses one as soon as its flags are parsed and writes every
// message to it; the two differ only in how they say a thing.
type testView interface {
	// scenarioStart: the runs of a scenario begin (a round of them with
	// -repeat).
	scenarioStart(scenario string, kind config.EngineKind)
	// applyView is the planner view that applies scenario sc in round
	// rep (0-based) of maxRepeat, and whether it shows only the summary
	// line of a plan and apply that went well (brief).
	applyView(v view.View, sc *config.Scenario, rep, maxRepeat int, verbose bool) (_ view.View, brief bool)
	// workload starts one run of a workload and returns what shows its
	// progress and end.
	workload(r jsonRun) workloadView
	// confidence says that a workload's -confidence interval is as
	// tight as asked, or the note saying it is not.
	confidence(scenario, workload, line string)
	// destroying: test destroys the lab after its runs.
	destroying()
	// results are every run's results; errored, why the runs stopped.
	results(res *result.Results)
	errored(err error)
	// judged shows the verdicts, the diagnostics of judging, and (text
	// only) the results table and hint, the command to judge what did
	// not run.
	judged(j judgement) error
	// summary counts the verdicts and says the exit code.
	summary(vs []outcome.Verdict, strict bool, code int)
}

// workloadView shows one run of a workload.
type workloadView interface {
	update(pr engine.Progress)
	// done shows the run's result (nil when it failed) and the wall
	// time the run took (a model run started ahead: its own, not the
	// wait for it).
	done(res *result.WorkloadResult, wall time.Duration)
}

// judgement is what run and test judged, for testView.judged.
type judgement struct {
	lab      *config.Lab
	results  *result.Results
	verdicts []outcome.Verdict
	diags    hcl.Diagnostics
	hint     string // the command that judges what did not run, or ""
}

// newTestView chooses the view once: -json - is the JSON stream, which
// also carries the plan, apply and failure messages (c.json).
func (c *cli) newTestView(jsonFile string) testView {
	if jsonFile == "-" {
		c.useJSON()
		return jsonTest{c.json}
	}
	return humanTest{c}
}

// humanTest is run and test as text.
type humanTest struct{ c *cli }

var _ testView = humanTest{}

func (humanTest) scenarioStart(string, config.EngineKind) {}

func (h humanTest) applyView(v view.View, sc *config.Scenario, rep, maxRepeat int, verbose bool) (view.View, bool) {
	label := fmt.Sprintf("=== scenario %s: ", sc.Name)
	if maxRepeat > 1 {
		label = fmt.Sprintf("=== scenario %s (run %d of %d): ", sc.Name, rep+1, maxRepeat)
	}
	if verbose && rep == 0 {
		fmt.Fprintf(h.c.stdout, "\n%s\n", strings.TrimSuffix(label, ": "))
		return v, false
	}
	return briefView{View: v, w: h.c.stdout, label: label}, false
}

func (h humanTest) workload(r jsonRun) workloadView {
	label := fmt.Sprintf("%s / %s", r.Scenario, r.Workload)
	switch {
	case r.AtMost:
		label += fmt.Sprintf(" (run %d of at most %d)", r.Repetition+1, r.Repeat)
	case r.Repeat > 1:
		label += fmt.Sprintf(" (run %d of %d)", r.Repetition+1, r.Repeat)
	}
	p := &progressLine{c: h.c, tty: isTerminal(h.c.stderr), label: label}
	if !p.tty {
		fmt.Fprintf(h.c.stderr, "running %s\n", label)
	}
	return p
}

func (h humanTest) confidence(scenario, workload, line string) {
	fmt.Fprintf(h.c.stderr, "%s / %s: %s\n", scenario, workload, line)
}

func (h humanTest) destroying() {
	fmt.Fprintln(h.c.stdout, "\nDestroying the lab (-keep keeps it).")
}

func (humanTest) results(*result.Results) {}
func (humanTest) errored(error)           {}

func (h humanTest) judged(j judgement) error {
	c := h.c
	fmt.Fprintln(c.stdout)
	writeProvenance(c.stdout, j.results.Provenance)
	writeSides(c.stdout, j.results)
	if err := outcome.WriteTable(c.stdout, j.lab, j.results, j.verdicts); err != nil {
		return err
	}
	c.writeDiags(j.lab.Sources, j.diags)
	if j.hint != "" {
		fmt.Fprintf(c.stdout, "\nNot judged: a scenario the condition compares with did not run. To judge it, run:\n    %s\n", j.hint)
	}
	return nil
}

func (humanTest) summary([]outcome.Verdict, bool, int) {}

// progressLine shows one workload's progress as text: a live line on a
// terminal, a start and an end line otherwise.
type progressLine struct {
	c     *cli
	tty   bool
	label string
}

func (p *progressLine) update(pr engine.Progress) {
	if !p.tty {
		return
	}
	fmt.Fprintf(p.c.stderr, "\r\033[K%s  %s / %s  %s", p.label,
		pr.Elapsed.Round(100*time.Millisecond), pr.Planned.Round(100*time.Millisecond), formatBps(pr.ThroughputBps))
}

func (p *progressLine) done(res *result.WorkloadResult, wall time.Duration) {
	if p.tty {
		fmt.Fprint(p.c.stderr, "\r\033[K")
	}
	if res == nil {
		return
	}
	fmt.Fprintf(p.c.stderr, "done    %s: %s in %.2fs of workload time (%s wall)\n", p.label,
		formatBps(res.Metrics[result.MetricThroughputBps]), res.Metrics[result.MetricDurationS],
		wall.Round(time.Millisecond))
}

func formatBps(bps float64) string {
	switch {
	case bps >= 1e9:
		return fmt.Sprintf("%.2f Gb/s", bps/1e9)
	case bps >= 1e6:
		return fmt.Sprintf("%.1f Mb/s", bps/1e6)
	}
	return fmt.Sprintf("%.0f kb/s", bps/1e3)
}
