package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
)

// loopPair is a 10 Gb/s linux-6 stream of 2 s: about 1.6 M segments,
// far more events than the loop runs between two looks at its context.
func loopPair() engine.RunRequest {
	p := pair{stack: "linux-6", mtu: 1500, rate: 10e9, delay: 20 * time.Microsecond,
		wl: config.Workload{Duration: 2 * time.Second, WriteSize: 65536}}
	sc := p.scenario()
	return engine.RunRequest{Scenario: sc, Workload: sc.Workloads[0]}
}

// TestLoopReportsEachSecond: the loop, which runs its events in batches
// (run), stops a batch at the first event at or past each second, so a
// report is due: one report a second, each timed by the first event
// past its second (events of a 10 Gb/s stream are a few µs apart), and
// the last at the end of the duration.
func TestLoopReportsEachSecond(t *testing.T) {
	req := loopPair()
	var got []engine.Progress
	req.Progress = func(p engine.Progress) { got = append(got, p) }
	if _, err := New(Options{}).Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("got %d progress reports, want 2 (one a second of 2 s): %+v", len(got), got)
	}
	for i, p := range got {
		at := time.Duration(i+1) * time.Second
		if p.Elapsed < at || p.Elapsed > at+100*time.Microsecond {
			t.Errorf("report %d at %v, want the first event at or after %v (within 100µs)", i, p.Elapsed, at)
		}
		if p.ThroughputBps <= 0 {
			t.Errorf("report %d: throughput %v, want the second's reads", i, p.ThroughputBps)
		}
	}
}

// TestLoopStopsWhenCancelled: a cancelled context stops the run at the
// next look (every ctxEvery events) with its error.
func TestLoopStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New(Options{}).Run(ctx, loopPair())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run with a cancelled context: error %v, want %v", err, context.Canceled)
	}
}
