package outcome

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

// ccRuns is what the runs of one workload ran as congestion control, by
// scenario, in the order the runs came.
type ccRuns struct {
	workload  string
	scenarios []string          // in run order, each once
	cc        map[string]string // by scenario; the last run's
	stack     map[string]string // by scenario: the sender's stack profile (sim)
}

// ccByWorkload gathers res's congestion controls by workload, in the
// order the workloads first ran; runs that name none (an engine or a
// results file from before congestion_control) are left out.
func ccByWorkload(res *result.Results) []*ccRuns {
	var out []*ccRuns
	at := map[string]*ccRuns{}
	for _, r := range res.Runs {
		if r.CongestionControl == "" {
			continue
		}
		w, ok := at[r.Workload]
		if !ok {
			w = &ccRuns{workload: r.Workload, cc: map[string]string{}, stack: map[string]string{}}
			at[r.Workload] = w
			out = append(out, w)
		}
		if _, seen := w.cc[r.Scenario]; !seen {
			w.scenarios = append(w.scenarios, r.Scenario)
		}
		w.cc[r.Scenario], w.stack[r.Scenario] = r.CongestionControl, r.Stack
	}
	return out
}

// workloadIn is the workload name of lab's scenario sc; nil when the lab
// has no such scenario or workload.
func workloadIn(lab *config.Lab, sc, name string) *config.Workload {
	for _, s := range lab.Scenarios {
		if s.Name != sc {
			continue
		}
		for _, w := range s.Workloads {
			if w.Name == name {
				return w
			}
		}
	}
	return nil
}

// UnnamedCongestion says, once per workload of lab that sets no `cc`,
// which congestion control its connections ran in kernel's runs: the
// machine's default (net.ipv4.tcp_congestion_control in the client's
// namespace), which the lab does not name, so another machine may run
// another. Warnings, with the workload block as their subject.
func UnnamedCongestion(lab *config.Lab, kernel *result.Results) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, w := range ccByWorkload(kernel) {
		var ran []string
		var decl *config.Workload
		for _, sc := range w.scenarios {
			if d := workloadIn(lab, sc, w.workload); d != nil && d.CC == "" {
				decl = d
				ran = append(ran, w.cc[sc])
			}
		}
		if decl == nil {
			continue
		}
		slices.Sort(ran)
		ran = slices.Compact(ran)
		names := strings.Join(ran, " and ")
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  fmt.Sprintf("Workload %q sets no cc: the kernel ran %s, its namespace's default", w.workload, names),
			Detail: fmt.Sprintf("Its connections ran %s, what net.ipv4.tcp_congestion_control gave them in the client's namespace (a new namespace inherits the machine's). The lab does not name it, so on another machine the same lab may run another congestion control and measure something else (BBR, for one, paces in TCP; cubic is Linux's built-in default and what the model's Linux profiles run). Set cc = %q in workload %q to keep this one, or name the one you mean.",
				names, ran[0], w.workload),
			Subject: rangeOf(decl),
		})
	}
	return diags
}

// CongestionMismatch says, per workload and pair of congestion
// controls, where kernel's runs ran another congestion control than
// sim's runs of the same scenario (the model's stack profile's): the
// engines' figures then compare two congestion controls. Warnings
// naming both and the fix, with the workload block as their subject.
func CongestionMismatch(lab *config.Lab, kernel, sim *result.Results) hcl.Diagnostics {
	model := map[string]*ccRuns{}
	for _, w := range ccByWorkload(sim) {
		model[w.workload] = w
	}
	var diags hcl.Diagnostics
	for _, k := range ccByWorkload(kernel) {
		m, ok := model[k.workload]
		if !ok {
			continue
		}
		type pair struct{ kernel, sim, stack string }
		var pairs []pair
		where := map[pair][]string{}
		for _, sc := range k.scenarios {
			mcc, ok := m.cc[sc]
			if !ok || mcc == k.cc[sc] {
				continue
			}
			p := pair{k.cc[sc], mcc, m.stack[sc]}
			if _, seen := where[p]; !seen {
				pairs = append(pairs, p)
			}
			where[p] = append(where[p], sc)
		}
		for _, p := range pairs {
			decl := workloadIn(lab, where[p][0], k.workload)
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  fmt.Sprintf("Workload %q ran %s on the kernel and %s on the model", k.workload, p.kernel, p.sim),
				Detail:   mismatchDetail(k.workload, p.kernel, p.sim, p.stack, where[p], len(k.scenarios), decl),
				Subject:  rangeOf(decl),
			})
		}
	}
	return diags
}

// mismatchDetail says where and why the engines ran two congestion
// controls, and the fix.
func mismatchDetail(workload, kernel, sim, stack string, scenarios []string, all int, decl *config.Workload) string {
	where := "In every scenario"
	if len(scenarios) < all {
		where = "In " + strings.Join(scenarios, ", ")
	}
	why := ""
	if decl != nil && decl.CC == "" {
		why = " The workload sets no cc, so the kernel ran the client namespace's default (net.ipv4.tcp_congestion_control, which a new namespace inherits from the machine) and the model its profile's."
	}
	profile := "the model"
	if stack != "" {
		profile = "the model's " + stack + " profile"
	}
	return fmt.Sprintf("%s the kernel's connections ran %s and %s ran %s, so the comparison of the engines sets two congestion controls side by side.%s Set cc = %q in workload %q to run on the kernel what the model runs.",
		where, kernel, profile, sim, why, sim, workload)
}

// rangeOf is decl's block, or nil when there is none.
func rangeOf(decl *config.Workload) *hcl.Range {
	if decl == nil || decl.Range.Filename == "" {
		return nil
	}
	r := decl.Range
	return &r
}
