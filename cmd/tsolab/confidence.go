package main

import (
	"flag"
	"fmt"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/outcome"
)

// defaultConfidenceRuns is the most runs -confidence makes when -repeat
// does not say.
const defaultConfidenceRuns = 30

// checkConfidence validates -confidence against -repeat and sets -repeat
// to the most runs it may take; false after printing the problem.
func (c *cli) checkConfidence(fs *flag.FlagSet, f *runFlags) bool {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if !set["confidence"] {
		return true
	}
	if f.confidence <= 0 || f.confidence >= 200 {
		c.errorf("-confidence %g: give the widest 95%% confidence interval to stop at, in %% of the median, e.g. -confidence 10 (netperf -I 95,10)", f.confidence)
		return false
	}
	switch {
	case !set["repeat"]:
		f.repeat = defaultConfidenceRuns
	case f.repeat < outcome.MinRunsForCI:
		c.errorf("-confidence needs at least %d runs for a finite 95%% confidence interval, and -repeat %d is the most it may make: give -repeat %d or more, or leave -repeat out (%d)",
			outcome.MinRunsForCI, f.repeat, outcome.MinRunsForCI, defaultConfidenceRuns)
		return false
	}
	return true
}

// mainMetric is the metric -confidence watches: transactions/s for rr,
// throughput otherwise.
func mainMetric(w *config.Workload) string {
	if w.Kind == config.RR {
		return engine.MetricTransactionsPerS
	}
	return engine.MetricThroughputBps
}

// reportConfidence says how -confidence ended for one workload: on
// stderr, and as a note on the workload's last run when the interval
// stayed wider than asked, so the results file and the report carry it.
func (c *cli) reportConfidence(last *engine.WorkloadResult, scenario, workload, metric string, values []float64, want float64) {
	width := outcome.Summarize(values).RelativeWidth()
	if width <= want {
		if c.stream == nil {
			fmt.Fprintf(c.stderr, "%s / %s: the 95%% confidence interval of %s is %.1f%% of the median after %d runs (-confidence %g)\n",
				scenario, workload, metric, width, len(values), want)
		}
		return
	}
	note := fmt.Sprintf("-confidence %g not reached: the 95%% confidence interval of %s is still %.1f%% of the median after %d runs (-repeat %d is the most)",
		want, metric, width, len(values), len(values))
	last.Notes = append(last.Notes, note)
	if c.stream == nil {
		fmt.Fprintf(c.stderr, "%s / %s: %s\n", scenario, workload, note)
	}
}

// lastRun is the latest run of a workload in a scenario.
func lastRun(results *engine.Results, scenario, workload string) *engine.WorkloadResult {
	for i := len(results.Runs) - 1; i >= 0; i-- {
		if r := &results.Runs[i]; r.Scenario == scenario && r.Workload == workload {
			return r
		}
	}
	return nil
}
