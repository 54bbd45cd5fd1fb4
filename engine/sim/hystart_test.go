package sim

import (
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
)

// TestHyStartDelay is hystart_update's delay detection on its own: the
// least of a round's first HYSTART_MIN_SAMPLES (8) samples, and of every
// later one, must exceed delay_min by clamp(delay_min/8, 4 ms, 16 ms); a
// single late sample (the model's rule before Linux 6.x's was built),
// first or after eight on time (the round's least, not its last), does
// not end slow start, and below hystart_low_window (16) nothing does.
func TestHyStartDelay(t *testing.T) {
	const base = 10e6 // a 10 ms path: threshold 10 + 4 ms
	tests := []struct {
		name    string
		cwnd    int64
		samples []int64 // all in one round, delay_min already 10 ms
		exit    bool
	}{
		{"one late sample", 100, []int64{20e6, base, base, base, base, base, base, base, base}, false},
		{"a late sample after eight on time", 100, []int64{base, base, base, base, base, base, base, base, 20e6}, false},
		{"eight late samples are counted", 100, []int64{20e6, 20e6, 20e6, 20e6, 20e6, 20e6, 20e6, 20e6}, false},
		{"the ninth decides", 100, []int64{20e6, 20e6, 20e6, 20e6, 20e6, 20e6, 20e6, 20e6, 20e6}, true},
		{"within 4 ms is no increase", 100, []int64{13.9e6, 13.9e6, 13.9e6, 13.9e6, 13.9e6, 13.9e6, 13.9e6, 13.9e6, 13.9e6}, false},
		{"below the low window", 15, []int64{20e6, 20e6, 20e6, 20e6, 20e6, 20e6, 20e6, 20e6, 20e6}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := &endpoint{mss: 1448}
			s := &ep.snd
			s.cwnd, s.ssthresh, s.srtt = tt.cwnd, 1<<31-1, base
			s.sndUna, s.sndNxt = 1, 1<<30 // one round for all of them
			h := &hyStart{delayMin: base}
			h.reset(0, 0)
			// ACKs 3 ms apart: no ACK train.
			now := int64(0)
			for _, rtt := range tt.samples {
				now += 3e6
				h.acked(ep, now, rtt, 0)
			}
			if h.found != tt.exit || (s.ssthresh == tt.cwnd) != tt.exit {
				t.Errorf("found %v, ssthresh %d; want exit %v at cwnd %d", h.found, s.ssthresh, tt.exit, tt.cwnd)
			}
		})
	}
}

// TestHyStartRounds: a round ends when snd_una passes the snd_nxt of its
// start (ca->end_seq), and the next one counts its own samples: eight
// late samples of one round and one of the next do not end slow start;
// the next round's ninth does.
func TestHyStartRounds(t *testing.T) {
	ep := &endpoint{mss: 1448}
	s := &ep.snd
	s.cwnd, s.ssthresh, s.srtt = 100, 1<<31-1, 10e6
	h := &hyStart{delayMin: 10e6}
	h.reset(0, 0)
	now := int64(0)
	late := func(n int) {
		for range n {
			now += 3e6
			h.acked(ep, now, 20e6, 0)
		}
	}
	s.sndUna, s.sndNxt = 1, 1000
	late(8)
	s.sndUna, s.sndNxt = 1001, 2000 // the round's data is acknowledged
	late(1)
	if h.found {
		t.Fatal("the first sample of a new round ended slow start: the count must restart")
	}
	late(8)
	if !h.found {
		t.Fatal("nine late samples in one round did not end slow start")
	}
}

// TestHyStartAckTrain is the ACK-train detection: ACKs at most 2 ms
// apart since the round began, for longer than half of delay_min plus
// hystart_ack_delay (the socket is not paced), end slow start; a paced
// socket (SO_MAX_PACING_RATE) waits the whole of it.
func TestHyStartAckTrain(t *testing.T) {
	for _, tt := range []struct {
		name   string
		paced  bool
		trainS int64 // train length, ns
		exit   bool
	}{
		{"short train", false, 4e6, false},
		{"half the min RTT and the ack delay", false, 6e6, true},
		{"paced: half is not enough", true, 6e6, false},
		{"paced: the whole min RTT and the ack delay", true, 12e6, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ep := &endpoint{mss: 1448}
			s := &ep.snd
			s.cwnd, s.ssthresh, s.srtt = 100, 1<<31-1, 10e6
			if tt.paced {
				s.paceBps = 100e9 // binds nothing here
			}
			s.sndUna, s.sndNxt = 1, 1<<30
			h := &hyStart{}
			h.reset(0, 0)
			// ack_delay: 4 GSO frames at 200% of 100 * 1448 B / 10 ms,
			// about 9 ms: capped at 1 ms.
			if d := ackDelay(s, ep.mss); d != 1e6 {
				t.Fatalf("ackDelay = %d, want the 1 ms cap", d)
			}
			h.acked(ep, 1e6, 10e6, 0) // round begins at 1 ms
			for now := int64(2e6); now <= 1e6+tt.trainS; now += 1e6 {
				h.acked(ep, now, 10e6, 0)
			}
			if h.found != tt.exit {
				t.Errorf("found %v after a %d ns train, want %v", h.found, tt.trainS, tt.exit)
			}
		})
	}
}

// TestHyStartLeavesSlowStartOnALongPath: on a 1 Gb/s path with a 10 ms
// RTT and a 4 MB queue, linux-6's CUBIC leaves slow start by HyStart
// before the queue overflows (no retransmission) and fills the path in
// 3 s (0.92 Gb/s); the model's rule before, which left slow start on any
// single late sample, carried 0.83 Gb/s.
func TestHyStartLeavesSlowStartOnALongPath(t *testing.T) {
	p := pair{stack: "linux-6", mtu: 1500, rate: 1e9, delay: 5 * time.Millisecond,
		wl: config.Workload{Duration: 3 * time.Second, WriteSize: 65536, RcvBuf: 6291456}}
	sc := p.scenario()
	sc.NICs[0].Queue = 4 << 20
	e := New(Options{})
	e.checks = true
	res := runScenario(t, e, sc)
	if errs := e.lastCheck.errs; len(errs) > 0 {
		t.Errorf("invariants: %v", errs)
	}
	gbps, rexmit := res.Metrics["throughput_bps"]/1e9, res.Metrics["retransmits"]
	t.Logf("%.3f Gb/s, %.0f retransmits", gbps, rexmit)
	if gbps < 0.9 || rexmit != 0 {
		t.Errorf("%.3f Gb/s with %.0f retransmits, want near 1 Gb/s and none", gbps, rexmit)
	}
}
