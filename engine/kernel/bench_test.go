package kernel_test

import (
	"context"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/engine/kernel"
	"github.com/tsolab/tsolab/result"
)

// BenchmarkStreamCapture measures what counting send units costs a
// full-speed stream on veth at MTU 1500 with TSO off (the worst case for
// the AF_PACKET ring: one cloned packet per wire segment), and whether the
// counter keeps up:
//
//	go test -run - -bench StreamCapture -benchtime 3x ./engine/kernel
//
// Compare gbps of counter=off with counter=bpf (the default eBPF counter
// at net_dev_queue) and counter=ring (the AF_PACKET ring); loss_pct is
// capture_loss over the packets counted plus lost.
func BenchmarkStreamCapture(b *testing.B) {
	p := newPair(b, 1500)
	p.setFeatures(b, "tx", "tx0", map[string]bool{featTSO: false})
	w := &config.Workload{Name: "bulk", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"},
		Connections: 1, WriteSize: 128 << 10, Duration: time.Second}
	p.Scenario.Workloads = []*config.Workload{w}
	for _, bc := range []struct {
		name string
		opts kernel.Options
	}{
		{"counter=off", kernel.Options{DisableCapture: true}},
		{"counter=bpf", kernel.Options{Counter: kernel.CounterBPF}},
		{"counter=ring", kernel.Options{Counter: kernel.CounterRing}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			eng := kernel.New(bc.opts)
			var bps, lost, packets float64
			for range b.N {
				res, err := eng.Run(context.Background(), engine.RunRequest{Scenario: p.Scenario, Workload: w, Naming: p.Naming})
				if err != nil {
					b.Fatal(err)
				}
				bps += res.Metrics[result.MetricThroughputBps]
				lost += res.Metrics[result.MetricCaptureLoss]
				packets += res.Metrics[result.MetricDataPackets] + res.Metrics[result.MetricCaptureLoss]
			}
			b.ReportMetric(bps/float64(b.N)/1e9, "gbps")
			if !bc.opts.DisableCapture {
				b.ReportMetric(100*lost/max(packets, 1), "loss_pct")
			}
		})
	}
}
