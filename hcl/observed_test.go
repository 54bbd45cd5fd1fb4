package hcl

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hclv2 "github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

// observedLab is a lab with a matrix whose observed block reads a
// results file; %s is the observed block's body.
const observedLab = `lab "t" {}
matrix { tso = [false, true] }
host "a" {}
host "b" {}
nic "a0" {
  host    = host.a
  peer    = nic.b0
  address = "10.9.0.1/24"
  offload = { tso = matrix.tso }
}
nic "b0" {
  host    = host.b
  address = "10.9.0.2/24"
}
workload "bulk" {
  client  = host.a
  servers  = [nic.b0]
  duration = "1s"
}
observed "off" {
%s
}
`

func writeResults(t *testing.T, dir, name, eng string, runs ...result.WorkloadResult) {
	t.Helper()
	b, err := json.Marshal(result.Results{FormatVersion: 1, Lab: "t", Engine: eng, Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(scenario string, rep int, bps float64) result.WorkloadResult {
	return result.WorkloadResult{Scenario: scenario, Workload: "bulk", Repetition: rep, Engine: "kernel", Kernel: "6.18.0",
		Metrics: map[string]float64{"throughput_bps": bps, "cpu_tx_pct": bps / 1e8}}
}

// TestObservedFromResults: an observed block that names a kernel results
// file holds the median of its cell's runs for each metric it lists, and
// says where they came from; every way to get it wrong is a diagnostic on
// the attribute that says what to do.
func TestObservedFromResults(t *testing.T) {
	dir := t.TempDir()
	writeResults(t, dir, "kernel.json", "kernel",
		run("tso=false", 0, 4e9), run("tso=false", 1, 2e9), run("tso=false", 2, 3e9), run("tso=false", 3, 10e9),
		run("tso=true", 0, 9e9))
	writeResults(t, dir, "sim.json", "sim", run("tso=false", 0, 4e9))
	writeResults(t, dir, "partial.json", "kernel", run("tso=false", 0, 4e9))
	writeResults(t, dir, "zero.json", "kernel", run("tso=false", 0, 0))
	body := `  results  = "kernel.json"
  scenario = { tso = false }
  metrics  = ["throughput_bps", "cpu_tx_pct"]`
	lab, diags := loadObservedLab(t, dir, body)
	if len(diags) > 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	o := lab.Observed[0]
	if got, want := o.Values["throughput_bps"], 3.5e9; got != want {
		t.Errorf("throughput_bps = %g, want the median of 4, 2, 3 and 10 Gb/s: %g", got, want)
	}
	if got, want := o.Values["cpu_tx_pct"], 35.0; got != want {
		t.Errorf("cpu_tx_pct = %g, want %g", got, want)
	}
	if o.Results != "kernel.json" || !strings.Contains(o.Source, "median of 4 kernel runs, Linux 6.18.0") {
		t.Errorf("Results %q, Source %q: want kernel.json and where the figures came from", o.Results, o.Source)
	}

	for _, tc := range []struct{ name, body, want string }{
		{"missing file", strings.Replace(body, "kernel.json", "gone.json", 1), "tsolab test -engine kernel -json gone.json"},
		{"model's own run", strings.Replace(body, "kernel.json", "sim.json", 1), "holds a run of the sim engine"},
		{"the other cell", strings.Replace(body, "tso = false", "tso = true", 1) + "\n  workload = workload.bulk", ""},
		{"a cell the file lacks", strings.Replace(strings.Replace(body, "kernel.json", "partial.json", 1), "tso = false", "tso = true", 1), "has no run of workload bulk in scenario tso=true"},
		{"no such metric", strings.Replace(body, `"cpu_tx_pct"`, `"cpu_rx_pct"`, 1), "carry no cpu_rx_pct"},
		{"no metrics", `  results  = "kernel.json"
  scenario = { tso = false }`, "say which of its metrics"},
		{"values and results", body + "\n  values = { throughput_bps = 1e9 }", "keep values"},
		{"metrics without results", `  scenario = { tso = false }
  values   = { throughput_bps = 1e9 }
  metrics  = ["throughput_bps"]`, "drop metrics"},
		{"no figures", `  scenario = { tso = false }`, "holds no figures"},
		{"a zero value", `  scenario = { tso = false }
  values   = { retransmits = 0 }`, "state it as an expectation instead"},
		{"a zero median", strings.Replace(body, "kernel.json", "zero.json", 1), "leave it out of metrics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, diags := loadObservedLab(t, dir, tc.body)
			if tc.want == "" {
				if len(diags) > 0 {
					t.Fatalf("diagnostics: %v", diags)
				}
				if v := got.Observed[0].Values["throughput_bps"]; v != 9e9 {
					t.Errorf("tso=true: throughput_bps %g, want 9e9", v)
				}
				return
			}
			if len(diags) != 1 || !strings.Contains(diags[0].Detail, tc.want) {
				t.Errorf("got diagnostics %v, want one saying %q", diags, tc.want)
			}
		})
	}
}

// loadObservedLab writes the lab with the observed block's body into dir and loads
// it; only errors are returned as diagnostics.
func loadObservedLab(t *testing.T, dir, body string) (*config.Lab, hclv2.Diagnostics) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "lab.tsolab.hcl"), []byte(fmt.Sprintf(observedLab, body)), 0o644); err != nil {
		t.Fatal(err)
	}
	lab, diags := Load(dir, Options{})
	var errs hclv2.Diagnostics
	for _, d := range diags {
		if d.Severity == hclv2.DiagError {
			errs = append(errs, d)
		}
	}
	return lab, errs
}

// TestObservedRelativeTo: relative_to names the sibling scenario the
// values are relative to, as scenario({...}) does in a condition; an axis
// the matrix lacks, the block's own scenario and a results file are
// diagnostics.
func TestObservedRelativeTo(t *testing.T) {
	dir := t.TempDir()
	writeResults(t, dir, "kernel.json", "kernel", run("tso=true", 0, 4e9))
	lab, diags := loadObservedLab(t, dir, `  scenario    = { tso = true }
  relative_to = { tso = false }
  values      = { throughput_bps = 0.98 }`)
	if len(diags) > 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	if o := lab.Observed[0]; o.Scenario != "tso=true" || o.RelativeTo != "tso=false" {
		t.Errorf("Scenario %q RelativeTo %q, want tso=true and tso=false", o.Scenario, o.RelativeTo)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"no such axis", `  scenario    = { tso = true }
  relative_to = { gso = false }
  values      = { throughput_bps = 0.98 }`, `no axis "gso"`},
		{"itself", `  scenario    = { tso = true }
  relative_to = { tso = true }
  values      = { throughput_bps = 0.98 }`, "own scenario tso=true"},
		{"results", `  results     = "kernel.json"
  scenario    = { tso = true }
  relative_to = { tso = false }
  metrics     = ["throughput_bps"]`, "relative_to applies to values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := loadObservedLab(t, dir, tc.body)
			if len(diags) != 1 || !strings.Contains(diags[0].Detail, tc.want) {
				t.Errorf("got diagnostics %v, want one saying %q", diags, tc.want)
			}
		})
	}
}
