package sim

import (
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
)

// TestReadSize: a stream reader asks for the workload's read_size a
// call, as the kernel engine's does. With LRO the receiver gets 64 KB
// skbs; read 4 KiB at a time each costs up to 16 calls where 128 KiB
// takes it in one, so the receiver's CPU grows with the calls, and the
// bytes carried stay the same. Unset, it is 128 KiB.
func TestReadSize(t *testing.T) {
	run := func(readSize int) (cpuRx, gbps float64) {
		p := pair{stack: "linux-6", mtu: 1500, rate: 10e9,
			offTx: offloads(map[config.Offload]bool{config.TSO: true}),
			offRx: offloads(map[config.Offload]bool{config.LRO: true}),
			wl:    config.Workload{Duration: 100 * time.Millisecond, ReadSize: readSize}}
		res := runScenario(t, New(Options{}), p.scenario())
		return res.Metrics["cpu_rx_pct"], res.Metrics["throughput_bps"] / 1e9
	}
	smallCPU, smallRate := run(4096)
	bigCPU, bigRate := run(128 << 10)
	defCPU, defRate := run(0)
	t.Logf("read_size 4 KiB: rx %.2f%% of a core, %.3f Gb/s; 128 KiB: %.2f%%, %.3f Gb/s; unset: %.2f%%, %.3f Gb/s",
		smallCPU, smallRate, bigCPU, bigRate, defCPU, defRate)
	if defCPU != bigCPU || defRate != bigRate {
		t.Errorf("unset read_size gives %.2f%% at %.3f Gb/s, 128 KiB %.2f%% at %.3f: want the default to be 128 KiB", defCPU, defRate, bigCPU, bigRate)
	}
	// Up to 15 more calls of `modern`'s Syscall for each 64 KB skb, at
	// 10 Gb/s; the reader often finds less than 64 KB, so fewer (2.9
	// points of a core when written).
	if smallCPU < bigCPU+1 {
		t.Errorf("receiver CPU %.2f%% reading 4 KiB a call, %.2f%% reading 128 KiB: want at least a point more for the extra calls", smallCPU, bigCPU)
	}
	if d := smallRate / bigRate; d < 0.98 || d > 1.02 {
		t.Errorf("throughput %.3f against %.3f Gb/s: the read size should not move it here", smallRate, bigRate)
	}
}
