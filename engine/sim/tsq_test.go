package sim

import (
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
)

// TestSmallQueuesBoundTheQdisc: behind a 1 Gb/s shaper with a 64 MB
// queue, linux-6 without TSQ fills the queue with its window (megabytes
// queued, the RTT inflated by the queue); with TSQ a socket keeps about a
// millisecond of its pacing rate below TCP, and the queue stays short.
func TestSmallQueuesBoundTheQdisc(t *testing.T) {
	p := pair{stack: "linux-6", mtu: 1500, delay: 50 * time.Microsecond,
		wl: config.Workload{Duration: time.Second, WriteSize: 65536, CC: "reno"}} // no HyStart: slow start fills the queue
	sc := p.scenario()
	sc.NICs[0].Rate = 1e9
	sc.NICs[0].Queue = 64 << 20
	run := func(tsq bool) (queue float64, stops int64, gbps float64) {
		e := New(Options{})
		e.checks = true
		if !tsq {
			e.editProfile = func(p *profile) { p.tsq = nil }
		}
		res := runScenario(t, e, sc)
		if errs := e.lastCheck.errs; len(errs) > 0 {
			t.Errorf("invariants: %v", errs)
		}
		return e.lastCheck.maxQueue, res.StopReasons["tsq"], res.Metrics["throughput_bps"] / 1e9
	}
	onBelow, onStops, onRate := run(true)
	offBelow, offStops, offRate := run(false)
	t.Logf("TSQ: %.0f bytes queued at most, %d tsq stops, %.3f Gb/s; without: %.0f, %d, %.3f Gb/s", onBelow, onStops, onRate, offBelow, offStops, offRate)
	// ~1 ms of the pacing rate and a unit in flight. In slow start the
	// pacing rate is 200% of cwnd a round trip, and Linux 6.x lets cwnd
	// grow while it is below twice the most segments in flight
	// (tcp_is_cwnd_limited), so up to ~4x the 1 Gb/s delivery rate:
	// 500 KB, and the queue's delay raises srtt, not the rate.
	if onBelow > 1<<20 {
		t.Errorf("with TSQ the queue held %.0f bytes, want ~1 ms of the pacing rate (< 1 MB)", onBelow)
	}
	if offBelow < 2<<20 {
		t.Errorf("without TSQ the queue held only %.0f bytes; the test no longer shows what TSQ bounds", offBelow)
	}
	if onStops == 0 || offStops != 0 {
		t.Errorf("tsq stops %d with TSQ, %d without: want some, none", onStops, offStops)
	}
	if onRate < 0.9 || offRate < 0.9 {
		t.Errorf("throughput %.3f / %.3f Gb/s: the shaper should bind either way", onRate, offRate)
	}
}

// TestSmallQueueCheck is tcp_small_queue_check's rule on its own.
func TestSmallQueueCheck(t *testing.T) {
	const mss = 1448
	mk := func(sentBufs int, wmem, retransSeq int64) (*endpoint, *skb) {
		w := &world{}
		ep := &endpoint{w: w, mss: mss}
		s := &ep.snd
		s.cwnd, s.ssthresh, s.srtt = 100, 100, 100e3 // congestion avoidance: 120% of 100*1448 B / 100 us = 11.6 Gb/s: 1.41 MB a ms
		for i := range sentBufs {
			s.wq.q = append(s.wq.q, skb{seq: int64(i) * 65160, end: int64(i+1) * 65160})
		}
		s.wq.sendHead = sentBufs
		s.sndMax = int64(sentBufs) * 65160
		s.wq.q = append(s.wq.q, skb{seq: s.sndMax - retransSeq, end: s.sndMax - retransSeq + 65160})
		s.holdWmem(wmem-skbOverhead, 1e9)
		return ep, &s.wq.q[len(s.wq.q)-1]
	}
	limit := int64(1.2*100*mss*8*1e4/8) >> pacingShift
	tsq := &smallQueues{limitOutputBytes: 4 << 20}
	tests := []struct {
		name     string
		sent     int
		wmem     int64
		retrans  int64
		throttle bool
	}{
		{"below the limit", 20, limit - 1000, 0, false},
		{"above the limit", 20, limit + 1000, 0, true},
		{"above, one skb in the retransmit queue", 1, limit + 1000, 0, false},
		{"a retransmission may have twice as much", 20, 2*limit - 1000, 65160, false},
		{"capped by tcp_limit_output_bytes", 200, 4<<20 + 1, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep, b := mk(tt.sent, tt.wmem, tt.retrans)
			if tt.name == "capped by tcp_limit_output_bytes" {
				ep.snd.cwnd = 1000 // 14 MB a ms: the cap binds
			}
			if got := tsq.throttle(ep, b, 0); got != tt.throttle {
				t.Errorf("throttle = %v, want %v (limit %d, wmem %d)", got, tt.throttle, limit, tt.wmem)
			}
			if tt.throttle && (!ep.snd.tsqThrottled || !ep.snd.tsqEv || ep.w.q.len() != 1) {
				t.Errorf("a throttle must mark the socket and queue its handler for the next free")
			}
		})
	}
}

// runEndingUnsent runs oneMachine with TSO, two connections, and the
// receiver's cores and rate as given, for 200 ms or, when the second
// connection's sender then has nothing unsent or a full cwnd (the
// handler would send nothing), 210, 220, ... ms: the first run that ends
// with data unsent and room in the cwnd.
func runEndingUnsent(t *testing.T, coresOf string, rate config.Rate) *world {
	t.Helper()
	for d := 200 * time.Millisecond; d < 260*time.Millisecond; d += 10 * time.Millisecond {
		sc := oneMachine(true, rate)
		sc.Hosts[1].CoresOf = coresOf
		sc.Workloads[0].Connections = 2
		sc.Workloads[0].Duration = d
		w := runWorld(t, New(Options{}), engine.RunRequest{Scenario: sc, Workload: sc.Workloads[0]})
		if s := &w.eps[2].snd; s.wq.unsent() && s.inFlight() < s.cwnd {
			return w
		}
		t.Logf("a run of %v ended with nothing unsent or the cwnd full", d)
	}
	t.Fatal("every run of 200-250 ms ended with nothing unsent or the cwnd full: the handler would send nothing")
	return nil
}

// TestTSQHandlerCore: the TSQ handler runs where tcp_wfree found the
// socket throttled: for a NIC, on the core of the host's interrupts; for
// a veth to a host of the same machine, in the sending thread's context
// on its core; behind a tbf on such a veth, in the machine's softirq
// context that no thread runs (so neither side's threads are charged).
// Each run ends with the sender throttled and data unsent; the handler
// run by hand then must charge that core's view and no other.
func TestTSQHandlerCore(t *testing.T) {
	for _, tt := range []struct {
		name    string
		coresOf string
		rate    config.Rate
		core    func(ep *endpoint) *core
	}{
		{"a NIC: the interrupt core", "", 0, func(ep *endpoint) *core { return &ep.host.cores[ep.host.irqCore] }},
		{"a veth on one machine: the sender's core", "tx", 0, func(ep *endpoint) *core { return &ep.host.cores[ep.core] }},
		{"behind a tbf: the machine's softirq", "tx", 2e9, func(ep *endpoint) *core { return &ep.host.machine.soft.cores[ep.core] }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := runEndingUnsent(t, tt.coresOf, tt.rate)
			ep := w.eps[2] // the second connection's sender: core 1, not the interrupt core
			views := []*host{ep.host}
			if m := ep.host.machine; m != nil && m.soft != nil {
				views = append(views, m.soft)
			}
			before := map[*core]int64{}
			for _, h := range views {
				for i := range h.cores {
					before[&h.cores[i]] = h.cores[i].busy
				}
			}
			ep.snd.tsqThrottled = true
			// TCP_NODELAY, so that a tail shorter than an MSS, which
			// Nagle held when the run ended, goes too: the handler
			// must send something to charge its core.
			ep.snd.nonagle |= nagleOff
			ep.onTSQ(w.now + 1e6)
			want := tt.core(ep)
			for c, b := range before {
				switch grew := c.busy > b; {
				case c == want && !grew:
					t.Errorf("the handler's core (%d) was not charged", c.id)
				case c != want && grew:
					t.Errorf("core %d of another view was charged %d ns", c.id, c.busy-b)
				}
			}
		})
	}
}
