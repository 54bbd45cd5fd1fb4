package sim

import (
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
)

// TestShouldAutocork is tcp_should_autocork's rule on its own: a tail
// below the size goal waits while the retransmit queue holds a sent
// buffer and the socket has more than the tail's truesize below TCP,
// and holding it arms the TSQ handler for the next free.
func TestShouldAutocork(t *testing.T) {
	const mss = 1448
	prof, err := newProfile("linux-6", nil)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(sent int, tail, wmem int64, fin bool) *endpoint {
		w := &world{}
		ep := &endpoint{w: w, mss: mss, prof: prof}
		s := &ep.snd
		s.gso = true
		for i := range sent {
			s.wq.q = append(s.wq.q, skb{seq: int64(i) * 65160, end: int64(i+1) * 65160})
		}
		s.wq.sendHead = sent
		s.sndMax = int64(sent) * 65160
		s.wq.q = append(s.wq.q, skb{seq: s.sndMax, end: s.sndMax + tail, fin: fin})
		if wmem > 0 {
			s.holdWmem(wmem-skbOverhead, 1e9)
		}
		return ep
	}
	goal := int64(skGSOMaxSize) / mss * mss
	tests := []struct {
		name string
		sent int
		tail int64
		wmem int64
		fin  bool
		cork bool
	}{
		{"small tail, a unit below TCP", 1, 376, 65160 + skbOverhead, false, true},
		{"tail at the size goal", 1, goal, 2 * goal, false, false},
		{"nothing sent unacknowledged", 0, 376, 65160 + skbOverhead, false, false},
		{"below TCP no more than the tail's truesize", 1, 376, 376 + skbOverhead, false, false},
		{"just more than the tail's truesize", 1, 376, 376 + skbOverhead + 1, false, true},
		{"the tail carries the FIN", 1, 376, 65160 + skbOverhead, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := mk(tt.sent, tt.tail, tt.wmem, tt.fin)
			got := ep.shouldAutocork(0)
			if got != tt.cork {
				t.Fatalf("shouldAutocork = %v, want %v", got, tt.cork)
			}
			s := &ep.snd
			if s.tsqThrottled != tt.cork || s.tsqEv != tt.cork {
				t.Errorf("TSQ_THROTTLED %v, handler queued %v: want both %v", s.tsqThrottled, s.tsqEv, tt.cork)
			}
		})
	}
}

// TestAutocorkJoinsTails: behind a 1 Gb/s shaper, writes of 1000 bytes
// each leave a tail below the MSS. With autocorking (linux-6's tcp_push)
// a tail waits while earlier units are below TCP, the next writes append
// to it, and the TSQ handler sends it at the next free; with tcp_push as
// it was before Linux 3.14 (plainPush) a write is pushed as it comes,
// and a tail Nagle lets go leaves as a single-MSS unit. The send buffer
// is set (4 MB, the size linux-6's was before it autosized): a writer
// that blocks on a growing buffer (tcp_sndbuf_expand) meets fewer tails
// with either push (single-MSS 0.0178 without autocorking, 0.0103 with).
func TestAutocorkJoinsTails(t *testing.T) {
	p := pair{stack: "linux-6", mtu: 1500, delay: 50 * time.Microsecond,
		wl: config.Workload{Duration: 200 * time.Millisecond, WriteSize: 1000, SndBuf: 4 << 20}}
	sc := p.scenario()
	sc.NICs[0].Rate = 1e9
	run := func(autocork bool) (single float64, corks int64, gbps float64) {
		e := New(Options{})
		e.checks = true
		if !autocork {
			e.editProfile = func(p *profile) { p.push = plainPush{} }
		}
		res := runScenario(t, e, sc)
		if errs := e.lastCheck.errs; len(errs) > 0 {
			t.Errorf("invariants: %v", errs)
		}
		return res.Metrics["single_mss_fraction"], res.StopReasons["autocork"], res.Metrics["throughput_bps"] / 1e9
	}
	onSingle, onCorks, onRate := run(true)
	offSingle, offCorks, offRate := run(false)
	t.Logf("autocork: %.4f of units single-MSS, %d autocork stops, %.3f Gb/s; without: %.4f, %d, %.3f Gb/s", onSingle, onCorks, onRate, offSingle, offCorks, offRate)
	if onCorks == 0 || offCorks != 0 {
		t.Errorf("autocork stops %d with autocorking, %d without: want some, none", onCorks, offCorks)
	}
	if onSingle*2 > offSingle {
		t.Errorf("single-MSS units %.4f with autocorking, %.4f without: want the tails joined, at most half as many", onSingle, offSingle)
	}
	if onRate < 0.9 || offRate < 0.9 {
		t.Errorf("throughput %.3f / %.3f Gb/s: the shaper should bind either way", onRate, offRate)
	}
}
