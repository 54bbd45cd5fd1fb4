package sim

import (
	"fmt"

	hclv2 "github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/config"
)

// CheckLab resolves what the model looks up by name in every scenario of
// the lab, before any runs: each host's cpu profile and the scheduler it
// chooses among that profile's. A name the engine does not know is an
// error at the attribute that gives it (once per host and value), with
// the names there are.
func (e *Engine) CheckLab(lab *config.Lab) hclv2.Diagnostics {
	var diags hclv2.Diagnostics
	seen := map[string]bool{}
	for _, sc := range lab.Scenarios {
		for _, hc := range sc.Hosts {
			attr, err := e.checkHost(hc)
			if err == nil {
				continue
			}
			key := hc.Name + "\x00" + attr + "\x00" + err.Error()
			if seen[key] {
				continue
			}
			seen[key] = true
			d := &hclv2.Diagnostic{
				Severity: hclv2.DiagError,
				Summary:  fmt.Sprintf("Invalid %s for the sim engine", attr),
				Detail:   fmt.Sprintf("host.%s in scenario %s: %v.", hc.Name, sc.Name, err),
			}
			if r, ok := hc.AttrRanges[attr]; ok {
				d.Subject = &r
			} else if hc.Range.Filename != "" {
				r := hc.Range
				d.Subject = &r
			}
			diags = append(diags, d)
		}
	}
	return diags
}

// checkHost resolves a host's cpu profile and scheduler as build does,
// and returns the attribute whose value is wrong with the error.
func (e *Engine) checkHost(hc *config.Host) (string, error) {
	stack := hc.Stack
	if stack == "" {
		stack = e.defaultStack
	}
	cp, err := e.cpuOf(hc, stack)
	if err != nil {
		return "cpu", err
	}
	if _, err := cp.scheduler(hc.Scheduler); err != nil {
		return "scheduler", err
	}
	return "", nil
}

// cpuOf is the CPU profile of a host that runs stack: its `cpu`, else
// the stack's default.
func (e *Engine) cpuOf(hc *config.Host, stack string) (CPUProfile, error) {
	name := hc.CPU
	if name == "" {
		name = defaultCPU(stack)
	}
	return e.cpuProfile(name)
}

// attrPlace is "FILE:LINE,COL: " where the host sets attr, or "" when
// the host was not read from a lab file.
func attrPlace(hc *config.Host, attr string) string {
	r, ok := hc.AttrRanges[attr]
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s:%d,%d: ", r.Filename, r.Start.Line, r.Start.Column)
}
