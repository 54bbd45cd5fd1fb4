package main

import (
	"flag"
	"fmt"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/outcome"
	"github.com/tsolab/tsolab/result"
)

// defaultConfidenceRuns is the most runs -confidence makes when -repeat
// does not say.
const defaultConfidenceRuns = 30

// checkConfidence validates -confidence against -repeat; false after
// printing the problem.
func (c *cli) checkConfidence(f *runFlags) bool {
	if !f.set["confidence"] {
		return true
	}
	if f.confidence <= 0 || f.confidence >= 200 {
		c.errorf("-confidence %g: give the widest 95%% confidence interval to stop at, in %% of the median, e.g. -confidence 10 (netperf -I 95,10)", f.confidence)
		return false
	}
	if f.set["repeat"] && f.repeat < outcome.MinRunsForCI {
		c.errorf("-confidence needs at least %d runs for a finite 95%% confidence interval, and -repeat %d is the most it may make: give -repeat %d or more, or leave -repeat out (%d)",
			outcome.MinRunsForCI, f.repeat, outcome.MinRunsForCI, defaultConfidenceRuns)
		return false
	}
	return true
}

// visited is the set of flags given on the command line.
func visited(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return set
}

// measureOf is how workload w is measured: a flag given on the command
// line wins, then the workload's repeat and confidence, then the lab's;
// without any, one run, and with confidence at most 30.
func (f *runFlags) measureOf(lab *config.Lab, w *config.Workload) config.Measure {
	var m config.Measure
	if f.set["repeat"] {
		m.Repeat = f.repeat
	}
	if f.set["confidence"] {
		m.Confidence = f.confidence
	}
	m = m.Or(w.Measure).Or(lab.Measure)
	switch {
	case m.Repeat == 0 && m.Confidence > 0:
		m.Repeat = defaultConfidenceRuns
	case m.Repeat == 0:
		m.Repeat = 1
	case m.Confidence > 0 && m.Repeat < outcome.MinRunsForCI:
		// -repeat 3 on a lab that sets confidence: the flag wins, and
		// three runs give no interval to stop on.
		m.Confidence = 0
	}
	return m
}

// resolve settles what the lab decides unless a flag did: the most runs
// any workload makes (the rounds of runScenarios), and -strict.
func (f *runFlags) resolve(lab *config.Lab) {
	f.maxRepeat = 1
	for _, sc := range lab.Scenarios {
		for _, w := range sc.Workloads {
			f.maxRepeat = max(f.maxRepeat, f.measureOf(lab, w).Repeat)
		}
	}
	f.isStrict = f.strict
	if !f.set["strict"] {
		f.isStrict = lab.Strict
	}
}

// mainMetric is the metric -confidence watches: transactions/s for rr,
// throughput otherwise.
func mainMetric(w *config.Workload) string {
	if w.Kind == config.RR {
		return result.MetricTransactionsPerS
	}
	return result.MetricThroughputBps
}

// reportConfidence says how -confidence ended for one workload: to tv
// (text on stderr), and as a note on the workload's last run when the interval
// stayed wider than asked, so the results file and the report carry it.
func reportConfidence(tv testView, last *result.WorkloadResult, scenario, workload, metric string, values []float64, want float64) {
	width := outcome.Summarize(values).RelativeWidth()
	if width <= want {
		tv.confidence(scenario, workload, fmt.Sprintf("the 95%% confidence interval of %s is %.1f%% of the median after %d runs (confidence %g)",
			metric, width, len(values), want))
		return
	}
	note := fmt.Sprintf("confidence %g not reached: the 95%% confidence interval of %s is still %.1f%% of the median after %d runs (repeat %d is the most)",
		want, metric, width, len(values), len(values))
	last.Notes = append(last.Notes, note)
	tv.confidence(scenario, workload, note)
}

// lastRun is the latest run of a workload in a scenario.
func lastRun(results *result.Results, scenario, workload string) *result.WorkloadResult {
	for i := len(results.Runs) - 1; i >= 0; i-- {
		if r := &results.Runs[i]; r.Scenario == scenario && r.Workload == workload {
			return r
		}
	}
	return nil
}
