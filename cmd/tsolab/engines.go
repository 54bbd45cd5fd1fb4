package main

import (
	"fmt"
	"path/filepath"
	"slices"

	hclv2 "github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/outcome"
	"github.com/tsolab/tsolab/result"
)

// checkEngines accepts -engine kernel,sim: test only, both engines once
// each, and none of the flags that write one engine's results.
func (c *cli) checkEngines(engines []string, f *runFlags, test bool) bool {
	sorted := slices.Sorted(slices.Values(engines))
	if !slices.Equal(sorted, []string{string(config.EngineKernel), string(config.EngineSim)}) {
		c.errorf("-engine %q: give one engine, \"kernel\" or \"sim\", or both as kernel,sim to compare the model with the kernel", f.engine)
		return false
	}
	if !test {
		c.errorf("-engine kernel,sim runs every scenario on both engines: use tsolab test (run measures the applied scenario on one engine)")
		return false
	}
	for _, fl := range []struct{ name, value string }{{"-json", f.jsonFile}, {"-junit", f.junitFile}, {"-report", f.report}, {"-summary", f.summary}} {
		if fl.value != "" {
			c.errorf("%s writes one engine's results: with -engine kernel,sim, run tsolab test -engine kernel %s FILE and tsolab test -engine sim %s FILE instead", fl.name, fl.name, fl.name)
			return false
		}
	}
	return true
}

// testEngines runs the test on the kernel, then on the model, each shown
// as tsolab test shows it, then puts them side by side: per expectation
// and scenario, each metric its condition reads on both engines and
// whether the model's verdict agrees with the kernel's, and warns per
// workload where the kernel ran another congestion control than the
// model (outcome.CongestionMismatch). The exit code is the kernel's when
// it is not OK, else the model's.
func (c *cli) testEngines(lab *config.Lab, dir, name string, args []string, f *runFlags) int {
	var results [2]*result.Results
	var verdicts [2][]outcome.Verdict
	code := exitOK
	for i, kind := range []config.EngineKind{config.EngineKernel, config.EngineSim} {
		fk := *f
		fk.engine = string(kind)
		fk.bothEngines = true
		if kind == config.EngineSim {
			// Capturing packets is the kernel run's: the model sends none.
			fk.noCapture, fk.capture, fk.captureMax = false, "", ""
		}
		if kind == config.EngineKernel {
			// -seed is the model's; the kernel draws nothing.
			fk.seed = nil
		}
		if i > 0 {
			fmt.Fprintln(c.stdout)
		}
		fmt.Fprintf(c.stdout, "=== engine %s\n", kind)
		res, vs, ec := c.runEngine(lab, dir, name, args, &fk, true)
		if res == nil {
			return ec
		}
		results[i], verdicts[i] = res, vs
		if code == exitOK {
			code = ec
		}
	}
	fmt.Fprintln(c.stdout, "\n=== the model against the kernel (the medians of each engine's runs; DIFF is the model's)")
	outcome.WriteComparison(c.stdout, string(config.EngineKernel), string(config.EngineSim),
		outcome.CompareEngines(results[0], verdicts[0], results[1], verdicts[1]))
	if diags := outcome.CongestionMismatch(lab, results[0], results[1]); len(diags) > 0 {
		fmt.Fprintln(c.stdout)
		c.writeDiags(lab.Sources, diags)
	}
	return code
}

// observedCongestion warns where a kernel results file the lab's observed
// blocks read (`results = "kernel.json"`) ran another congestion control
// than the model's runs in sim, per workload: the model is then fitted
// to, or checked against, a kernel that ran something else. A file that
// cannot be read was reported when the lab was loaded; runs that record
// no congestion_control (files before format 1.12) are passed over.
func observedCongestion(lab *config.Lab, dir string, sim *result.Results) hclv2.Diagnostics {
	var diags hclv2.Diagnostics
	seen := map[string]bool{}
	for _, o := range lab.Observed {
		if o.Results == "" || seen[o.Results] {
			continue
		}
		seen[o.Results] = true
		kernel, err := result.ReadFile(filepath.Join(dir, o.Results))
		if err != nil {
			continue
		}
		for _, d := range outcome.CongestionMismatch(lab, kernel, sim) {
			d.Detail += fmt.Sprintf(" The kernel's figures here are %s's, which observed blocks read: record it again once the workload names its cc.", o.Results)
			diags = append(diags, d)
		}
	}
	return diags
}
