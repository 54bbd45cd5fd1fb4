package main

import (
	"fmt"

	hclv2 "github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/config"
)

// draws says whether a run of scenario sc on the model draws from its
// random source: a host runs a scheduler (config.Host.Scheduler), whose
// wake-up latencies repetition r draws from the seed's stream r. Without
// one the model is deterministic: every repetition gives the same run.
func draws(sc *config.Scenario) bool {
	for _, h := range sc.Hosts {
		if h.Scheduler != "" && h.Scheduler != "none" {
			return true
		}
	}
	return false
}

// checkModelRepeat refuses -repeat N (N > 1) and -confidence on the
// model when none of the scenarios draws anything: the runs would be
// copies of one, and their spread (±∞ below 6 runs, ±0 from 6) would
// measure nothing. When some do, it says that repetitions differ by
// their draws only. False after printing the problem.
func (c *cli) checkModelRepeat(lab *config.Lab, scenarios []*config.Scenario, f *runFlags) bool {
	asked := f.set["repeat"] && f.repeat > 1 || f.set["confidence"]
	if !asked {
		return true
	}
	n := 0
	for _, sc := range scenarios {
		if draws(sc) {
			n++
		}
	}
	flag := fmt.Sprintf("-repeat %d", f.repeat)
	if !f.set["repeat"] {
		flag = fmt.Sprintf("-confidence %g", f.confidence)
	}
	if n == 0 {
		c.errorf("%s: the model is deterministic here, every repetition would give the same figures\n\n"+
			"No host of lab %s runs a scheduler, the model's only random source, so repeated runs on the sim engine are copies of one and their spread says nothing. Leave %s out (one run), or give the hosts a scheduler of their CPU profile (host { scheduler = \"vm-halt\" } on the default profile, docs/language.md): each repetition then draws its own wake-up latencies (-seed N moves the draws).",
			flag, lab.Name, flag)
		return false
	}
	detail := fmt.Sprintf("Repetition r draws the wake-up latencies from stream r of seed %d (-seed N).", f.seedValue())
	if n < len(scenarios) {
		detail += fmt.Sprintf(" %d of the %d scenarios run a scheduler; the others give the same figures every run.", n, len(scenarios))
	}
	c.diagnose(&hclv2.Diagnostic{Severity: hclv2.DiagWarning, Detail: detail,
		Summary: fmt.Sprintf("%s on the model: repetitions differ only by their schedulers' draws", flag)})
	return true
}

// seedValue is -seed, or the model's default 0.
func (f *runFlags) seedValue() uint64 {
	if f.seed == nil {
		return 0
	}
	return *f.seed
}
