package sim

import (
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
)

// BenchmarkStream10G simulates one 10 Gb/s stream moving 1 GB (about
// 700k wire segments) on linux-6 and reports simulated wire segments per
// wall-clock second and heap allocations per segment (benchRun).
func BenchmarkStream10G(b *testing.B) {
	p := pair{stack: "linux-6", mtu: 1500, rate: 10e9, delay: 20 * time.Microsecond,
		wl: config.Workload{Bytes: 1e9, WriteSize: 65536}}
	sc := p.scenario()
	benchRun(b, engine.RunRequest{Scenario: sc, Workload: sc.Workloads[0]})
}
