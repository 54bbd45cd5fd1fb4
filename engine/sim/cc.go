package sim

import "math"

// congestion is a congestion control algorithm of one connection. Linux
// algorithms keep snd_cwnd in segments (sender.cwnd, which Linux's send
// tests read); FreeBSD's keeps its own in bytes (newrenoBytes.cwnd, which
// freebsdOutput reads).
type congestion interface {
	init(ep *endpoint)
	// onAck is called for an ACK that advances snd_una in the Open state.
	onAck(ep *endpoint, now, ackedSegs, ackedBytes int64, cwndLimited bool)
	// onLoss sets ssthresh and cwnd on entering fast recovery.
	onLoss(ep *endpoint, now int64)
	// onRecovered sets cwnd when recovery ends.
	onRecovered(ep *endpoint)
	// onTimeout sets ssthresh and cwnd after an RTO.
	onTimeout(ep *endpoint, now int64)
	// onRTT sees every RTT sample (ns) of an ACK at now, before onAck.
	onRTT(ep *endpoint, now, rtt int64)
	// segments is cwnd in segments, for the time series.
	segments(ep *endpoint) float64
}

// reno mirrors tcp_reno_cong_avoid of 2.6.12/2.6.13: one segment per ACK
// in slow start, one per window of ACKs in congestion avoidance, only while
// cwnd-limited (prior in_flight >= cwnd).
type reno struct{}

func (*reno) init(ep *endpoint) {
	ep.snd.cwnd = ep.prof.initCw(ep.mss)
	ep.snd.ssthresh = math.MaxInt32
}

func (*reno) onAck(ep *endpoint, _, _, _ int64, cwndLimited bool) {
	s := &ep.snd
	if !cwndLimited {
		return
	}
	if s.cwnd <= s.ssthresh {
		s.cwnd++
		return
	}
	if s.cwndCnt >= s.cwnd {
		s.cwnd++
		s.cwndCnt = 0
	} else {
		s.cwndCnt++
	}
}

func (*reno) onLoss(ep *endpoint, _ int64) {
	s := &ep.snd
	s.ssthresh = max(s.cwnd/2, 2)
	s.cwnd = s.ssthresh
}

func (*reno) onRecovered(ep *endpoint) { ep.snd.cwnd = ep.snd.ssthresh }

func (*reno) onTimeout(ep *endpoint, _ int64) {
	s := &ep.snd
	s.ssthresh = max(s.cwnd/2, 2)
	s.cwnd = 1
	s.cwndCnt = 0
}

func (*reno) onRTT(*endpoint, int64, int64)    {}
func (*reno) segments(ep *endpoint) float64    { return float64(ep.snd.cwnd) }
func (c *cubic) segments(ep *endpoint) float64 { return float64(ep.snd.cwnd) }
func (n *newrenoBytes) segments(ep *endpoint) float64 {
	return float64(n.cwnd) / float64(ep.mss)
}

// cubic mirrors tcp_cubic's bictcp_update (C = 0.4, beta = 717/1024, fast
// convergence, the TCP-friendly region). Without HyStart (hy nil: 2.6.27)
// slow start grows by one segment an ACK while cwnd <= ssthresh. With it
// (linux-6) the connection is Linux 6.x's CUBIC: HyStart (hystart.go)
// ends slow start, which lasts while cwnd < ssthresh (tcp_in_slow_start)
// and grows by the segments acked up to ssthresh, the rest of the ACK
// going to congestion avoidance (tcp_slow_start, cubictcp_cong_avoid);
// bictcp_update grows at least 5% an RTT before the first loss
// (last_max_cwnd == 0: cnt at most 20); and an RTO resets the state
// (cubictcp_state on TCP_CA_Loss: bictcp_reset, bictcp_hystart_reset).
type cubic struct {
	hy         *hyStart
	epochStart int64   // ns, 0 = no epoch
	lastMax    float64 // segments (bic.last_max_cwnd)
	k          float64 // seconds to reach lastMax
	origin     float64 // segments
	tcpCwnd    float64 // the Reno estimate of the TCP-friendly region
	ackCnt     float64
}

const cubicBeta = 717.0 / 1024.0

func (c *cubic) init(ep *endpoint) {
	ep.snd.cwnd = ep.prof.initCw(ep.mss)
	ep.snd.ssthresh = math.MaxInt32
	if c.hy != nil {
		c.hy.reset(0, ep.snd.sndNxt) // cubictcp_init
	}
}

func (c *cubic) onAck(ep *endpoint, now, acked, _ int64, cwndLimited bool) {
	s := &ep.snd
	if !cwndLimited {
		return
	}
	switch {
	case c.hy != nil && s.cwnd < s.ssthresh:
		// tcp_slow_start of 6.x: up to ssthresh, the rest to
		// congestion avoidance.
		n := min(s.cwnd+acked, s.ssthresh)
		acked -= n - s.cwnd
		s.cwnd = n
		if acked == 0 {
			return
		}
	case c.hy == nil && s.cwnd <= s.ssthresh:
		s.cwnd++
		return
	}
	cw := float64(s.cwnd)
	if c.epochStart == 0 {
		c.epochStart = now
		c.ackCnt = 1
		c.tcpCwnd = cw
		if cw < c.lastMax {
			c.k = math.Cbrt((c.lastMax - cw) / 0.4)
			c.origin = c.lastMax
		} else {
			c.k = 0
			c.origin = cw
		}
	}
	t := float64(now-c.epochStart+s.minRTT) / 1e9
	d := t - c.k
	target := c.origin + 0.4*d*d*d
	cnt := 100 * cw
	if target > cw {
		cnt = cw / (target - cw)
	}
	if c.hy != nil && c.lastMax == 0 && cnt > 20 {
		cnt = 20 // "increase cwnd 5% per RTT"
	}
	// TCP-friendly region: grow at least as fast as Reno would.
	c.ackCnt += float64(acked)
	delta := cw * 3 * (1 - cubicBeta) / (1 + cubicBeta)
	for c.ackCnt > delta {
		c.ackCnt -= delta
		c.tcpCwnd++
	}
	if c.tcpCwnd > cw {
		cnt = math.Min(cnt, cw/(c.tcpCwnd-cw))
	}
	cnt = math.Max(cnt, 2)
	s.cwndCnt += acked
	if float64(s.cwndCnt) >= cnt {
		inc := int64(float64(s.cwndCnt) / cnt)
		s.cwnd += inc
		s.cwndCnt -= int64(float64(inc) * cnt)
	}
}

func (c *cubic) onLoss(ep *endpoint, _ int64) {
	s := &ep.snd
	cw := float64(s.cwnd)
	c.epochStart = 0
	if cw < c.lastMax {
		c.lastMax = cw * (1 + cubicBeta) / 2
	} else {
		c.lastMax = cw
	}
	s.ssthresh = max(int64(cw*cubicBeta), 2)
	s.cwnd = s.ssthresh
}

func (c *cubic) onRecovered(ep *endpoint) { ep.snd.cwnd = ep.snd.ssthresh }

func (c *cubic) onTimeout(ep *endpoint, now int64) {
	c.onLoss(ep, now)
	ep.snd.cwnd = 1
	ep.snd.cwndCnt = 0
	if c.hy != nil {
		*c = cubic{hy: c.hy}
		*c.hy = hyStart{}
		c.hy.reset(now, ep.snd.sndNxt)
	}
}

func (c *cubic) onRTT(ep *endpoint, now, rtt int64) {
	if c.hy != nil {
		c.hy.acked(ep, now, rtt, c.epochStart)
	}
}

// newrenoBytes mirrors FreeBSD 10's newreno_ack_received with RFC 3465
// appropriate byte counting (abc_l_var = 2): slow start grows by the bytes
// acked up to two segments per ACK, congestion avoidance by one segment per
// window of bytes acked; only while cwnd-limited (CCF_CWND_LIMITED:
// snd_cwnd <= snd_wnd).
type newrenoBytes struct {
	cwnd       int64 // congestion window, bytes (snd_cwnd)
	ssthresh   int64 // slow-start threshold, bytes (snd_ssthresh)
	bytesAcked int64 // t_bytes_acked
}

func (n *newrenoBytes) init(ep *endpoint) {
	n.cwnd = ep.prof.initCw(ep.mss)
	n.ssthresh = math.MaxInt32 * 1024
	ep.snd.cwnd = math.MaxInt32 // Linux-style tests are not used by FreeBSD profiles
}

func (n *newrenoBytes) onAck(ep *endpoint, _, _, ackedBytes int64, _ bool) {
	s := &ep.snd
	if n.cwnd > s.sndWnd {
		return
	}
	var incr int64
	if n.cwnd > n.ssthresh {
		n.bytesAcked += ackedBytes
		if n.bytesAcked >= n.cwnd {
			n.bytesAcked -= n.cwnd
			incr = ep.mss
		}
	} else {
		incr = min(ackedBytes, 2*ep.mss)
	}
	n.cwnd = min(n.cwnd+incr, 65535<<14)
}

func (n *newrenoBytes) onLoss(ep *endpoint, _ int64) {
	s := &ep.snd
	win := min(s.sndWnd, n.cwnd) / 2 / ep.mss
	n.ssthresh = max(win, 2) * ep.mss
	n.cwnd = n.ssthresh
	n.bytesAcked = 0
}

func (n *newrenoBytes) onRecovered(*endpoint) { n.cwnd = n.ssthresh }

func (n *newrenoBytes) onTimeout(ep *endpoint, now int64) {
	n.onLoss(ep, now)
	n.cwnd = ep.mss
}

func (n *newrenoBytes) onRTT(*endpoint, int64, int64) {}
