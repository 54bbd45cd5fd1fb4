package sim

import (
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
)

// TestReceiveBufferAutotuning: on a 1 Gb/s path with a 10 ms RTT (a
// bandwidth-delay product of 1.25 MB), linux-6's receive buffer starts at
// tcp_rmem[1] (128 KB) and DRS grows it, so the stream carries what it
// carries with a buffer set to tcp_rmem[2]; the same 128 KB set with
// SO_RCVBUF is locked and holds the stream to a window a round trip
// (~105 Mb/s).
func TestReceiveBufferAutotuning(t *testing.T) {
	run := func(rcvbuf int) (gbps float64, buf int64) {
		p := pair{stack: "linux-6", mtu: 1500, rate: 1e9, delay: 5 * time.Millisecond,
			wl: config.Workload{Duration: 3 * time.Second, WriteSize: 65536, RcvBuf: rcvbuf}}
		sc := p.scenario()
		sc.NICs[0].Queue = 4 << 20
		e := New(Options{})
		e.checks = true
		req := engine.RunRequest{Scenario: sc, Workload: sc.Workloads[0]}
		w, err := e.build(sc, sc.Workloads[0], 0)
		if err != nil {
			t.Fatal(err)
		}
		end, err := w.loop(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if w.checks.finish(w); len(w.checks.errs) > 0 {
			t.Errorf("invariants: %v", w.checks.errs)
		}
		res := w.result(req, end)
		return res.Metrics["throughput_bps"] / 1e9, w.eps[1].rcv.buf
	}
	auto, grown := run(0)
	locked, kept := run(131072)
	full, _ := run(6291456)
	t.Logf("autotuned: %.3f Gb/s, buffer %d; SO_RCVBUF 131072: %.3f Gb/s, buffer %d; 6291456: %.3f Gb/s", auto, grown, locked, kept, full)
	if grown < 2500000 || grown > 6291456 {
		t.Errorf("autotuned buffer %d, want at least 2 BDP (2.5 MB) and at most tcp_rmem[2] (6291456)", grown)
	}
	if auto < 0.9*full {
		t.Errorf("autotuned: %.3f Gb/s, want near what a buffer set to tcp_rmem[2] carries (%.3f)", auto, full)
	}
	if kept != 131072 || locked > 0.15 {
		t.Errorf("SO_RCVBUF 131072: buffer %d, %.3f Gb/s; want it kept and ~0.1 Gb/s (one window a 10 ms round trip)", kept, locked)
	}
}

// TestRcvSpaceAdjust is tcp_rcv_space_adjust's rule on its own, once a
// round trip (the peer's 10 ms srtt here): a reader whose rate doubled
// gets more than twice what it read plus 16 segments (the allowance for
// a sender in slow start); the next round trip compares with that one's
// reads, not the first's, so a rate that grew by 5% more keeps the
// buffer; a slower round trip never shrinks it; tcp_rmem[2] caps it.
func TestRcvSpaceAdjust(t *testing.T) {
	const mss, rtt = 1448, 10e6
	ep := &endpoint{mss: mss, peer: &endpoint{}}
	ep.peer.snd.srtt = rtt
	r := &ep.rcv
	r.buf, r.autoMax = 131072, 6291456
	r.space = 100000 // the last round trip read 100 KB
	read := func(now, n int64) {
		r.readBytes += n
		ep.rcvSpaceAdjust(now)
	}
	read(rtt/2, 200000)
	if r.buf != 131072 {
		t.Fatalf("half a round trip in: buffer %d, want it unchanged until a round trip has passed", r.buf)
	}
	read(rtt, 0) // 200 KB in the round trip: the rate doubled
	doubled := r.buf
	if floor := int64(2*200000 + 16*mss); doubled <= floor {
		t.Errorf("rate doubled: buffer %d, want more than twice the round trip's reads plus 16 segments (%d)", doubled, floor)
	}
	read(2*rtt, 210000)
	if r.buf != doubled {
		t.Errorf("5%% more than the round trip before: buffer %d, want %d kept (the measure is the last round trip's)", r.buf, doubled)
	}
	read(3*rtt, 100000)
	if r.buf != doubled {
		t.Errorf("a slower round trip: buffer %d, want %d (it never shrinks)", r.buf, doubled)
	}
	read(4*rtt, 5000000)
	if r.buf != r.autoMax {
		t.Errorf("5 MB in a round trip: buffer %d, want tcp_rmem[2] (%d)", r.buf, r.autoMax)
	}
}
