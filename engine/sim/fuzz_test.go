package sim

import (
	"context"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
)

// FuzzModel runs random two-host labs with the invariant checker on:
// every byte written is delivered exactly once and in order, no unit
// cut into one segment exceeds the MSS, a unit's pcount is what the split
// makes of it, packets in flight stay within cwnd after a new send (FIN
// rule excepted), and a byte-bound stream completes.
func FuzzModel(f *testing.F) {
	f.Add(uint8(0), uint16(1500), uint8(0xff), uint32(200000), uint16(65535), uint32(1<<20), uint32(1<<20), uint8(1), uint16(20), uint8(0))
	f.Add(uint8(4), uint16(1500), uint8(0x17), uint32(3000000), uint16(60000), uint32(1<<20), uint32(2<<20), uint8(1), uint16(20), uint8(1))
	f.Add(uint8(2), uint16(9000), uint8(0x05), uint32(500000), uint16(1000), uint32(65536), uint32(32768), uint8(3), uint16(100), uint8(2))
	f.Add(uint8(1), uint16(576), uint8(0x00), uint32(77777), uint16(333), uint32(8192), uint32(8192), uint8(2), uint16(1), uint8(3))
	f.Fuzz(func(t *testing.T, stackIdx uint8, mtu uint16, flags uint8, nbytes uint32, write uint16, sndbuf, rcvbuf uint32, conns uint8, delayUs uint16, misc uint8) {
		stacks := StackNames()
		mtu = max(576, min(mtu, 9000))
		nbytes = max(1, nbytes%4_000_000)
		rcv := int(max(uint32(4*int(mtu)), rcvbuf%(4<<20)))
		snd := int(max(uint32(4096), sndbuf%(4<<20)))
		o := offloads(map[config.Offload]bool{
			config.TSO: flags&1 != 0, config.SG: flags&2 != 0, config.TxCsum: flags&4 != 0,
			config.GSO: flags&8 != 0, config.GRO: flags&16 != 0, config.LRO: flags&32 != 0,
			config.RxCsum: flags&64 != 0,
		})
		p := pair{
			stack: stacks[int(stackIdx)%len(stacks)], rxStack: stacks[int(stackIdx/8)%len(stacks)],
			mtu: int(mtu), rate: config.Rate(1e8 * (1 + uint64(misc%100))), delay: time.Duration(delayUs%2000) * time.Microsecond,
			offTx: o, offRx: o,
			wl: config.Workload{
				Bytes: int64(nbytes), WriteSize: int(max(512, write)), SndBuf: snd, RcvBuf: rcv,
				Connections: int(1 + conns%3), NoDelay: misc&1 != 0,
			},
		}
		sc := p.scenario()
		sc.Hosts[1].DelayedAck = misc&2 == 0
		if misc&4 != 0 {
			// A small queue: tail drops and retransmissions. It holds
			// two 64 KB GSO frames, which linux-6 builds whatever the
			// NIC's flags: a queue smaller than one frame drops every
			// burst whole, and no stack completes then, real or modelled.
			sc.NICs[0].Queue = max(int64(8*int(mtu)), 2*65536)
		}
		e := New(Options{MaxSimTime: 120 * time.Second})
		e.checks = true
		res, err := e.Run(context.Background(), engine.RunRequest{Scenario: sc, Workload: sc.Workloads[0]})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if errs := e.lastCheck.errs; len(errs) > 0 {
			t.Fatalf("invariants broken: %v", errs)
		}
		want := float64(nbytes) * float64(p.wl.Connections)
		if got := res.Metrics[engine.MetricBytes]; got != want {
			t.Fatalf("delivered %v bytes, want %v (notes %v)", got, want, res.Notes)
		}
	})
}
