package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/hcl"
	"github.com/tsolab/tsolab/outcome"
	"github.com/tsolab/tsolab/result"
)

// loadLab loads a lab and the model options tsolab test runs it with
// (its calibration files applied).
func loadLab(t *testing.T, dir string) (*config.Lab, Options) {
	t.Helper()
	lab, diags := hcl.Load(dir, hcl.Options{})
	if diags.HasErrors() {
		t.Fatalf("hcl.Load(%s): %v", dir, diags)
	}
	profiles, files, err := ProfilesFor(lab)
	if err != nil {
		t.Fatal(err)
	}
	return lab, Options{CPUProfiles: profiles, ProfileFiles: files}
}

// runLab runs every workload of every scenario of a lab on the model.
func runLab(t *testing.T, dir string) (*config.Lab, *result.Results, []byte) {
	t.Helper()
	lab, opts := loadLab(t, dir)
	e := New(opts)
	res := &result.Results{FormatVersion: 1, Lab: lab.Name, Engine: e.Name()}
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
	return lab, res, js
}

// knownFailing are the verdicts the model gets wrong today, by example,
// expectation and scenario, with why. TestExamples asserts each one FAILS,
// so a model that gets it right turns it into a test failure: remove the
// entry then.
var knownFailing = map[string]string{
	// The Super TSO patch's deferral (super-tso-v2) loses where the
	// receivers bind (TSO on, MTU 1500: the windows open in small steps
	// and the whole-buffer rule waits), and with TSO off its all-page skb
	// layout (patch 1/9's, cut back for routes without TSO by the merged
	// "Fix send-side cpu utiliziation regression") costs the bus a DMA
	// buffer more per frame, priced by bus_per_buffer as 2.6.12-rc4's own
	// TSO-off rows fit it: those verdicts pass. At MTU 9000 with TSO on
	// the sender's bus binds, the windows stay open, deferral rarely
	// waits, and the patch's larger frames need fewer DMA transfers and
	// buffers than 2.6.12's cwnd/8 frames: docs/engine.md, seeds 001 and
	// 000, says what was searched for the patch's code.
	"super-tso-v2/v2_slower_tso_on_9000/stack=super-tso-v2,tso=true,mtu=9000": "issue 11: bus-bound at MTU 9000, " +
		"the patch's 3.4-MSS frames need fewer DMA transfers than 2.6.12's 1.8-MSS ones (model +3.0%, seed 001 -6.6%)",
	"super-tso-v2/original_slower_back_to_back/stack=super-tso-v2,tso=true,mtu=9000": "issue 11: bus-bound as " +
		"seed 001's MTU 9000 row; the 2.6.11.5 receiver's ucopy ACKs (ucopy_delack) thin the ACKs but do not bind (model +5.8%, seed 000 -14.4%)",
}

// TestExamples loads every example lab, runs each scenario on the model
// twice (the JSON must be identical) and judges its expectations: every
// verdict must PASS, except the knownFailing ones, which must FAIL.
func TestExamples(t *testing.T) {
	dirs, err := filepath.Glob("../../examples/*")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			lab, res, js1 := runLab(t, dir)
			_, _, js2 := runLab(t, dir)
			if !bytes.Equal(js1, js2) {
				t.Errorf("two runs gave different JSON (%d and %d bytes)", len(js1), len(js2))
			}
			verdicts, diags := outcome.Evaluate(lab, res, nil)
			if diags.HasErrors() {
				t.Fatalf("outcome.Evaluate: %v", diags)
			}
			if len(verdicts) == 0 {
				t.Fatalf("no verdicts: the lab has no expectation the model judges")
			}
			for _, v := range verdicts {
				key := name + "/" + v.Expect + "/" + v.Scenario
				why, known := knownFailing[key]
				seen[key] = true
				switch {
				case known && v.Status != outcome.Fail:
					t.Errorf("%s is listed as failing on the model (%s) but is %s now: remove it from knownFailing", key, why, v.Status)
				case !known && v.Status != outcome.Pass:
					t.Errorf("%s in %s: %s: %s (%s) %s", v.Expect, v.Scenario, v.Status, v.Expression, v.Message, v.Detail)
				}
			}
			for _, r := range res.Runs {
				m := r.Metrics
				t.Logf("%v %v\n%s/%s: %.3g Gb/s units %.0f avg %.0f single %.3f pkts %.0f cpu tx %.1f rx %.1f tps %.0f retr %.0f",
					r.StopReasons, r.Acks, r.Scenario, r.Workload, m["throughput_bps"]/1e9, m["send_units"], m["avg_send_bytes"], m["single_mss_fraction"], m["data_packets"], m["cpu_tx_pct"], m["cpu_rx_pct"], m["transactions_per_s"], m["retransmits"])
			}
		})
	}
	for key := range knownFailing {
		if !seen[key] {
			t.Errorf("knownFailing lists %s, which no example judged", key)
		}
	}
}

// TestSoftwareGSOCut is seed 002 on examples/software-gso: at a fixed
// 1000 Mb/s, software GSO on the SG+CSUM NIC cuts the sender's CPU
// (linux-2.6.27: 29.3% -> 15.6% of a core). The lab itself does not claim
// it, because kernels since 4.19 build GSO whatever the flag says.
func TestSoftwareGSOCut(t *testing.T) {
	_, res, _ := runLab(t, "../../examples/software-gso")
	cpu := map[string]float64{}
	for _, r := range res.Runs {
		cpu[r.Scenario] = r.Metrics[result.MetricCPUTxPct]
	}
	on, off := cpu["gso=true"], cpu["gso=false"]
	t.Logf("cpu_tx_pct: gso on %.1f, off %.1f", on, off)
	if !(on > 0 && on < off) {
		t.Errorf("software GSO: cpu_tx_pct %.1f with gso on, %.1f off; seed 002 has it cut", on, off)
	}
}
