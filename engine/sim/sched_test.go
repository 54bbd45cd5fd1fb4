package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/hcl"
	"github.com/tsolab/tsolab/result"
)

// TestSchedulerSeed: a host whose CPU profile has a scheduler draws its
// threads' wake-up latencies from the run's random source, so one seed
// gives one run byte for byte, another seed another run, and the
// provenance names the seed. Without a scheduler nothing is drawn: the
// seed changes nothing and is not reported.
func TestSchedulerSeed(t *testing.T) {
	tso := offloads(map[config.Offload]bool{config.TSO: true, config.SG: true, config.TxCsum: true})
	run := func(cpu string, seed uint64, rep int) ([]byte, *result.WorkloadResult) {
		p := pair{stack: "freebsd-10", cpu: cpu, mtu: 1500, rate: 10e9, delay: 20 * time.Microsecond, offTx: tso,
			wl: config.Workload{Bytes: 20 << 20, WriteSize: 131072}}
		sc := p.scenario()
		res, js := runJSON(t, New(Options{Seed: seed}), engine.RunRequest{Scenario: sc, Workload: sc.Workloads[0], Repetition: rep})
		return js, res
	}
	a, ra := run("node-2016", 7, 0)
	b, _ := run("node-2016", 7, 0)
	if !bytes.Equal(a, b) {
		t.Errorf("seed 7 twice: the runs differ")
	}
	if s := ra.Provenance.Model.Seed; s == nil || *s != 7 {
		t.Errorf("provenance seed = %v, want 7", s)
	}
	c, _ := run("node-2016", 8, 0)
	if bytes.Equal(a, c) {
		t.Errorf("seeds 7 and 8 gave the same run: nothing was drawn")
	}
	d, _ := run("node-2016", 7, 1)
	if bytes.Equal(a, d) {
		t.Errorf("repetitions 0 and 1 of seed 7 gave the same run")
	}
	x, rx := run("xeon-2016", 7, 0)
	y, _ := run("xeon-2016", 8, 0)
	if !bytes.Equal(x, y) {
		t.Errorf("without a scheduler, seeds 7 and 8 gave different runs")
	}
	if s := rx.Provenance.Model.Seed; s != nil {
		t.Errorf("without a scheduler the provenance reports seed %d", *s)
	}
}

// TestSchedulerHash: a scheduler is part of the model's definition (its
// hash), and a profile without one hashes as %+v printed it before
// schedulers existed, so runs of unchanged profiles keep their hash.
func TestSchedulerHash(t *testing.T) {
	p := builtinCPUProfiles()[0]
	if p.Sched != nil {
		t.Fatalf("%s has a scheduler; the test wants one without", p.Name)
	}
	plain := p.hashText()
	if bytes.Contains([]byte(plain), []byte("Sched")) || plain[len(plain)-1] != '}' {
		t.Errorf("hash text of a profile without a scheduler: %q", plain)
	}
	p.Sched = &freebsd10Xeon
	if with := p.hashText(); with == plain {
		t.Errorf("a scheduler does not change the hash text")
	}
}

// seed003Figures are the seed's sender-trace figures (seed 003): the
// before-change run's share of single-MSS sends and the after-change
// run's data packets.
const (
	seed003BeforeSingles = 0.762
	seed003AfterPackets  = 35729
	seed003Gbps          = 2.69
)

// TestSeed003TwentySeeds runs examples/freebsd-tso-trim, whose node-2016
// hosts have a scheduler (freebsd10Xeon), with 20 seeds of the random
// source, and asserts what holds on every seed: the run is reproducible,
// the old trimming sends more single-MSS packets than the change (the
// seed's direction), the after-change sends and the before-change
// throughput are within 20% of the seed's. It also pins what does not
// hold, as docs/engine.md (seed 003) states it: the before-change share
// stays below the seed's 60% bar and the after-change share at or above
// 1% on every seed. A model that reaches either fails here: update the
// docs, the lab's expectations and knownFailing then.
func TestSeed003TwentySeeds(t *testing.T) {
	lab, diags := hcl.Load("../../examples/freebsd-tso-trim", hcl.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	profiles, files, err := ProfilesFor(lab)
	if err != nil {
		t.Fatal(err)
	}
	cell := func(stack string) *config.Scenario {
		for _, sc := range lab.Scenarios {
			if sc.Name == "stack="+stack {
				return sc
			}
		}
		t.Fatalf("no scenario stack=%s", stack)
		return nil
	}
	before, after := cell("freebsd-10"), cell("freebsd-11")
	var singlesBefore, singlesAfter []float64
	for seed := uint64(0); seed < 20; seed++ {
		e := New(Options{CPUProfiles: profiles, ProfileFiles: files, Seed: seed})
		run := func(sc *config.Scenario) (*result.WorkloadResult, []byte) {
			return runJSON(t, e, engine.RunRequest{Lab: lab, Scenario: sc, Workload: sc.Workloads[0]})
		}
		b, bjs := run(before)
		if _, again := run(before); !bytes.Equal(bjs, again) {
			t.Errorf("seed %d: two runs of %s differ", seed, before.Name)
		}
		a, _ := run(after)
		bm, am := b.Metrics, a.Metrics
		sb, sa := bm[result.MetricSingleMSSFrac], am[result.MetricSingleMSSFrac]
		singlesBefore, singlesAfter = append(singlesBefore, sb), append(singlesAfter, sa)
		t.Logf("seed %2d: before %5.1f%% single-MSS of %5.0f sends, %.2f Gb/s; after %4.2f%% of %5.0f, %.2f Gb/s",
			seed, 100*sb, bm[result.MetricSendUnits], bm[result.MetricThroughputBps]/1e9,
			100*sa, am[result.MetricSendUnits], am[result.MetricThroughputBps]/1e9)
		if !(sb > sa) {
			t.Errorf("seed %d: single-MSS before %.3f, after %.3f: the seed has more before", seed, sb, sa)
		}
		if g := bm[result.MetricThroughputBps] / 1e9; g < 0.8*seed003Gbps || g > 1.2*seed003Gbps {
			t.Errorf("seed %d: before-change throughput %.2f Gb/s, seed ~%.2f", seed, g, seed003Gbps)
		}
		if u := am[result.MetricSendUnits]; u < 0.8*seed003AfterPackets || u > 1.2*seed003AfterPackets {
			t.Errorf("seed %d: %0.f sends after the change, seed %d", seed, u, seed003AfterPackets)
		}
		if sb >= 0.60 {
			t.Errorf("seed %d: before-change single-MSS share %.3f reaches the 60%% bar: docs/engine.md says it does not", seed, sb)
		}
		if sa < 0.01 {
			t.Errorf("seed %d: after-change single-MSS share %.4f is below 1%%: docs/engine.md says it is not", seed, sa)
		}
	}
	t.Logf("before: %s (seed %.1f%%); after: %s (seed 0%%)", spread(singlesBefore), 100*seed003BeforeSingles, spread(singlesAfter))
}

// spread is the least, median and largest of shares, in %.
func spread(v []float64) string {
	s := slices.Sorted(slices.Values(v))
	return fmt.Sprintf("min %.2f%%, median %.2f%%, max %.2f%%", 100*s[0], 100*(s[len(s)/2-1]+s[len(s)/2])/2, 100*s[len(s)-1])
}

// runJSON runs one request and returns its result and the result's JSON.
func runJSON(t *testing.T, e *Engine, req engine.RunRequest) (*result.WorkloadResult, []byte) {
	t.Helper()
	res, err := e.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return res, js
}
