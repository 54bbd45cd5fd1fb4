package sim

// windowUse is how a Linux stack judges whether a connection uses its
// congestion window: whether an ACK may grow cwnd (tcp_is_cwnd_limited)
// and what tcp_write_xmit records after a pass (tcp_cwnd_validate).
type windowUse interface {
	// limited says whether an ACK that found priorInFlight segments in
	// flight may grow cwnd.
	limited(s *sender, priorInFlight int64) bool
	// validate runs after an output pass that sent sent buffers;
	// cwndLimited says the pass held a buffer for the congestion window
	// (TSO deferral, tcp_tso_should_defer's is_cwnd_limited).
	validate(s *sender, now int64, sent int, cwndLimited bool)
}

// inFlightUse is the 2.6 judgement: cwnd grows when the segments in
// flight before the ACK filled it (tcp_is_cwnd_limited(sk, in_flight)
// without its TSO allowance), and tcp_cwnd_validate runs when something
// went out, shrinking a window unused for an RTO (RFC 2861, at least 2
// segments kept).
type inFlightUse struct{}

func (inFlightUse) limited(s *sender, priorInFlight int64) bool { return priorInFlight >= s.cwnd }

func (inFlightUse) validate(s *sender, now int64, sent int, _ bool) {
	if sent > 0 {
		s.cwndValidate(now)
	}
}

// usageSeqUse is Linux 6.x's judgement (include/net/tcp.h
// tcp_is_cwnd_limited, net/ipv4/tcp_output.c tcp_cwnd_validate in the
// form of "tcp: fix tcp_cwnd_validate() to not forget is_cwnd_limited",
// 2022, with cwnd_usage_seq): a pass
// of tcp_write_xmit is cwnd-limited when TSO deferral held a buffer for
// the congestion window or the segments in flight fill it; the last such
// verdict holds for a window of data (is_cwnd_limited until snd_una
// passes cwnd_usage_seq), and in slow start cwnd may also grow while it
// is below twice the most segments in flight in that window
// (max_packets_out). tcp_cwnd_application_limited keeps at least the
// initial window (initCw).
type usageSeqUse struct{ initCw int64 }

func (usageSeqUse) limited(s *sender, _ int64) bool {
	if s.isCwndLimited {
		return true
	}
	return s.cwnd < s.ssthresh && s.cwnd < 2*s.maxPacketsOut
}

func (u usageSeqUse) validate(s *sender, now int64, sent int, cwndLimited bool) {
	cwndLimited = cwndLimited || s.inFlight() >= s.cwnd
	if sent == 0 && !cwndLimited {
		return
	}
	if s.sndUna >= s.cwndUsageSeq || cwndLimited || !s.isCwndLimited && s.packetsOut > s.maxPacketsOut {
		s.isCwndLimited = cwndLimited
		s.maxPacketsOut = s.packetsOut
		s.cwndUsageSeq = s.sndNxt
	}
	s.starve(now, u.limited(s, 0), u.initCw)
}

// cwndValidate mirrors tcp_cwnd_validate of 2.6 (RFC 2861): the network
// is fed while packets_out fills cwnd.
func (s *sender) cwndValidate(now int64) { s.starve(now, s.packetsOut >= s.cwnd, 2) }

// starve is the rest of tcp_cwnd_validate: when the network was not fed
// for an RTO, shrink cwnd halfway to what was used, at least minUsed
// (tcp_cwnd_application_limited).
func (s *sender) starve(now int64, fed bool, minUsed int64) {
	if fed {
		s.cwndUsed = 0
		s.cwndStamp = now
		return
	}
	if s.packetsOut > s.cwndUsed {
		s.cwndUsed = s.packetsOut
	}
	if now-s.cwndStamp >= s.rto {
		if s.ca == caOpen {
			used := max(s.cwndUsed, minUsed)
			if used < s.cwnd {
				s.ssthresh = max(s.ssthresh, s.cwnd*3/4)
				s.cwnd = (s.cwnd + used) / 2
			}
			s.cwndUsed = 0
		}
		s.cwndStamp = now
	}
}
