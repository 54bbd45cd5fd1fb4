package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/result"
)

// fuzzOptions are stack_options the fuzzer picks from, by profile: each
// switches one strategy or socket-buffer default away from the default.
var fuzzOptions = map[string][]map[string]string{
	"linux-2.6.12": {{"ucopy_delack": "true"}},
	"linux-2.6.27": {{"size_goal_modulo": "false"}, {"tso_defer": "false"}, {"size_goal_modulo": "false", "tso_defer": "false"}},
	"linux-6":      {{"tso_defer": "false"}},
	"freebsd-10":   {{"sendbuf_auto": "false"}, {"sendspace": "1048576", "recvspace": "2097152", "maxsockbuf": "16777216"}, {"sendbuf_inc": "65536", "sendbuf_max": "262144"}},
	"freebsd-11":   {{"sendbuf_auto": "false"}, {"sendspace": "1048576", "recvspace": "2097152", "maxsockbuf": "16777216"}},
}

// fuzzEventBudget bounds the events of one run of a FuzzModel lab. Go's
// fuzz worker gives an input 10 s of wall time, a fixed timer
// (internal/fuzz RunFuzzWorker, go1.26) whose panic kills the worker
// ("fuzzing process hung or terminated unexpectedly: exit status 2")
// and records the input, which then passes alone. The target runs a lab
// twice; an rr lab of 3 s at 5.8 Gb/s and MTU 612 takes 17.7 M events a
// run, 3 s each in a plain test and more than 5 s under the fuzzer.
// Measured on the 2-core machine at load 5-12: a plain test binary ran
// 4.6-6 M events/s on each of the 1061 corpus inputs above 40 k events;
// the fuzzing binary, with a budget of 2^19 for every lab, took up to
// 7.4 s for an input of fewer than 2^20 events (under 0.15 M events/s)
// in 32 k executions. A duration-bound or rr lab ends after the budget,
// as its duration's end would. A byte-bound lab (at most 24 MB; the
// largest made by hand took 310 k events) has twice the budget and fails
// when it reaches it. So an input is at most about 620 k events.
const fuzzEventBudget = 1 << 18

// FuzzModel runs random labs with the invariant checker on: every byte
// written is delivered exactly once and in order, no unit cut into one
// segment exceeds the MSS, a unit's pcount is what the split makes of it,
// packets in flight stay within cwnd after a new send (FIN rule excepted).
// Labs are two hosts back to back or a sender and two receivers on a
// switch, with or without a bus limit and stack options; workloads are
// streams (byte- or duration-bound, paced or not), sendfile and
// request/response. A byte-bound stream must deliver every byte, a
// duration-bound one some, an rr workload one transaction's bytes, and
// two runs of one lab must give identical results. A run ends after
// its budget of events (fuzzEventBudget), and the checker fails one whose
// simulated time stands still (a livelock).
func FuzzModel(f *testing.F) {
	f.Add(uint8(0), uint16(1500), uint8(0xff), uint32(200000), uint16(65535), uint32(1<<20), uint32(1<<20), uint8(1), uint16(20), uint8(0), uint16(0), uint32(0))
	f.Add(uint8(4), uint16(1500), uint8(0x17), uint32(3000000), uint16(60000), uint32(1<<20), uint32(2<<20), uint8(1), uint16(20), uint8(1), uint16(0), uint32(0))
	f.Add(uint8(2), uint16(9000), uint8(0x05), uint32(500000), uint16(1000), uint32(65536), uint32(32768), uint8(3), uint16(100), uint8(2), uint16(0), uint32(0))
	f.Add(uint8(1), uint16(576), uint8(0x00), uint32(77777), uint16(333), uint32(8192), uint32(8192), uint8(2), uint16(1), uint8(3), uint16(0), uint32(0))
	// rr, sendfile, paced stream, duration-bound, switch, bus, options.
	f.Add(uint8(4), uint16(1500), uint8(0x0f), uint32(0), uint16(0), uint32(0), uint32(1<<20), uint8(0), uint16(50), uint8(0), uint16(0x0001|0x0004), uint32(1000|200000<<12))
	f.Add(uint8(2), uint16(1500), uint8(0x0e), uint32(0), uint16(0), uint32(0), uint32(1<<20), uint8(0), uint16(50), uint8(0), uint16(0x0001|0x0004|0x0020), uint32(200000|1000<<12))
	f.Add(uint8(3), uint16(1500), uint8(0x0e), uint32(0), uint16(0), uint32(0), uint32(0), uint8(0), uint16(20), uint8(9), uint16(0x0002|0x0004|0x0040), uint32(0))
	f.Add(uint8(5), uint16(1500), uint8(0x07), uint32(4000000), uint16(65535), uint32(0), uint32(0), uint8(1), uint16(20), uint8(4), uint16(0x0003|0x0008|0x0010|0x0020), uint32(0))
	f.Add(uint8(0), uint16(1500), uint8(0x07), uint32(0), uint16(2000), uint32(0), uint32(0), uint8(2), uint16(10), uint8(0), uint16(0x0004|0x0008|0x0040), uint32(0))
	f.Add(uint8(1), uint16(9000), uint8(0x1f), uint32(0), uint16(0), uint32(0), uint32(0), uint8(3), uint16(300), uint8(0), uint16(0x0001|0x0004|0x0008|0x0010), uint32(300|70000<<12))
	// rr messages larger than half the default receive buffer (2.6.12:
	// 174760 bytes), read in parts.
	f.Add(uint8(2), uint16(1500), uint8(0x07), uint32(0), uint16(0), uint32(0), uint32(0), uint8(0), uint16(50), uint8(0), uint16(0x0001|0x0004), uint32(1000|200000<<12))
	f.Add(uint8(0), uint16(1500), uint8(0x07), uint32(0), uint16(0), uint32(0), uint32(0), uint8(0), uint16(50), uint8(0), uint16(0x0001|0x0004), uint32(1000|100000<<12))
	f.Fuzz(func(t *testing.T, stackIdx uint8, mtu uint16, flags uint8, nbytes uint32, write uint16, sndbuf, rcvbuf uint32, conns uint8, delayUs uint16, misc uint8, shape uint16, msg uint32) {
		stacks := StackNames()
		mtu = max(576, min(mtu, 9000))
		nbytes = max(1, nbytes%4_000_000)
		rcv := 0
		if rcvbuf != 0 {
			rcv = int(max(uint32(4*int(mtu)), rcvbuf%(4<<20)))
		}
		snd := 0
		if sndbuf != 0 {
			snd = int(max(uint32(4096), sndbuf%(4<<20)))
		}
		o := offloads(map[config.Offload]bool{
			config.TSO: flags&1 != 0, config.SG: flags&2 != 0, config.TxCsum: flags&4 != 0,
			config.GSO: flags&8 != 0, config.GRO: flags&16 != 0, config.LRO: flags&32 != 0,
			config.RxCsum: flags&64 != 0,
		})
		stack := stacks[int(stackIdx)%len(stacks)]
		wl := config.Workload{
			Bytes: int64(nbytes), WriteSize: int(max(512, write)), SndBuf: snd, RcvBuf: rcv,
			Connections: int(1 + conns%3), NoDelay: misc&1 != 0, Cork: shape&0x100 != 0,
		}
		durationBound := shape&0x4 != 0
		switch shape & 3 {
		case 1:
			wl.Kind = config.RR
			wl.RequestSize = int(1 + msg%4096*64%300000)
			wl.ResponseSize = int(1 + (msg>>12)%300000)
			wl.Concurrency = int(1 + conns%4)
			wl.Connections = 0
		case 2:
			wl.Kind = config.Sendfile
			wl.FileSize = 64 << 20
			wl.Rate = config.Rate(1e8 * (1 + uint64(misc%20)))
		case 3:
			wl.Kind = config.Stream
			wl.Rate = config.Rate(1e8 * (1 + uint64(misc%20)))
		}
		switch {
		case wl.Kind == config.RR:
			// Long enough for a transaction of 300 KB each way at
			// 100 Mb/s, or through a 4 KB send buffer under a
			// 9000-byte MSS, which waits out a delayed ACK per 4 KB.
			wl.Bytes = 0
			wl.Duration = 3 * time.Second
		case durationBound:
			// Past the first probe timer (the initial RTO of 1 s: the
			// model has no handshake to sample the RTT), which is what
			// sends a corked buffer smaller than the MSS when the send
			// buffer holds no more.
			wl.Bytes = 0
			wl.Duration = time.Duration(1100+int(delayUs%300)) * time.Millisecond
		}
		p := pair{
			stack: stack, rxStack: stacks[int(stackIdx/8)%len(stacks)],
			mtu: int(mtu), rate: config.Rate(1e8 * (1 + uint64(misc%100))), delay: time.Duration(delayUs%2000) * time.Microsecond,
			offTx: o, offRx: o, wl: wl,
		}
		if shape&0x10 != 0 {
			p.bus = config.Rate(5e8 * (1 + uint64(misc%20)))
		}
		if opts := fuzzOptions[stack]; shape&0x20 != 0 && len(opts) > 0 {
			p.stackOptions = opts[int(shape>>9)%len(opts)]
		}
		sc := p.scenario()
		sc.Hosts[1].DelayedAck = misc&2 == 0
		if shape&0x8 != 0 {
			// A sender and two receivers on a switch.
			rx2 := *sc.Hosts[1]
			rx2.Name = "rx2"
			sc.Hosts = append(sc.Hosts, &rx2)
			sc.Switches = []*config.Switch{{Name: "sw"}}
			nic2 := *sc.NICs[1]
			nic2.Name, nic2.Host = "rx2", "rx2"
			sc.NICs = append(sc.NICs, &nic2)
			for _, n := range sc.NICs {
				n.Peer, n.Connect = "", "sw"
			}
			sc.Workloads[0].Servers = []string{"rx0", "rx2"}
		}
		if misc&4 != 0 {
			// A small queue: tail drops and retransmissions. It holds
			// two 64 KB GSO frames, which linux-6 builds whatever the
			// NIC's flags: a queue smaller than one frame drops every
			// burst whole, and no stack completes then, real or modelled.
			sc.NICs[0].Queue = max(int64(8*int(mtu)), 2*65536)
		}
		budget := int64(fuzzEventBudget)
		if wl.Kind != config.RR && !durationBound {
			budget *= 2
		}
		// run runs the lab and says whether the budget ended it.
		run := func() (*result.WorkloadResult, []byte, bool) {
			e := New(Options{MaxSimTime: 120 * time.Second})
			e.checks, e.eventBudget = true, budget
			res, err := e.Run(context.Background(), engine.RunRequest{Scenario: sc, Workload: sc.Workloads[0]})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if errs := e.lastCheck.errs; len(errs) > 0 {
				t.Fatalf("invariants broken: %v", errs)
			}
			js, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			return res, js, e.lastCheck.cut
		}
		res, js1, cut := run()
		if _, js2, _ := run(); !bytes.Equal(js1, js2) {
			t.Fatalf("two runs of one lab differ:\n%s\n%s", js1, js2)
		}
		servers := float64(len(sc.Workloads[0].Servers))
		want := float64(nbytes) * float64(wl.Connections) * servers // a byte-bound lab's
		ran := time.Duration(res.Metrics[result.MetricDurationS] * 1e9)
		switch {
		case wl.Kind == config.RR:
			// A whole transaction's bytes read: a message larger than
			// the receive window must not stall its reader.
			if res.Metrics[result.MetricBytes] < float64(wl.RequestSize+wl.ResponseSize) {
				t.Fatalf("rr %d/%d: %v bytes read in %v (budget cut %v), not one transaction's (stops %v, notes %v)", wl.RequestSize, wl.ResponseSize, res.Metrics[result.MetricBytes], ran, cut, res.StopReasons, res.Notes)
			}
		case durationBound:
			if res.Metrics[result.MetricBytes] <= 0 {
				t.Fatalf("nothing delivered in %v (budget cut %v, stops %v, notes %v)", ran, cut, res.StopReasons, res.Notes)
			}
		case cut:
			t.Fatalf("a byte-bound lab took %d events and delivered %v of %v bytes in %v: far more events than such a lab needs (a loop?)", budget, res.Metrics[result.MetricBytes], want, ran)
		default:
			if got := res.Metrics[result.MetricBytes]; got != want {
				t.Fatalf("delivered %v bytes, want %v (notes %v)", got, want, res.Notes)
			}
		}
	})
}
