package outcome

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

// ccLab is a lab of scenarios tso=true and tso=false, each with the
// workload "bulk" declared at lab.tsolab.hcl:12 and congestion control cc.
func ccLab(cc string) *config.Lab {
	rng := hcl.Range{Filename: "lab.tsolab.hcl", Start: hcl.Pos{Line: 12, Column: 1}, End: hcl.Pos{Line: 12, Column: 16}}
	lab := &config.Lab{Name: "cc"}
	for _, sc := range []string{"tso=true", "tso=false"} {
		lab.Scenarios = append(lab.Scenarios, &config.Scenario{Name: sc,
			Workloads: []*config.Workload{{Name: "bulk", Kind: config.Stream, CC: cc, Range: rng}}})
	}
	return lab
}

// ccResults is one engine's results: two runs of "bulk" a scenario, run
// with the congestion control cc gives for the scenario, on stack.
func ccResults(engine, stack string, cc map[string]string) *result.Results {
	res := &result.Results{Engine: engine}
	for _, sc := range []string{"tso=true", "tso=false"} {
		for rep := range 2 {
			res.Runs = append(res.Runs, result.WorkloadResult{Scenario: sc, Workload: "bulk", Repetition: rep,
				Engine: engine, Stack: stack, CongestionControl: cc[sc]})
		}
	}
	return res
}

func both(cc string) map[string]string { return map[string]string{"tso=true": cc, "tso=false": cc} }

func TestCongestionMismatch(t *testing.T) {
	for _, tc := range []struct {
		name       string
		labCC      string
		kernel     map[string]string
		sim        map[string]string
		want       []string // each diagnostic's summary, then what its detail must hold
		wantDetail []string
	}{
		{name: "same", labCC: "cubic", kernel: both("cubic"), sim: both("cubic")},
		{name: "machine default differs", kernel: both("bbr"), sim: both("cubic"),
			want:       []string{`Workload "bulk" ran bbr on the kernel and cubic on the model`},
			wantDetail: []string{"In every scenario", "the model's linux-6 profile ran cubic", "sets no cc", `Set cc = "cubic" in workload "bulk"`}},
		{name: "one scenario", kernel: map[string]string{"tso=true": "cubic", "tso=false": "reno"}, sim: both("cubic"),
			want:       []string{`Workload "bulk" ran reno on the kernel and cubic on the model`},
			wantDetail: []string{"In tso=false the kernel's"}},
		{name: "a results file from before congestion_control", kernel: both(""), sim: both("cubic")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diags := CongestionMismatch(ccLab(tc.labCC), ccResults("kernel", "", tc.kernel), ccResults("sim", "linux-6", tc.sim))
			if len(diags) != len(tc.want) {
				t.Fatalf("got %d diagnostics, want %d: %v", len(diags), len(tc.want), diags)
			}
			for i, d := range diags {
				if d.Severity != hcl.DiagWarning || d.Summary != tc.want[i] {
					t.Errorf("got %v %q, want a warning %q", d.Severity, d.Summary, tc.want[i])
				}
				for _, s := range tc.wantDetail {
					if !strings.Contains(d.Detail, s) {
						t.Errorf("detail %q does not say %q", d.Detail, s)
					}
				}
				if d.Subject == nil || d.Subject.Filename != "lab.tsolab.hcl" || d.Subject.Start.Line != 12 {
					t.Errorf("subject = %v, want the workload block at lab.tsolab.hcl:12", d.Subject)
				}
			}
		})
	}
}

func TestUnnamedCongestion(t *testing.T) {
	t.Run("no cc: once, naming what ran", func(t *testing.T) {
		diags := UnnamedCongestion(ccLab(""), ccResults("kernel", "", both("bbr")))
		if len(diags) != 1 {
			t.Fatalf("got %d diagnostics, want 1 for the workload's 4 runs: %v", len(diags), diags)
		}
		d := diags[0]
		if want := `Workload "bulk" sets no cc: the kernel ran bbr, its namespace's default`; d.Severity != hcl.DiagWarning || d.Summary != want {
			t.Errorf("got %v %q, want a warning %q", d.Severity, d.Summary, want)
		}
		for _, s := range []string{"net.ipv4.tcp_congestion_control", "another machine", `cc = "bbr"`} {
			if !strings.Contains(d.Detail, s) {
				t.Errorf("detail %q does not say %q", d.Detail, s)
			}
		}
		if d.Subject == nil || d.Subject.Start.Line != 12 {
			t.Errorf("subject = %v, want the workload block", d.Subject)
		}
	})
	t.Run("two algorithms", func(t *testing.T) {
		diags := UnnamedCongestion(ccLab(""), ccResults("kernel", "", map[string]string{"tso=true": "reno", "tso=false": "bbr"}))
		if len(diags) != 1 || !strings.Contains(diags[0].Summary, "the kernel ran bbr and reno") {
			t.Errorf("got %v, want one warning naming bbr and reno", diags)
		}
	})
	t.Run("cc named", func(t *testing.T) {
		if diags := UnnamedCongestion(ccLab("cubic"), ccResults("kernel", "", both("cubic"))); len(diags) != 0 {
			t.Errorf("got %v, want none: the lab names its cc", diags)
		}
	})
}
