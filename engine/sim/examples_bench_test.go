package sim

import (
	"context"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/hcl"
)

// BenchmarkExamples runs every workload of every scenario of every example
// lab on the model, one sub-benchmark per cell
// (BenchmarkExamples/<lab>/<scenario>/<workload>), with benchRun's
// metrics.
func BenchmarkExamples(b *testing.B) {
	files, err := filepath.Glob("../../examples/*/lab.tsolab.hcl")
	if err != nil || len(files) == 0 {
		b.Fatalf("no example labs: %v", err)
	}
	for _, f := range files {
		dir := filepath.Dir(f)
		lab, diags := hcl.Load(dir, hcl.Options{})
		if diags.HasErrors() {
			b.Fatalf("hcl.Load(%s): %v", dir, diags)
		}
		b.Run(filepath.Base(dir), func(b *testing.B) {
			for _, sc := range lab.Scenarios {
				for _, wl := range sc.Workloads {
					req := engine.RunRequest{Lab: lab, Scenario: sc, Workload: wl}
					b.Run(sc.Name+"/"+wl.Name, func(b *testing.B) { benchRun(b, req) })
				}
			}
		})
	}
}

// benchRun runs req on the model b.N times and reports the simulated data
// segments on the wire (both directions: an rr workload's responses
// count) per wall-clock second and per second of the process's CPU time
// (user and system, garbage collection included: steadier than the wall
// clock on a shared machine), heap allocations per segment, and events
// the loop ran per segment (the queue's and the dispatch's share of the
// time grows with it).
func benchRun(b *testing.B, req engine.RunRequest) {
	e := New(Options{})
	var segs, events int64
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0 := cpuTime(b)
	start := time.Now()
	for b.Loop() {
		w := runWorld(b, e, req)
		w.result(req, w.finishAt)
		segs += w.stats.wireSegs
		events += w.stats.events
	}
	elapsed := time.Since(start)
	cpu := cpuTime(b) - cpu0
	runtime.ReadMemStats(&after)
	if segs == 0 {
		b.Fatal("no data segment went on the wire")
	}
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(segs), "allocs/segment")
	b.ReportMetric(float64(events)/float64(segs), "events/segment")
	b.ReportMetric(float64(segs)/elapsed.Seconds(), "segments/s")
	b.ReportMetric(float64(segs)/cpu.Seconds(), "segments/cpu-s")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runWorld runs req on e as Run does, without the result, and returns the
// world with its counters.
func runWorld(tb testing.TB, e *Engine, req engine.RunRequest) *world {
	w, err := e.build(req.Scenario, req.Workload, req.Repetition)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := w.loop(context.Background(), req); err != nil {
		tb.Fatal(err)
	}
	return w
}
