package sim

// outputPath is the function that turns the write queue into send units:
// tcp_write_xmit on Linux, tcp_output on FreeBSD.
type outputPath interface {
	xmit(ep *endpoint, now int64, nonagle nagleMode, cpu *core) (sent int)
}

// linuxOutput mirrors tcp_write_xmit: for each buffer from the send head,
// the send test, TSO deferral for multi-segment buffers, the split point,
// tso_fragment, tcp_transmit_skb, and tcp_cwnd_validate once something
// went out.
type linuxOutput struct {
	test     sendTest
	deferral deferral
	split    splitter
	// largeMSS: mss_now is the size goal (2.6.12's tcp_current_mss(sk, 1)),
	// so Nagle and the cut compare against it.
	largeMSS bool
	// minshallPcount: tcp_minshall_update marks a buffer small when it is
	// shorter than pcount*MSS (linux-6) instead of shorter than mss_now.
	minshallPcount bool
	// autosize: Linux 6.x's tcp_write_xmit takes tcp_tso_segs once a
	// pass (max_segs) and sends at most that many segments a unit
	// (cwnd_quota = min(tcp_cwnd_test, max_segs)); TSO deferral sends
	// when that many fit.
	autosize bool
}

func (o *linuxOutput) xmit(ep *endpoint, now int64, nonagle nagleMode, cpu *core) int {
	s := &ep.snd
	mssNow := ep.mss
	if o.largeMSS {
		mssNow = ep.prof.goal.goal(ep)
	}
	// The pacing rate's bytes a pacing shift, for tcp_tso_autosize and
	// TSQ: what it depends on moves only when a buffer goes (packets_out;
	// -1 = to take again).
	paced := int64(-1)
	var maxSegs int64
	if o.autosize && s.gso {
		paced = s.pacedBytes(ep.mss)
		maxSegs = ep.autosize(paced)
	}
	sent := 0
	cwndLimited := false
	for s.wq.unsent() {
		i := s.wq.sendHead
		if s.ca == caLoss && s.wq.q[i].seq < s.sndMax && s.wq.q[i].len() > ep.mss {
			// tcp_retransmit_skb cuts a buffer to the current MSS first.
			ep.fragment(i, ep.mss)
		}
		b := &s.wq.q[i]
		isLast := s.wq.isLast(i)
		if isLast && s.corked {
			ep.stopped(stopAutocork)
			break
		}
		na := nonagle
		if !isLast {
			na = naglePush
		}
		quota, stop := o.test.allow(ep, b, mssNow, na)
		if stop != stopNone {
			ep.stopped(stop)
			break
		}
		if maxSegs > 0 {
			quota = min(quota, maxSegs)
		}
		if ep.tsoSegs(b) > 1 {
			if hold, forCwnd := o.deferral.shouldDefer(ep, b, now, isLast, maxSegs); hold {
				cwndLimited = forCwnd
				ep.stopped(stopDefer)
				break
			}
		}
		if !ep.paceOK(now) {
			break
		}
		limit := o.split.limit(ep, b, mssNow, quota, isLast, na)
		if limit <= 0 {
			ep.stopped(stopRwnd)
			break
		}
		if b.len() > limit {
			ep.fragment(i, limit)
			ep.stopped(stopSplit)
			b = &s.wq.q[i]
		}
		if t := ep.prof.tsq; t != nil {
			if paced < 0 {
				paced = s.pacedBytes(ep.mss)
			}
			if t.throttlePaced(ep, b, now, paced) {
				ep.stopped(stopTSQ)
				break
			}
		}
		if !ep.transmit(now, i, cpu) {
			break
		}
		paced = -1
		small := b.len() < mssNow
		if o.minshallPcount {
			small = b.len() < b.pcount*ep.mss
		}
		if small {
			s.sndSml = b.end
		}
		sent++
	}
	ep.prof.use.validate(s, now, sent, cwndLimited)
	return sent
}

// tsoTrim is FreeBSD's TSO length trimming in tcp_output: given the
// length the windows allow, how much goes and whether as a TSO frame.
type tsoTrim interface {
	trim(length, off, avail, maxLen int64) (int64, bool)
}

// trimBefore mirrors tcp_output before the change of seed 003: unless the
// send empties the socket buffer, cut the length to whole segments; a
// length of one segment or less goes without TSO as exactly one segment
// ("In case there are too many small fragments don't use TSO").
type trimBefore struct{}

func (trimBefore) trim(length, off, avail, maxLen int64) (int64, bool) {
	if off+length < avail {
		length -= length % maxLen
	}
	if length <= maxLen {
		return maxLen, false
	}
	return length, true
}

// trimAfter mirrors the patch of seed 003: trim to whole segments only
// when more than two segments go; otherwise send the length as one TSO
// frame, fractional tail included. (Released FreeBSD 11 kept the old
// trimming; this profile models the patch as posted.)
type trimAfter struct{}

func (trimAfter) trim(length, _, _, maxLen int64) (int64, bool) {
	if length > 2*maxLen {
		length -= length % maxLen
	}
	return length, true
}

// freebsdOutput mirrors tcp_output of FreeBSD 10: the length is what the
// send window (min of snd_wnd and snd_cwnd, in bytes) and the socket
// buffer allow past snd_nxt; TSO lengths are capped at t_tsomax and
// trimmed; short lengths obey the silly-window test; sendalot loops.
type freebsdOutput struct{ trim tsoTrim }

// tsoMax is IP_MAXPACKET less the TCP/IP headers and max_linkhdr, the
// t_tsomax cap of tcp_output.
const tsoMax = 65535 - 40 - tcpOptLen - 16

func (o *freebsdOutput) xmit(ep *endpoint, now int64, nonagle nagleMode, cpu *core) int {
	s := &ep.snd
	idle := s.sndMax == s.sndUna
	sent := 0
	for s.wq.unsent() {
		off := s.sndNxt - s.sndUna
		avail := s.writeSeq - s.sndUna    // sbavail(&so->so_snd)
		cwnd := s.cc.(*newrenoBytes).cwnd // FreeBSD's window, in bytes
		sendwin := min(s.sndWnd, cwnd)
		length := min(avail, sendwin) - off
		if s.sndAuto {
			ep.prof.bufs.sndAutosize(s, sendwin, off)
		}
		if length <= 0 {
			if cwnd < s.sndWnd {
				ep.stopped(stopCwnd)
			} else {
				ep.stopped(stopRwnd)
			}
			break
		}
		maxseg := ep.mss
		tso := false
		if length > maxseg {
			if s.gso && s.ca == caOpen {
				length = min(length, tsoMax)
				length, tso = o.trim.trim(length, off, avail, maxseg)
				if length < min(avail, sendwin)-off {
					ep.stopped(stopSplit)
				}
			} else {
				length = maxseg
			}
		}
		if length < maxseg {
			// The silly-window test: a short segment goes if it empties
			// the buffer of an idle or TCP_NODELAY connection, or is at
			// least half the largest window the peer offered.
			// A closing connection sends its tail with the FIN.
			fin := s.wq.q[len(s.wq.q)-1].fin
			ok := (idle || fin || nonagle&(nagleOff|naglePush) != 0) && off+length >= avail
			ok = ok || (s.maxWnd > 0 && length >= s.maxWnd/2)
			if !ok {
				ep.stopped(stopNagle)
				break
			}
		}
		if !ep.paceOK(now) {
			break
		}
		i := s.wq.sendHead
		ep.gatherUnsent(i, length)
		if s.wq.q[i].len() > length {
			ep.fragment(i, length)
		}
		_ = tso                  // a length of one segment or less is never cut further
		ep.transmit(now, i, cpu) // FreeBSD: no localCongestion, never refused
		sent++
	}
	if sent > 0 {
		s.cwndValidate(now)
	}
	return sent
}
