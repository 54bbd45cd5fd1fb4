package report_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/engine/sim"
	"github.com/tsolab/tsolab/hcl"
	"github.com/tsolab/tsolab/outcome"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/report"
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
		res := &engine.Results{FormatVersion: 1, Lab: lab.Name, Engine: eng.Name()}
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
