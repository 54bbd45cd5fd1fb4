package sim

import (
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
)

// TestCwndTestHalfCwnd is tcp_cwnd_test of Linux 6.x: the quota is what
// the cwnd leaves, at most half of it, "to ensure we have at least 2 GSO
// packets in flight"; a one-segment FIN gets 1 whatever the cwnd.
func TestCwndTestHalfCwnd(t *testing.T) {
	for _, tt := range []struct {
		name        string
		half        bool
		cwnd, inFlt int64
		fin         bool
		quota       int64
		stop        stopReason
	}{
		{"2.6: all that is free", false, 40, 0, false, 40, stopNone},
		{"6.x: half the cwnd", true, 40, 0, false, 20, stopNone},
		{"6.x: less is free than half", true, 40, 30, false, 10, stopNone},
		{"6.x: a cwnd of 1", true, 1, 0, false, 1, stopNone},
		{"6.x: full", true, 40, 40, false, 0, stopCwnd},
		{"6.x: a one-segment FIN", true, 40, 40, true, 1, stopNone},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ep := &endpoint{mss: 1000}
			s := &ep.snd
			s.cwnd, s.packetsOut, s.sndWnd = tt.cwnd, tt.inFlt, 1<<30
			b := &skb{seq: 0, end: 1000, fin: tt.fin}
			quota, stop := quotaTest{finOneSeg: true, halfCwnd: tt.half}.allow(ep, b, 1000, naglePush)
			if quota != tt.quota || stop != tt.stop {
				t.Errorf("quota %d, stop %q; want %d, %q", quota, stop, tt.quota, tt.stop)
			}
		})
	}
}

// TestTSOAutosize is tcp_tso_autosize: about a millisecond of the pacing
// rate in whole segments, at least 2, at most sk_gso_max_size, plus
// sk_gso_max_size halved for every 512 us of min_rtt.
func TestTSOAutosize(t *testing.T) {
	for _, tt := range []struct {
		name string
		cwnd int64
		srtt int64 // and min_rtt, ns
		want int64
	}{
		// 120% of 10 * 1448 B / 10 ms = 13.9 Mb/s: 1.7 KB a ms; 10 ms of
		// min_rtt leaves no allowance (65215 >> 19).
		{"slow: tcp_min_tso_segs", 10, 10e6, 2},
		// 200% (slow start: ssthresh is far) of 100 * 1448 B / 10 ms =
		// 232 Mb/s: 28.3 KB a ms: 19 segments.
		{"a millisecond of the pacing rate", 100, 10e6, 19},
		// 1 ms of min_rtt: allowance 65215 >> 1 = 32607 B, over 200% of
		// 10 * 1448 B / 1 ms = 232 Mb/s: 28.3 KB a ms: 42 segments.
		{"min_rtt 1 ms: half of sk_gso_max_size more", 10, 1e6, (28281 + 32607) / 1448},
		// 200 us of min_rtt: allowance 65215 >> 0: at most sk_gso_max_size.
		{"a close peer: sk_gso_max_size", 10, 200e3, skGSOMaxSize / 1448},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ep := &endpoint{mss: 1448}
			s := &ep.snd
			s.cwnd, s.ssthresh, s.srtt, s.minRTT = tt.cwnd, 1<<30, tt.srtt, tt.srtt
			if tt.cwnd == 10 && tt.srtt == 10e6 {
				s.ssthresh = 10 // congestion avoidance: 120%
			}
			if got := ep.tsoSegsGoal(); got != tt.want {
				t.Errorf("tsoSegsGoal = %d, want %d (pacing %.3g b/s)", got, tt.want, s.pacingRate(ep.mss))
			}
		})
	}
}

// TestAutosizeBoundsUnits: on a 20 Mb/s path with a 10 ms RTT, linux-6
// builds 64 KB buffers (tcp_xmit_size_goal) but tcp_write_xmit sends
// about a millisecond of the pacing rate a unit (tcp_tso_segs: the
// pacing rate is 200% of cwnd a round trip in slow start, 120% after,
// and a round trip is at least the path's), a few KB, where
// linux-2.6.27 sends what the windows allow of its 64 KB buffers.
func TestAutosizeBoundsUnits(t *testing.T) {
	mean := func(stack string) float64 {
		p := pair{stack: stack, mtu: 1500, rate: 20e6, delay: 5 * time.Millisecond,
			wl: config.Workload{Duration: 2 * time.Second, WriteSize: 65536, RcvBuf: 4 << 20}}
		sc := p.scenario()
		sc.NICs[0].Queue = 1 << 20
		e := New(Options{})
		e.checks = true
		res := runScenario(t, e, sc)
		if errs := e.lastCheck.errs; len(errs) > 0 {
			t.Errorf("%s invariants: %v", stack, errs)
		}
		return res.Metrics["avg_send_bytes"]
	}
	six, old := mean("linux-6"), mean("linux-2.6.27")
	t.Logf("mean unit: linux-6 %.0f B, linux-2.6.27 %.0f B", six, old)
	// A millisecond of 200% of 20 Mb/s is 5 KB; 120%, 3 KB; tcp_min_tso_segs 2.9 KB.
	if six > 8000 || six < 2*1448 {
		t.Errorf("linux-6 mean unit %.0f B, want about a millisecond of the pacing rate (3-8 KB)", six)
	}
	if old < 2*six {
		t.Errorf("linux-2.6.27 mean unit %.0f B, want well above linux-6's %.0f B (no autosizing)", old, six)
	}
}
