package sim

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
)

// BenchmarkStream10G simulates one 10 Gb/s stream moving 1 GB (about
// 700k wire segments) on linux-6 and reports simulated wire segments per
// wall-clock second and heap allocations per segment.
func BenchmarkStream10G(b *testing.B) {
	p := pair{stack: "linux-6", mtu: 1500, rate: 10e9, delay: 20 * time.Microsecond,
		wl: config.Workload{Bytes: 1e9, WriteSize: 65536}}
	sc := p.scenario()
	e := New(Options{})
	req := engine.RunRequest{Scenario: sc, Workload: sc.Workloads[0]}
	var segs float64
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		res, err := e.Run(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		segs += res.Metrics[engine.MetricDataPackets]
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/segs, "allocs/segment")
	b.ReportMetric(segs/elapsed.Seconds(), "segments/s")
}
