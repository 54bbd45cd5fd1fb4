package sim

import (
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
)

// TestNoAllocationPerSegment runs workloads for a time and for twice that
// time: the longer run makes tens of thousands more segments but at most a
// few more heap allocations (slices that double: the millisecond bins,
// the rr latencies, a ring or a queue reaching a new high), so the steady
// state allocates nothing per segment.
func TestNoAllocationPerSegment(t *testing.T) {
	tests := []struct {
		name string
		p    pair
	}{
		{"linux-6 gro stream", pair{stack: "linux-6", mtu: 1500, rate: 10e9, delay: 20 * time.Microsecond,
			wl: config.Workload{WriteSize: 65536, Connections: 4}}},
		{"linux-2.6.12 tso 8 streams (no gro)", pair{stack: "linux-2.6.12", cpu: "opteron-2005", mtu: 1500, rate: 10e9,
			wl: config.Workload{WriteSize: 65536, Connections: 8}}},
		{"freebsd-10 lro stream", pair{stack: "freebsd-10", cpu: "node-2016", mtu: 1500, rate: 10e9,
			offRx: offloads(map[config.Offload]bool{config.LRO: true}),
			wl:    config.Workload{WriteSize: 65536}}},
		{"linux-2.6.27 rr", pair{stack: "linux-2.6.27", mtu: 1500, rate: 10e9,
			wl: config.Workload{Kind: config.RR, RequestSize: 256, ResponseSize: 100000, Concurrency: 4, NoDelay: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := func(d time.Duration) (allocs, segs float64) {
				p := tt.p
				p.wl.Duration = d
				sc := p.scenario()
				req := engine.RunRequest{Scenario: sc, Workload: sc.Workloads[0]}
				e := New(Options{})
				allocs = testing.AllocsPerRun(3, func() {
					segs = float64(runWorld(t, e, req).stats.wireSegs)
				})
				return allocs, segs
			}
			a1, s1 := run(100 * time.Millisecond)
			a2, s2 := run(200 * time.Millisecond)
			t.Logf("100 ms: %.0f allocations, %.0f segments; 200 ms: %.0f allocations, %.0f segments", a1, s1, a2, s2)
			if s2-s1 < 10000 {
				t.Fatalf("the longer run made %.0f more segments: too few to tell", s2-s1)
			}
			if a2-a1 > 8 {
				t.Errorf("%.0f more allocations for %.0f more segments: something allocates per segment or per event", a2-a1, s2-s1)
			}
		})
	}
}
