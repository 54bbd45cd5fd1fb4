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

// checkModelRepeat holds the rule for repetitions on the model, from
// a flag or from the lab: where no scenario draws anything (draws), the
// runs would be copies of one, and their spread (±∞ below 6 runs, ±0
// from 6) would measure nothing. -repeat N (N > 1) and -confidence are
// refused there, and so are a repeat or confidence attribute of a lab
// whose engine is sim (an error at the attribute); a kernel lab's
// attribute, written for the kernel, gives one run on the model with a
// warning at the attribute. Where some scenarios draw, a warning says
// that repetitions differ by their draws only. False after printing
// the problem.
func (c *cli) checkModelRepeat(lab *config.Lab, scenarios []*config.Scenario, f *runFlags) bool {
	asked, at := f.modelRepeatAsked(lab, scenarios)
	if asked == "" {
		return true
	}
	n := 0
	for _, sc := range scenarios {
		if draws(sc) {
			n++
		}
	}
	if n > 0 {
		detail := fmt.Sprintf("Repetition r draws the wake-up latencies from stream r of seed %d (-seed N).", f.seedValue())
		if n < len(scenarios) {
			detail += fmt.Sprintf(" %d of the %d scenarios run a scheduler; the others give the same figures every run.", n, len(scenarios))
		}
		c.writeDiags(lab.Sources, hclv2.Diagnostics{{Severity: hclv2.DiagWarning, Detail: detail, Subject: at,
			Summary: fmt.Sprintf("%s on the model: repetitions differ only by their schedulers' draws", asked)}})
		return true
	}
	why := fmt.Sprintf("No host of lab %s runs a scheduler, the model's only random source, so repeated runs on the sim engine are copies of one and their spread says nothing.", lab.Name)
	scheduler := "give the hosts a scheduler of their CPU profile (host { scheduler = \"vm-halt\" } on the default profile, docs/language.md): each repetition then draws its own wake-up latencies (-seed N moves the draws)"
	summary := asked + ": the model is deterministic here, every repetition would give the same figures"
	switch {
	case at == nil:
		c.errorf("%s\n\n%s Leave %s out (one run), or %s.", summary, why, asked, scheduler)
		return false
	case lab.Engine == config.EngineSim:
		c.writeDiags(lab.Sources, hclv2.Diagnostics{{Severity: hclv2.DiagError, Summary: summary, Subject: at,
			Detail: fmt.Sprintf("%s Remove %s from the lab (one run), or %s.", why, asked, scheduler)}})
		return false
	}
	c.writeDiags(lab.Sources, hclv2.Diagnostics{{Severity: hclv2.DiagWarning, Subject: at,
		Summary: fmt.Sprintf("%s is the kernel engine's: the model runs once", asked),
		Detail:  fmt.Sprintf("%s So the model runs each workload once here (-repeat 1). To repeat on the model, %s.", why, scheduler)}})
	f.set["repeat"], f.repeat = true, 1
	f.resolve(lab)
	return true
}

// modelRepeatAsked says what asks for repeated runs of scenarios: a
// flag (-repeat N, -confidence PCT; at is nil), or the first repeat or
// confidence attribute of the lab or a workload that does (at is that
// attribute); "" when nothing does.
func (f *runFlags) modelRepeatAsked(lab *config.Lab, scenarios []*config.Scenario) (asked string, at *hclv2.Range) {
	switch {
	case f.set["repeat"] && f.repeat > 1:
		return fmt.Sprintf("-repeat %d", f.repeat), nil
	case f.set["confidence"]:
		return fmt.Sprintf("-confidence %g", f.confidence), nil
	case f.set["repeat"]: // -repeat 1 wins over the lab's attributes
		return "", nil
	}
	for _, sc := range scenarios {
		for _, w := range sc.Workloads {
			m := f.measureOf(lab, w)
			switch {
			case m.Confidence > 0 && m.ConfidenceAt.Filename != "":
				return fmt.Sprintf("confidence = %g", m.Confidence), m.ConfidenceAt.Ptr()
			case m.Repeat > 1 && m.RepeatAt.Filename != "":
				return fmt.Sprintf("repeat = %d", m.Repeat), m.RepeatAt.Ptr()
			}
		}
	}
	return "", nil
}

// seedValue is -seed, or the model's default 0.
func (f *runFlags) seedValue() uint64 {
	if f.seed == nil {
		return 0
	}
	return *f.seed
}
