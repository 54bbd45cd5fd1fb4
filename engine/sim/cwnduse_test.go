package sim

import "testing"

// TestWindowUseLinux6 is Linux 6.x's tcp_is_cwnd_limited with the record
// tcp_cwnd_validate keeps: a pass held for the congestion window counts
// as cwnd-limited until snd_una passes what was sent by then; in slow
// start cwnd may grow while below twice the most segments in flight of
// the window; in congestion avoidance only a cwnd-limited window grows it,
// one held for cwnd or with cwnd's segments in flight.
func TestWindowUseLinux6(t *testing.T) {
	u := usageSeqUse{initCw: 10}
	s := &sender{cwnd: 100, ssthresh: 1 << 30, rto: 1e9}

	s.packetsOut, s.sndNxt = 60, 60000
	u.validate(s, 0, 1, false)
	if !u.limited(s, 0) {
		t.Errorf("slow start, cwnd 100 < 2 * 60 in flight: want cwnd-limited")
	}
	s.ssthresh = 50 // congestion avoidance
	if u.limited(s, 0) {
		t.Errorf("congestion avoidance, 60 of 100 in flight, nothing held: want not cwnd-limited")
	}

	u.validate(s, 0, 0, true) // TSO deferral held a buffer for cwnd
	if !u.limited(s, 0) {
		t.Errorf("a pass held for cwnd: want cwnd-limited")
	}
	s.sndUna = 30000
	u.validate(s, 0, 1, false)
	if !u.limited(s, 0) {
		t.Errorf("snd_una short of cwnd_usage_seq: the window's verdict must hold")
	}
	s.sndUna = 60000
	u.validate(s, 0, 1, false)
	if u.limited(s, 0) {
		t.Errorf("a new window without a hold: want not cwnd-limited")
	}
	s.packetsOut = 100 // nothing held, but the window is full
	u.validate(s, 0, 1, false)
	if !u.limited(s, 0) {
		t.Errorf("congestion avoidance, 100 of 100 in flight: want cwnd-limited")
	}

	// The 2.6 rule reads the segments in flight before the ACK only.
	if (inFlightUse{}).limited(s, 99) || !(inFlightUse{}).limited(s, 100) {
		t.Errorf("inFlightUse: cwnd-limited exactly when prior in_flight >= cwnd")
	}
}
