package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
)

// TestQueueDropIsLocalCongestion: eight linux-6 connections behind a
// 1 Gb/s NIC whose queue holds 30 KB overrun it. On Linux the qdisc's
// drop is local congestion: tcp_transmit_skb fails, the unit stays
// unsent and the connection enters CWR, so nothing is retransmitted;
// with the drop counted as a lost frame (localCongestion off, FreeBSD's
// way here) the frames are repaired by retransmission.
func TestQueueDropIsLocalCongestion(t *testing.T) {
	p := pair{stack: "linux-6", mtu: 1500, delay: 50 * time.Microsecond,
		wl: config.Workload{Duration: 500 * time.Millisecond, WriteSize: 65536, Connections: 8}}
	sc := p.scenario()
	sc.NICs[0].Rate = 1e9
	sc.NICs[0].Queue = 30000
	run := func(local bool) (retrans float64, refused bool, gbps float64) {
		e := New(Options{})
		e.checks = true
		if !local {
			e.editProfile = func(p *profile) { p.localCongestion = false }
		}
		res := runScenario(t, e, sc)
		if errs := e.lastCheck.errs; len(errs) > 0 {
			t.Errorf("invariants: %v", errs)
		}
		for _, n := range res.Notes {
			refused = refused || strings.Contains(n, "refused (NET_XMIT_DROP)")
		}
		return res.Metrics["retransmits"], refused, res.Metrics["throughput_bps"] / 1e9
	}
	lcRetrans, lcRefused, lcRate := run(true)
	lossRetrans, lossRefused, lossRate := run(false)
	t.Logf("local congestion: %.0f retransmitted, refused %v, %.3f Gb/s; as loss: %.0f, %v, %.3f Gb/s", lcRetrans, lcRefused, lcRate, lossRetrans, lossRefused, lossRate)
	if lcRetrans != 0 || !lcRefused {
		t.Errorf("local congestion: %.0f segments retransmitted, refusal noted %v: want 0 and a note", lcRetrans, lcRefused)
	}
	if lossRetrans == 0 || lossRefused {
		t.Errorf("drops as loss: %.0f segments retransmitted, refusal noted %v: want some and no note; the queue no longer overflows", lossRetrans, lossRefused)
	}
	if lcRate < 0.9 {
		t.Errorf("local congestion carried %.3f Gb/s: the NIC's rate should bind", lcRate)
	}
}

// TestEnterCWR is tcp_enter_cwr and the CWR state's end: from Open the
// window is cut once (ssthresh from congestion control, high_seq =
// snd_nxt); from another state nothing changes; an ACK up to high_seq
// keeps CWR (the cwnd does not grow), one above it ends it.
func TestEnterCWR(t *testing.T) {
	mk := func(ca caState) *endpoint {
		ep := &endpoint{w: &world{}, mss: 1448, prof: &profile{}}
		s := &ep.snd
		s.cc = &reno{}
		s.ca = ca
		s.cwnd, s.ssthresh = 40, 1000
		s.sndUna, s.sndNxt, s.sndMax = 0, 40*1448, 40*1448
		s.packetsOut = 40
		s.sndWnd = 1 << 20
		for i := range 40 {
			s.wq.q = append(s.wq.q, skb{seq: int64(i) * 1448, end: int64(i+1) * 1448, pcount: 1})
		}
		s.wq.sendHead = 40
		return ep
	}
	ep := mk(caOpen)
	ep.enterCWR(0)
	s := &ep.snd
	if s.ca != caCWR || s.cwnd != 20 || s.ssthresh != 20 || s.recover != 40*1448 {
		t.Fatalf("from Open: state %d cwnd %d ssthresh %d high_seq %d, want CWR, 20, 20, %d", s.ca, s.cwnd, s.ssthresh, s.recover, 40*1448)
	}
	ep.enterCWR(0)
	if s.cwnd != 20 {
		t.Errorf("a second refusal in CWR cut cwnd to %d, want 20 (once a window)", s.cwnd)
	}
	ep.onAck(1e6, 40*1448, 1<<20, true, nil)
	if s.ca != caCWR || s.cwnd != 20 {
		t.Errorf("ACK of high_seq: state %d cwnd %d, want CWR kept and cwnd 20", s.ca, s.cwnd)
	}

	rec := mk(caRecovery)
	rec.enterCWR(0)
	if rs := &rec.snd; rs.ca != caRecovery || rs.cwnd != 40 {
		t.Errorf("in recovery: state %d cwnd %d, want recovery kept and cwnd 40", rs.ca, rs.cwnd)
	}

	end := mk(caOpen)
	end.enterCWR(0)
	es := &end.snd
	es.sndNxt, es.sndMax = 41*1448, 41*1448
	es.wq.q = append(es.wq.q, skb{seq: 40 * 1448, end: 41 * 1448, pcount: 1})
	es.wq.sendHead, es.packetsOut = 41, 41
	end.onAck(1e6, 41*1448, 1<<20, true, nil)
	if es.ca != caOpen || es.cwnd != 20 {
		t.Errorf("ACK above high_seq: state %d cwnd %d, want Open and cwnd = ssthresh 20", es.ca, es.cwnd)
	}

}
