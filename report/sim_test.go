package report_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/engine/sim"
	"github.com/tsolab/tsolab/hcl"
	"github.com/tsolab/tsolab/outcome"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/report"
	"github.com/tsolab/tsolab/result"
)

// TestModelReportDeterministic runs examples/freebsd-tso-trim on the model
// twice, as `tsolab test -engine sim -report` does, and wants the same
// report bytes: the model's results are byte-identical across runs, so
// the report must be too.
func TestModelReportDeterministic(t *testing.T) {
	lab, diags := hcl.Load("../examples/freebsd-tso-trim", hcl.Options{})
	if diags.HasErrors() {
		t.Fatalf("hcl.Load: %v", diags)
	}
	once := func() []byte {
		eng := sim.New(sim.Options{})
		res := &result.Results{FormatVersion: 1, Lab: lab.Name, Engine: eng.Name()}
		for _, sc := range lab.Scenarios {
			for _, w := range sc.Workloads {
				r, err := eng.Run(context.Background(), engine.RunRequest{Lab: lab, Scenario: sc, Workload: w, Naming: provider.NewNaming(lab.Name)})
				if err != nil {
					t.Fatalf("%s/%s: %v", sc.Name, w.Name, err)
				}
				res.Runs = append(res.Runs, *r)
			}
		}
		verdicts, _ := outcome.Evaluate(lab, res, nil)
		var buf bytes.Buffer
		if err := report.Write(&buf, report.Input{Results: res, Lab: lab, Verdicts: verdicts, Version: "test"}); err != nil {
			t.Fatalf("Write: %v", err)
		}
		return buf.Bytes()
	}
	a, b := once(), once()
	if !bytes.Equal(a, b) {
		t.Fatalf("two model runs of the same lab gave different reports (%d vs %d bytes)", len(a), len(b))
	}
	page := string(a)
	for _, want := range []string{"stack freebsd-10", "stack freebsd-11", "Why sends stopped", "ACKs by kind", "send-unit size (MSS)"} {
		if !strings.Contains(page, want) {
			t.Errorf("model report lacks %q", want)
		}
	}
}

// TestModelReportOffloadsFollowTheProfile: the offload table of a model
// report shows what the stack profile has, not every flag of the device:
// FreeBSD has neither GSO nor GRO, so its NICs report neither (the
// report's column would otherwise say gro=on for a stack without GRO);
// linux-6 has both.
func TestModelReportOffloadsFollowTheProfile(t *testing.T) {
	dir := t.TempDir()
	lab := `lab "offl" {
  engine = "sim"
}
matrix {
  stack = ["linux-6", "freebsd-10"]
}
host "a" {
  stack = matrix.stack
}
host "b" {
  stack = matrix.stack
}
nic "a0" {
  host    = host.a
  peer    = nic.b0
  address = "10.1.2.1/24"
  offload = { tso = true, gso = true, gro = true, sg = true, tx_csum = true }
}
nic "b0" {
  host    = host.b
  address = "10.1.2.2/24"
  offload = { gro = true }
}
workload "bulk" {
  kind     = "stream"
  client   = host.a
  servers  = [nic.b0]
  duration = "20ms"
}
`
	if err := os.WriteFile(filepath.Join(dir, "lab.tsolab.hcl"), []byte(lab), 0o644); err != nil {
		t.Fatal(err)
	}
	l, diags := hcl.Load(dir, hcl.Options{})
	if diags.HasErrors() {
		t.Fatalf("hcl.Load: %v", diags)
	}
	eng := sim.New(sim.Options{})
	res := &result.Results{FormatVersion: 1, Lab: l.Name, Engine: eng.Name()}
	for _, sc := range l.Scenarios {
		r, err := eng.Run(context.Background(), engine.RunRequest{Lab: l, Scenario: sc, Workload: sc.Workloads[0], Naming: provider.NewNaming(l.Name)})
		if err != nil {
			t.Fatalf("%s: %v", sc.Name, err)
		}
		res.Runs = append(res.Runs, *r)
		for nic, flags := range r.Offloads {
			_, gso := flags["gso"]
			gro, hasGRO := flags["gro"]
			switch sc.Name {
			case "stack=freebsd-10":
				if gso || hasGRO {
					t.Errorf("%s nic %s: offloads %v, want no gso or gro: FreeBSD has neither", sc.Name, nic, flags)
				}
			case "stack=linux-6":
				if !gso || !gro || !flags["tso"] {
					t.Errorf("%s nic %s: offloads %v, want gso and gro reported, gro on", sc.Name, nic, flags)
				}
			}
		}
	}
	// The report of each scenario alone: FreeBSD's offload table has no
	// gro (nor gso) column, linux-6's has one saying on.
	for i, run := range res.Runs {
		one := &result.Results{FormatVersion: 1, Lab: l.Name, Engine: eng.Name(), Runs: res.Runs[i : i+1]}
		var buf bytes.Buffer
		if err := report.Write(&buf, report.Input{Results: one, Lab: l, Version: "test"}); err != nil {
			t.Fatalf("Write: %v", err)
		}
		page := buf.String()
		start := strings.Index(page, `<h2 id="scenarios">`)
		table := page[start : start+1+strings.Index(page[start+1:], "<h2")]
		hasGRO, hasGSO := strings.Contains(table, "<th>gro</th>"), strings.Contains(table, "<th>gso</th>")
		if freebsd := run.Scenario == "stack=freebsd-10"; hasGRO == freebsd || hasGSO == freebsd {
			t.Errorf("%s: offload table with gro column %v, gso column %v; want %v:\n%s", run.Scenario, hasGRO, hasGSO, !freebsd, table)
		}
	}
}
