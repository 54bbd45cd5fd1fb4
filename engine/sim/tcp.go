package sim

import (
	"math"

	"github.com/tsolab/tsolab/result"
)

// tcpOptLen is the TCP option space of every segment: timestamps, 10
// bytes padded to 12 (TCPOLEN_TSTAMP_ALIGNED).
const tcpOptLen = 12

// caState is icsk_ca_state, reduced to what the model does.
type caState uint8

const (
	caOpen     caState = iota // TCP_CA_Open
	caCWR                     // TCP_CA_CWR: the sender's own queue refused a unit (tcp_enter_cwr)
	caRecovery                // TCP_CA_Recovery: fast retransmit, NewReno partial ACKs
	caLoss                    // TCP_CA_Loss: after an RTO, go-back-N
)

// endpoint is one end of a connection: its sender, its receiver and the
// application on top.
type endpoint struct {
	idx    int32     // index in world.eps
	conn   int       // connection index
	client bool      // the workload's client side
	w      *world    // the simulation
	host   *host     // where it runs
	nic    *nicState // its egress NIC
	peer   *endpoint // the other end
	prof   *profile  // the host's stack profile
	mss    int64     // tcp_sync_mss: path MTU - 40 - 12, bytes
	core   int       // the core its application runs on
	rxq    int32     // the receive queue frames for it arrive on
	// appCPU is &host.cores[core], and rxCPU the core of its receive
	// queue, where its timers and paced sends run: set once the
	// connection is made (host.cores never grows).
	appCPU, rxCPU *core
	// coalesce: frames for it are merged on receive (GRO in the stack
	// profile and on the NIC, or hardware LRO).
	coalesce bool
	// onWake is what a wake-up from sleep makes of its application:
	// wokeUp when its host has a scheduler (the turn comes a wake-up
	// latency later, sched.go), else wokeNone (at once).
	onWake wokeState
	// appCore: only applications charge its core (no receive queue,
	// interrupt, machine mate or scheduler): its own and coreMates'
	// (holdTurn).
	appCore   bool
	coreMates []*endpoint
	// canHold: its turns may be held (holdTurn): on an application core
	// (appCore), or on a guarded core (core.holders) of a host with
	// neither a scheduler nor a machine.
	canHold bool

	snd sender
	rcv receiver
	app app
}

// sender is the output half of a tcp_sock.
type sender struct {
	wq       writeQueue
	sndUna   int64 // first unacknowledged byte (tp->snd_una)
	sndNxt   int64 // next byte to send (tp->snd_nxt)
	sndMax   int64 // highest byte sent (FreeBSD snd_max)
	writeSeq int64 // end of the data the application queued (tp->write_seq)

	packetsOut int64 // segments sent and not acknowledged (tp->packets_out)
	dupAcks    int64 // duplicate ACKs counted since the last advance (Reno sacked_out)

	cwnd     int64      // congestion window, segments (tp->snd_cwnd); Linux profiles
	cwndCnt  int64      // ACKs counted toward the next increase (tp->snd_cwnd_cnt)
	ssthresh int64      // slow-start threshold, segments (tp->snd_ssthresh)
	cc       congestion // the algorithm

	sndWnd int64 // the peer's window from snd_una, bytes (tp->snd_wnd)
	maxWnd int64 // largest window the peer offered, bytes (tp->max_window)
	sndSml int64 // end of the last small segment sent (tp->snd_sml, Minshall)

	nonagle nagleMode // the socket's setting: TCP_NODELAY, TCP_CORK

	srtt   int64 // smoothed RTT, ns (RFC 6298)
	rttvar int64 // RTT variation, ns
	rto    int64 // retransmission timeout, ns
	minRTT int64 // smallest RTT sample, ns (tcp_min_rtt)
	rtoAt  int64 // when the retransmission timer fires, ns; 0 = not armed
	rtoEv  bool  // an evRTO is in the queue

	ca      caState // congestion state
	recover int64   // snd_max when recovery began (tp->high_seq)

	cwndUsed  int64 // largest packets_out while the network starved (tp->snd_cwnd_used)
	cwndStamp int64 // last time the cwnd was validated as used, ns (tp->snd_cwnd_stamp)
	// Linux 6.x's record of window use (usageSeqUse).
	isCwndLimited bool  // the last verdict of tcp_write_xmit for this window (tp->is_cwnd_limited)
	maxPacketsOut int64 // most segments in flight this window (tp->max_packets_out)
	cwndUsageSeq  int64 // the window ends when snd_una passes it (tp->cwnd_usage_seq)

	finRule       bool  // the last send test let a FIN through a full cwnd
	tsoDeferredAt int64 // when TSO deferral began, ns; -1 = not deferring (tp->tso_deferred)
	lastSend      int64 // last data send, ns (tp->lsndtime)

	paceBps  float64 // pacing rate, bits/s; 0 = none (sk_max_pacing_rate)
	paceNext int64   // earliest time of the next send under pacing, ns
	paceEv   bool    // an evPace is in the queue

	gso bool // buffers may be larger than one MSS (sk_can_gso)
	tso bool // the NIC cuts them (NETIF_F_TSO in force); else software GSO does

	pageOff int64 // where the next paged byte goes in the sender's page (TCP_OFF), bytes (skbLayout)

	sndBuf  int64 // send buffer limit on queued payload, bytes (sk_sndbuf, FreeBSD sb_hiwat)
	sndAuto bool  // FreeBSD SB_AUTOSIZE on so_snd: tcp_output may grow sndBuf

	// TCP Small Queues (profile.tsq, tsq.go).
	wmem         int64    // sk_wmem_alloc: truesize of units below TCP, not yet freed
	frees        []txFree // when the device frees each of them, from freeHead
	freeHead     int
	tsqThrottled bool // TSQ_THROTTLED
	tsqEv        bool // an evTSQ is in the queue
	// corked: this push's pass stops at the tail (autocorkPush).
	corked bool
}

// inFlight is tcp_packets_in_flight with Reno's duplicate ACKs counted
// as having left the network.
func (s *sender) inFlight() int64 { return max(0, s.packetsOut-s.dupAcks) }

// sendNow clears the deferral mark and says "do not defer".
func (s *sender) sendNow() bool {
	s.tsoDeferredAt = -1
	return false
}

// pacingRate is sk_pacing_rate in bits/s as linux-6 sets it in
// tcp_update_pacing_rate: mss_cache * max(cwnd, packets_out) / srtt, at
// 200% (tcp_pacing_ss_ratio) while cwnd < ssthresh/2 and 120%
// (tcp_pacing_ca_ratio) after, capped by the application's maximum
// (sk_max_pacing_rate). Before the first RTT sample (the model has no
// handshake to take one from) srtt counts as 1 ms.
func (s *sender) pacingRate(mss int64) float64 {
	srtt := s.srtt
	if srtt <= 0 {
		srtt = 1e6
	}
	ratio := 1.2
	if s.cwnd < s.ssthresh/2 {
		ratio = 2
	}
	r := ratio * float64(max(s.cwnd, s.packetsOut)*mss) * 8 * 1e9 / float64(srtt)
	if s.paceBps > 0 && r > s.paceBps {
		r = s.paceBps
	}
	return r
}

// pacedBytes is sk_pacing_rate >> sk_pacing_shift: about a millisecond
// of the pacing rate, bytes (tcp_tso_autosize, tcp_small_queue_check).
func (s *sender) pacedBytes(mss int64) int64 { return int64(s.pacingRate(mss)/8) >> pacingShift }

// tsoSegs mirrors tcp_set_skb_tso_segs: one segment unless the buffer is
// longer than the MSS and the route can do GSO.
func (ep *endpoint) tsoSegs(b *skb) int64 {
	n := b.len()
	if n <= ep.mss || !ep.snd.gso || b.linear {
		return 1
	}
	return (n + ep.mss - 1) / ep.mss
}

func (ep *endpoint) stopped(r stopReason) { ep.w.stats.stops[r]++ }

// output runs the profile's output path.
func (ep *endpoint) output(now int64, nonagle nagleMode, cpu *core) int {
	if ep.prof.divides && ep.snd.gso {
		cpu.charge(now, ep.host.cpu.Divide)
	}
	n := ep.prof.output.xmit(ep, now, nonagle, cpu)
	if n == 0 {
		ep.armProbe(now)
	}
	return n
}

// paceOK reports whether pacing allows a send now, arming the pacing
// timer when it does not.
func (ep *endpoint) paceOK(now int64) bool {
	s := &ep.snd
	if s.paceBps <= 0 || s.paceNext <= now {
		return true
	}
	ep.stopped(stopPacing)
	if !s.paceEv {
		s.paceEv = true
		ep.w.q.push(s.paceNext, evPace, ep.idx)
	}
	return false
}

// fragment cuts buffer i at limit bytes; the rest becomes the next buffer
// (tso_fragment / tcp_fragment).
func (ep *endpoint) fragment(i int, limit int64) {
	s := &ep.snd
	b := &s.wq.q[i]
	old := ep.tsoSegs(b)
	rest := skb{seq: b.seq + limit, end: b.end, linear: b.linear, fin: b.fin}
	rest.head, rest.pgOff = layoutFrom(b, limit)
	b.head = uint16(min(int64(b.head), limit))
	b.end = b.seq + limit
	b.fin = false
	sent := i < s.wq.sendHead
	s.wq.insertAfter(i, rest)
	if sent {
		// A sent buffer cut for retransmission: both halves are out.
		b = &s.wq.q[i]
		b.pcount = ep.tsoSegs(b)
		r := &s.wq.q[i+1]
		r.pcount = ep.tsoSegs(r)
		r.sentAt, r.retrans = b.sentAt, b.retrans
		s.packetsOut += b.pcount + r.pcount - old
	}
}

// gatherUnsent merges unsent buffers after i into it until it holds at
// least length bytes (FreeBSD's socket buffer is one byte stream).
func (ep *endpoint) gatherUnsent(i int, length int64) {
	w := &ep.snd.wq
	for w.q[i].len() < length && i+1 < len(w.q) {
		w.q[i].end = w.q[i+1].end
		w.q[i].fin = w.q[i+1].fin
		copy(w.q[i+1:], w.q[i+2:])
		w.q = w.q[:len(w.q)-1]
	}
}

// transmit hands buffer i to the device (tcp_transmit_skb and
// dev_queue_xmit): CPU on cpu, then bus, NIC and wire. It reports false
// when the sender's own queue refused the unit (localCongestion): the
// buffer stays unsent.
func (ep *endpoint) transmit(now int64, i int, cpu *core) bool {
	s := &ep.snd
	w := ep.w
	b := &s.wq.q[i]
	n := b.len()
	pc := ep.tsoSegs(b)
	b.pcount = pc
	p := &ep.host.cpu
	cost := p.StackPerSkb
	switch {
	case pc > 1 && s.tso:
		cost += p.DriverPerUnit
	case pc > 1:
		cost += float64(pc) * (p.GSOPerSeg + p.DriverPerUnit)
	default:
		cost += p.DriverPerUnit
	}
	if pc > 1 && ep.prof.divides {
		cost += p.Divide
	}
	if !ep.nic.off.Has(offTxCsum) {
		cost += p.CsumPerByte * float64(n)
	}
	// The unit's CPU end and when it reaches the egress queue, computed
	// once for the queue's test and the charges below.
	onWire, busEnd := ep.atQueue(cpu.doneAt(now, cost), b, pc)
	if ep.prof.localCongestion && !ep.queueTakes(onWire, n, pc) {
		cpu.charge(now, p.StackPerSkb)
		ep.enterCWR(now)
		w.stats.refused++
		return false
	}
	cpu.charge(now, cost) // ends at doneAt's time
	// The TX completion interrupt's work queues on the interrupt core
	// from now: charged at done, a completion of work queued on another
	// core would reserve the interrupt core's future and leave it idle
	// before, with receive work waiting. A veth on one machine raises no
	// TX interrupt: its skbs are freed as the receive path, in the
	// sender's context, consumes them, on the sending core.
	irq := &ep.host.cores[ep.host.irqCore]
	if ep.nic.onMachine {
		irq = cpu
	}
	if s.tso || pc == 1 {
		irq.charge(now, p.TxCompletion)
	} else {
		irq.charge(now, float64(pc)*p.TxCompletion)
	}

	retrans := b.seq < s.sndMax
	if retrans {
		b.retrans = true
	}
	b.sentAt = now
	if i == s.wq.sendHead {
		s.wq.sendHead++
		s.sndNxt = b.end
		s.packetsOut += pc
		if w.checks != nil && !s.finRule && !retrans {
			w.checks.inFlight(ep)
		}
	}
	s.sndMax = max(s.sndMax, b.end)
	s.lastSend = now
	if s.paceBps > 0 {
		s.paceNext = max(now, s.paceNext) + int64(float64(n)*8e9/s.paceBps)
	}
	w.countUnit(ep, now, n, pc, retrans)
	w.stats.wireSegs += pc
	if w.checks != nil {
		w.checks.unit(ep, b, pc)
	}

	// The data carries an ACK of what this end received (tcp_event_ack_sent).
	r := &ep.rcv
	if r.started {
		if r.delackAt != 0 {
			w.stats.acks[ackPiggyback]++
		}
		r.delackAt = 0
		r.wup = r.nxt
		ep.prof.acks.onDataSent(ep, now, pc)
	}
	if ep.host.busNs != 0 {
		ep.host.busFree = busEnd // the unit has the bus until then: nothing since atQueue moved it
	}
	left := w.sendFrames(ep, onWire, b.seq, n, pc, b.fin)
	if ep.prof.tsq != nil {
		s.holdWmem(n, left)
	}

	if s.rtoAt == 0 {
		ep.armRTO(now)
	}
	return true
}

// atQueue is when unit b of pc segments, its CPU work done at done,
// reaches the sender's egress queue (onWire): after the bus, where the
// host has one, and then busEnd is when the unit leaves the bus, which
// transmit reserves (busFree) if it sends the unit. The model's egress
// queue stands for the qdisc and the NIC's ring together, and frames
// reach it after the bus.
func (ep *endpoint) atQueue(done int64, b *skb, pc int64) (onWire int64, busEnd float64) {
	h := ep.host
	if h.busNs == 0 {
		return done, 0
	}
	busEnd = h.busEnd(done, b.len()+pc*(hdrLen+14), unitBuffers(b, ep.mss, pc, ep.snd.tso))
	return int64(math.Ceil(busEnd)), busEnd
}

// queueTakes reports whether the sender's own egress queue (its NIC's
// qdisc, or a shaper's) takes a unit of n payload bytes in pc frames that
// reaches it at t: a qdisc enqueues the skb whole, GSO segments and all
// (they are cut at dequeue, validate_xmit_skb), and an empty queue takes
// any (pfifo_fast and tbf count packets; the model's queue counts the
// frames' bytes). Loopback and an unshaped veth have no queue.
func (ep *endpoint) queueTakes(t, n, pc int64) bool {
	nic := ep.nic
	if nic.loopback {
		return true
	}
	return nic.egress.takes(t, n+pc*(hdrLen+nic.l2))
}

// enterCWR is tcp_enter_cwr, which __tcp_transmit_skb calls when the
// device layer refused the skb (NET_XMIT_DROP from the qdisc): from the
// Open state, ssthresh from congestion control and the window reduced to
// it (tcp_init_cwnd_reduction; PRR's gradual reduction is not modelled,
// as in recovery), until something above high_seq (snd_nxt now) is
// acknowledged. tcp_write_xmit stops with the buffer at the send head: a
// local drop is congestion, not a loss to repair.
func (ep *endpoint) enterCWR(now int64) {
	s := &ep.snd
	if s.ca != caOpen {
		return
	}
	s.ca = caCWR
	s.recover = s.sndNxt
	s.cc.onLoss(ep, now)
}

func (ep *endpoint) armRTO(now int64) {
	s := &ep.snd
	s.rtoAt = now + s.rto
	if !s.rtoEv {
		s.rtoEv = true
		ep.w.q.push(s.rtoAt, evRTO, ep.idx)
	}
}

// onAck mirrors tcp_ack: advance snd_una, free acknowledged buffers, take
// an RTT sample, run congestion control or recovery, take the window.
// pure says the segment carried no data (only pure ACKs count as
// duplicates).
func (ep *endpoint) onAck(now, ack, wnd int64, pure bool, cpu *core) {
	s := &ep.snd
	if ack < s.sndUna || ack > s.sndMax {
		return
	}
	if ack > s.sndUna {
		priorInFlight := s.inFlight()
		acked := ack - s.sndUna
		var segs int64
		rtt := int64(-1)
		wq := &s.wq
		for wq.head < len(wq.q) && wq.q[wq.head].end <= ack {
			b := &wq.q[wq.head]
			if wq.head < wq.sendHead {
				segs += b.pcount
				if !b.retrans {
					rtt = now - b.sentAt
				}
			}
			wq.head++
		}
		if wq.head > wq.sendHead {
			wq.sendHead = wq.head
		}
		if wq.head < len(wq.q) && wq.q[wq.head].seq < ack {
			b := &wq.q[wq.head]
			old := b.pcount
			b.head, b.pgOff = layoutFrom(b, ack-b.seq)
			b.seq = ack
			if wq.head < wq.sendHead {
				b.pcount = ep.tsoSegs(b)
				segs += old - b.pcount
			}
		}
		s.packetsOut = max(0, s.packetsOut-segs)
		s.sndUna = ack
		if s.sndNxt < ack {
			s.sndNxt = ack
		}
		if rtt >= 0 {
			ep.rttSample(now, rtt)
		}
		switch s.ca {
		case caCWR:
			// tcp_fastretrans_alert: CWR ends once something above
			// high_seq is acknowledged (tcp_end_cwnd_reduction); the
			// cwnd does not grow meanwhile.
			if ack > s.recover {
				s.ca = caOpen
				s.cc.onRecovered(ep)
			}
		case caRecovery:
			if ack >= s.recover {
				s.ca = caOpen
				s.cc.onRecovered(ep)
			} else {
				ep.retransmitHead(now, cpu)
			}
		case caLoss:
			if ack >= s.recover {
				s.ca = caOpen
			}
		default:
			s.cc.onAck(ep, now, segs, acked, ep.prof.use.limited(s, priorInFlight))
		}
		s.dupAcks = 0
		if s.packetsOut > 0 {
			s.rtoAt = now + s.rto
		} else {
			s.rtoAt = 0
		}
		wq.compact()
	} else if pure && s.packetsOut > 0 && wnd == s.sndWnd {
		s.dupAcks++
		if s.dupAcks == 3 && s.ca <= caCWR {
			// From CWR the window is already reduced
			// (tcp_enter_recovery: tcp_in_cwnd_reduction).
			if s.ca == caOpen {
				s.cc.onLoss(ep, now)
			}
			s.ca = caRecovery
			s.recover = s.sndMax
			ep.retransmitHead(now, cpu)
		}
	}
	s.sndWnd = wnd
	if wnd > s.maxWnd {
		s.maxWnd = wnd
	}
}

// rttSample mirrors tcp_rtt_estimator and tcp_set_rto (RFC 6298).
func (ep *endpoint) rttSample(now, rtt int64) {
	s := &ep.snd
	if rtt <= 0 {
		rtt = 1
	}
	if s.minRTT == 0 || rtt < s.minRTT {
		s.minRTT = rtt
	}
	if s.srtt == 0 {
		s.srtt = rtt
		s.rttvar = rtt / 2
	} else {
		d := rtt - s.srtt
		if d < 0 {
			d = -d
		}
		s.rttvar += (d - s.rttvar) / 4
		s.srtt += (rtt - s.srtt) / 8
	}
	s.rto = max(s.srtt+4*s.rttvar, ep.prof.rtoMin)
	s.cc.onRTT(ep, now, rtt)
}

// retransmitHead resends the first unacknowledged segment (fast
// retransmit, NewReno partial ACK), cut to one MSS.
func (ep *endpoint) retransmitHead(now int64, cpu *core) {
	s := &ep.snd
	i := s.wq.head
	if i >= s.wq.sendHead {
		return
	}
	if s.wq.q[i].len() > ep.mss {
		ep.fragment(i, ep.mss)
	}
	ep.transmit(now, i, cpu)
}

// onRTO mirrors tcp_retransmit_timer: back off, collapse cwnd, and go back
// to snd_una.
func (ep *endpoint) onRTO(now int64) {
	s := &ep.snd
	s.rtoEv = false
	if s.rtoAt == 0 {
		return
	}
	if now < s.rtoAt {
		s.rtoEv = true
		ep.w.q.push(s.rtoAt, evRTO, ep.idx)
		return
	}
	s.rtoAt = 0
	if s.packetsOut == 0 && s.sndUna == s.sndMax {
		if s.wq.unsent() {
			ep.probe(now)
		}
		return
	}
	ep.w.stats.timeouts++
	s.cc.onTimeout(ep, now)
	s.ca = caLoss
	s.recover = s.sndMax
	s.wq.sendHead = s.wq.head
	s.sndNxt = s.sndUna
	s.packetsOut = 0
	s.dupAcks = 0
	s.rto = min(2*s.rto, 120e9)
	ep.output(now, naglePush, ep.rxCPU)
	if s.rtoAt == 0 && s.sndUna < s.sndMax {
		ep.armRTO(now)
	}
}

// probe mirrors the probe timer (tcp_probe_timer, tcp_write_wakeup):
// with nothing in flight and a send head the output path refuses (a
// receive window of zero, or a 2.6.12 buffer larger than the cwnd), send
// one segment of it anyway, then back off.
func (ep *endpoint) probe(now int64) {
	s := &ep.snd
	i := s.wq.sendHead
	seg := min(ep.mss, max(s.sndUna+s.sndWnd-s.wq.q[i].seq, 1))
	if s.wq.q[i].len() > seg {
		ep.fragment(i, seg)
	}
	s.finRule = true // a probe is outside the cwnd
	ep.transmit(now, i, ep.rxCPU)
	s.rto = min(2*s.rto, 120e9)
	ep.armRTO(now)
}

// armProbe starts the probe timer when the output path left data unsent
// with nothing in flight (tcp_check_probe_timer).
func (ep *endpoint) armProbe(now int64) {
	s := &ep.snd
	if s.packetsOut == 0 && s.wq.unsent() && s.rtoAt == 0 {
		ep.armRTO(now)
	}
}

// ---- receiver ----

// span is a run of out-of-order bytes [seq, end).
type span struct{ seq, end int64 }

// receiver is the input half of a tcp_sock.
type receiver struct {
	started bool  // data has arrived once (quickack mode entered)
	nxt     int64 // next byte expected (tp->rcv_nxt)
	wup     int64 // rcv_nxt when the last ACK went (tp->rcv_wup)
	wnd     int64 // window the last outgoing segment advertised, bytes from wup (tp->rcv_wnd)
	ssthr   int64 // the window's cap tcp_grow_window raises (tp->rcv_ssthresh; linuxAcks.growWindow)
	right   int64 // right edge of the last advertised window; never shrinks
	buf     int64 // receive buffer, bytes (sk_rcvbuf, as payload)
	wscale  uint  // window scale shift (RFC 7323)
	unread  int64 // bytes in order, not yet read by the application
	ooo     []span
	oooB    int64 // bytes held out of order

	delackAt int64 // when the delayed ACK fires, ns; 0 = no ACK pending
	delackEv bool  // an evDelAck is in the queue
	quick    int64 // quick ACKs left (icsk_ack.quick)
	pingpong bool  // interactive mode (icsk_ack.pingpong)
	lrcvtime int64 // last data arrival, ns (icsk_ack.lrcvtime)
	pending  int64 // segments received since the last ACK (FreeBSD TF_DELACK)

	readBytes int64 // bytes the application read: delivered once, in order
	dupBytes  int64 // bytes that arrived again and were dropped

	// Receive-buffer autotuning (rcvSpaceAdjust): the most buf grows to
	// (tcp_rmem[2]; 0 = none), and tp->rcvq_space: bytes read in the
	// last measured RTT, and where and when this measure began.
	autoMax             int64
	space               int64
	spaceSeq, spaceTime int64
}

// rcvSpaceAdjust mirrors tcp_rcv_space_adjust of Linux 6.x (DRS, as
// tcp_recvmsg calls it after a copy to user space): once an RTT, if the
// application read more in the last RTT than in the one before, grow the
// receive buffer to twice that plus 16 segments, plus twice the growth
// again for a sender in slow start (rcvwin += 2 * rcvwin * (copied -
// space) / space), up to tcp_rmem[2]; it never shrinks. The RTT is the
// receiver's timestamp estimate (tcp_rcv_rtt_measure_ts: the echo of its
// own timestamps), the path's RTT the sender measures; the model's
// buffer counts payload, so tcp_space_from_win is the identity.
func (ep *endpoint) rcvSpaceAdjust(now int64) {
	r := &ep.rcv
	rtt := ep.peer.snd.srtt
	if rtt <= 0 || now-r.spaceTime < rtt {
		return
	}
	if copied := r.readBytes - r.spaceSeq; copied > r.space {
		rcvwin := 2*copied + 16*ep.mss
		rcvwin += 2 * (rcvwin * (copied - r.space) / r.space)
		if b := min(rcvwin, r.autoMax); b > r.buf {
			r.buf = b
		}
		r.space = copied
	}
	r.spaceSeq, r.spaceTime = r.readBytes, now
}

// ackKind classifies the ACKs a receiver sends.
type ackKind uint8

const (
	ackQuick     ackKind = iota // quickack mode: every segment (tcp_in_quickack_mode)
	ackDelayed                  // the delayed-ACK policy's second full segment
	ackTimer                    // the delayed-ACK timer fired
	ackDup                      // out-of-order or duplicate data: immediate duplicate ACK
	ackWindow                   // a window update after the application read
	ackPiggyback                // a pending ACK carried by a data segment
	numAckKinds
)

var ackNames [numAckKinds]string = result.AckKinds // a different count does not compile

func (k ackKind) String() string { return ackNames[k] }

// ackPolicy is the receiver's ACK policy and window advertisement.
type ackPolicy interface {
	// onData decides after a segment of n bytes (or a GRO/LRO
	// super-segment of frames segments) of in-order data whether to ACK
	// now.
	onData(ep *endpoint, now, n, frames int64) (now_ bool, kind ackKind)
	// onDataSent is tcp_event_data_sent/tcp_event_ack_sent for a data
	// segment of pcount segments.
	onDataSent(ep *endpoint, now, pcount int64)
	// onAckSent is tcp_event_ack_sent for a pure ACK.
	onAckSent(ep *endpoint)
	// delay is how long a delayed ACK waits, ns.
	delay(ep *endpoint) int64
	// window is the window to advertise from rcv_nxt, bytes.
	window(ep *endpoint) int64
	// onTimer runs when the delayed-ACK timer fires.
	onTimer(ep *endpoint)
	// windowUpdate says whether a read that moved the window from old to
	// now bytes deserves a window update at once.
	windowUpdate(ep *endpoint, old, now int64) bool
}

// linuxAcks mirrors __tcp_ack_snd_check and the quickack machinery of
// tcp_input.c: ACK at once in quickack mode, or when more than one full
// segment is unacknowledged and the window the receiver would offer now
// is no smaller than the one it last offered (__tcp_select_window(sk) >=
// tp->rcv_wnd: "right edge of window advances far enough", in every
// kernel since 2.4, 2.6.12's tcp_input.c included); otherwise arm the
// delayed-ACK timer (ATO). Data the reader has not read yet takes from
// the window, so a segment that finds unread data behind it is not ACKed
// by the input path: the reader's next read sends the ACK
// (tcp_cleanup_rbuf, windowUpdate), or the timer does. 4.18 added a
// third case, fewer than SO_RCVLOWAT bytes unread (commit "tcp: fix
// delayed acks behavior for SO_RCVLOWAT"); at the default of 1 byte it
// never holds for a segment that has just brought data, so the model has
// no SO_RCVLOWAT. growWindow is rcv_ssthresh (growRcvSsthresh), which
// caps the window and whose growth sets quickack mode.
// decByPcount is patch 2/9: tcp_dec_quickack_mode counts every segment of
// a TSO frame, not one per frame.
//
// ucopyDelack is tcp_rcv_established before commit 314324121f9b ("[TCP]:
// Fix stretch ACK performance killer when doing ucopy", 2.6.12-rc5; the
// tcp_ack26 patch of the Super TSO posting): a segment "eaten", copied
// straight into the buffer of a reader waiting in tcp_recvmsg (ucopy, the
// prequeue), took tcp_send_delayed_ack (tcp_send_ack in quickack mode)
// instead of __tcp_ack_snd_check, so its ACK waited for the read's
// cleanup_rbuf ("Once-per-two-segments ACK was not sent by tcp_input.c":
// more than one segment since the last ACK) or the delayed-ACK timer. The
// hunk is quoted in the reject Maciej Soltysiak posted against
// 2.6.12-rc5 (linux-kernel, 25 May 2005, "Re: 2.6.12-rc4-tcp3"). The model
// has no prequeue: a segment counts as eaten when all the unread data,
// it included, fits one read of the application (copied_seq == rcv_nxt
// before it and room in ucopy.len).
type linuxAcks struct {
	decByPcount bool
	ato         int64 // ns (TCP_ATO_MIN)
	ucopyDelack bool
	growWindow  bool
}

func (a *linuxAcks) onData(ep *endpoint, now, n, _ int64) (bool, ackKind) {
	r := &ep.rcv
	if !r.started || now-r.lrcvtime > ep.peer.snd.rto && ep.peer.snd.rto > 0 {
		// tcp_event_data_recv: first data, or data after an idle RTO,
		// (re-)enters quickack mode (tcp_incr_quickack).
		r.quick = min(max(r.buf/(2*ep.mss), 2), 16)
	}
	r.started = true
	r.lrcvtime = now
	if a.growWindow && n >= 128 && r.ssthr < r.buf {
		growRcvSsthresh(ep, n)
	}
	if r.quick > 0 && !r.pingpong {
		return true, ackQuick
	}
	if a.ucopyDelack && ep.app.readSize > 0 && r.unread <= ep.app.readSize {
		return false, ackDelayed
	}
	if r.nxt-r.wup > ep.mss && a.window(ep) >= r.wnd {
		return true, ackDelayed
	}
	return false, ackDelayed
}

// growRcvSsthresh mirrors tcp_grow_window (tcp_input.c, Linux 6.x), which
// tcp_event_data_recv calls for every in-order segment of at least 128
// bytes: while rcv_ssthresh is below the window clamp, raise it by two
// segments or twice the segment's length (incr = max(2 * advmss, 2 *
// skb->len), at most the room) and set quickack mode for the next ACK
// (icsk_ack.quick |= 1). So a connection ACKs every segment while its
// window grows: from the first window (tcp_select_initial_window,
// rcv_ssthresh = rcv_wnd) each time DRS grows the buffer (and with it
// window_clamp). The kernel's room is min(window_clamp, tcp_space(sk)) -
// rcv_ssthresh, tcp_space the free space at the scaling ratio of the
// moment (tcp_measure_rcv_mss moves it with each skb's len/truesize);
// measured on this machine's 6.18, rcv_ssthresh ends at the clamp (`ss
// -ti`: 0.63 of sk_rcvbuf in every connection, the ratio, with data
// unread), so the model's room is the buffer (its clamp: the buffer
// counts payload) less rcv_ssthresh. Check #2's truesize test passes
// here, as for full-sized segments.
func growRcvSsthresh(ep *endpoint, n int64) {
	r := &ep.rcv
	room := r.buf - r.ssthr
	if room <= 0 {
		return
	}
	r.ssthr += min(room, max(2*ep.mss, 2*n))
	r.quick |= 1
}

func (a *linuxAcks) onDataSent(ep *endpoint, now, pcount int64) {
	r := &ep.rcv
	// icsk_ack.ato is 0 until the first data arrives, so a connection
	// that has received nothing does not enter pingpong mode.
	if r.started && now-r.lrcvtime < a.ato {
		r.pingpong = true
	}
	if !a.decByPcount {
		pcount = 1
	}
	r.quick = max(0, r.quick-pcount)
}

func (a *linuxAcks) onAckSent(ep *endpoint) {
	if ep.rcv.quick > 0 {
		ep.rcv.quick--
	}
}

func (a *linuxAcks) delay(*endpoint) int64 { return a.ato }

func (a *linuxAcks) onTimer(ep *endpoint) { ep.rcv.pingpong = false }

// windowUpdate mirrors tcp_cleanup_rbuf (tcp.c; cleanup_rbuf in 2.6.12)
// after a read: ACK when an ACK is pending and more than one full segment
// came since the last one ("Once-per-two-segments ACK was not sent by
// tcp_input.c": the ACK onData left to the read, for data that found
// unread data behind it, or with ucopyDelack for data eaten by a waiting
// reader), or when the window at least doubled and had fallen below half
// the buffer. (Its third case, a read that empties the queue after a
// segment shorter than the MSS, ICSK_ACK_PUSHED, is not modelled.)
func (a *linuxAcks) windowUpdate(ep *endpoint, old, now int64) bool {
	r := &ep.rcv
	if r.delackAt != 0 && r.nxt-r.wup > ep.mss {
		return true
	}
	return now >= 2*old && old < r.buf/2 && now-old >= ep.mss
}

// window mirrors __tcp_select_window: free space, at most rcv_ssthresh
// (growWindow), rounded down to whole segments. As there, a free space
// below half the buffer ends quickack mode (icsk_ack.quick = 0;
// tp->ack.quick in 2.6.12).
func (a *linuxAcks) window(ep *endpoint) int64 {
	r := &ep.rcv
	free := max(0, r.buf-r.unread-r.oooB)
	if free < r.buf/2 {
		r.quick = 0
	}
	if a.growWindow {
		free = min(free, r.ssthr)
	}
	if free > ep.mss {
		free -= free % ep.mss
	}
	return r.scaled(free)
}

// freebsdAcks mirrors tcp_input's DELAY_ACK: a segment of at most one MSS
// is ACKed late unless the delayed-ACK timer already runs (so every
// second segment is ACKed at once); an LRO aggregate longer than an MSS is
// ACKed at once.
type freebsdAcks struct {
	delack int64
	sbMax  int64 // kern.ipc.maxsockbuf: bounds sb_mbmax
}

func (a *freebsdAcks) onData(ep *endpoint, _, _, frames int64) (bool, ackKind) {
	r := &ep.rcv
	r.started = true
	if frames > 1 || r.delackAt != 0 {
		return true, ackDelayed
	}
	return false, ackDelayed
}

func (a *freebsdAcks) onDataSent(*endpoint, int64, int64) {}
func (a *freebsdAcks) onAckSent(*endpoint)                {}
func (a *freebsdAcks) delay(*endpoint) int64              { return a.delack }
func (a *freebsdAcks) onTimer(*endpoint)                  {}

// windowUpdate mirrors tcp_output's window-update test after
// tcp_usr_rcvd: the window grew by two segments and by a quarter buffer,
// or the window had fallen to an eighth of the buffer.
func (a *freebsdAcks) windowUpdate(ep *endpoint, old, now int64) bool {
	adv := now - old
	buf := ep.rcv.buf
	return adv >= 2*ep.mss && (adv >= buf/4 || old <= buf/8 || buf <= 8*ep.mss)
}

// window mirrors tcp_output's recwin: sbspace, which is the lesser of the
// byte space and the mbuf space (sb_mbmax - sb_mbcnt, sb_mbmax =
// min(sb_efficiency (8) * sb_hiwat, sb_max), every received segment
// holding an mbuf and a 2 KB cluster), with the receiver's silly-window
// rule (no window below a quarter buffer and one MSS).
func (a *freebsdAcks) window(ep *endpoint) int64 {
	r := &ep.rcv
	cc := r.unread + r.oooB
	mbcnt := (cc + ep.mss - 1) / ep.mss * (bsdMSIZE + bsdMCLBYTES)
	mbmax := min(8*r.buf, a.sbMax)
	free := max(0, min(r.buf-cc, mbmax-mbcnt))
	if free < r.buf/4 && free < ep.mss {
		free = 0
	}
	return r.scaled(free)
}

// scaled is free, a window, rounded down to what the window scale can
// say. (wscale is at most 14, windowScale: the mask tells the compiler
// the shift stays inside the word.)
func (r *receiver) scaled(free int64) int64 {
	s := r.wscale & 63
	return free >> s << s
}

// advertise returns the window for an outgoing segment and records its
// right edge (a window never shrinks).
func (ep *endpoint) advertise() int64 {
	r := &ep.rcv
	win := ep.prof.acks.window(ep)
	right := r.nxt + win
	if right < r.right {
		win = r.right - r.nxt
	}
	r.right = max(r.right, right)
	r.wnd = win
	return win
}

// rcvData mirrors tcp_data_queue for a segment of n bytes at seq that
// arrived as frames frames.
func (ep *endpoint) rcvData(now, seq, n, frames int64, cpu *core) {
	r := &ep.rcv
	w := ep.w
	end := seq + n
	switch {
	case seq <= r.nxt && end > r.nxt:
		r.dupBytes += r.nxt - seq
		ep.deliver(end - r.nxt)
		r.nxt = end
		for len(r.ooo) > 0 && r.ooo[0].seq <= r.nxt {
			o := r.ooo[0]
			r.oooB -= o.end - o.seq
			if o.end > r.nxt {
				r.dupBytes += r.nxt - o.seq
				ep.deliver(o.end - r.nxt)
				r.nxt = o.end
			} else {
				r.dupBytes += o.end - o.seq
			}
			r.ooo = r.ooo[:copy(r.ooo, r.ooo[1:])]
		}
		now_, kind := ep.prof.acks.onData(ep, now, n, frames)
		if !ep.host.delayedAck {
			now_, kind = true, ackQuick
		}
		if len(r.ooo) > 0 {
			now_, kind = true, ackDup
		}
		if now_ {
			ep.sendAck(now, kind, cpu)
		} else if r.delackAt == 0 {
			r.delackAt = now + ep.prof.acks.delay(ep)
			if !r.delackEv {
				r.delackEv = true
				w.q.push(r.delackAt, evDelAck, ep.idx)
			}
		}
		// sk_data_ready. A reader without a turn queued or held will
		// find data to read: it is queued here, in line; wakeReader
		// ends a held turn.
		if a := &ep.app; !a.ev {
			a.ev = true
			w.q.push(ep.wakeAt(now, a.lag), evAppRun, ep.idx)
		} else {
			a.wakeReader(ep, now)
		}
	case end <= r.nxt:
		r.dupBytes += n
		ep.sendAck(now, ackDup, cpu)
	default:
		ep.queueOOO(seq, end)
		ep.sendAck(now, ackDup, cpu)
	}
}

func (ep *endpoint) deliver(n int64) {
	ep.rcv.unread += n
	if ep.w.checks != nil {
		ep.w.checks.delivered += n
	}
}

// queueOOO inserts [seq, end) into the out-of-order list, merging.
func (ep *endpoint) queueOOO(seq, end int64) {
	r := &ep.rcv
	i := 0
	for i < len(r.ooo) && r.ooo[i].end < seq {
		i++
	}
	if i < len(r.ooo) && r.ooo[i].seq <= end {
		o := &r.ooo[i]
		before := o.end - o.seq
		o.seq = min(o.seq, seq)
		o.end = max(o.end, end)
		for i+1 < len(r.ooo) && r.ooo[i+1].seq <= o.end {
			before += r.ooo[i+1].end - r.ooo[i+1].seq
			o.end = max(o.end, r.ooo[i+1].end)
			r.ooo = append(r.ooo[:i+1], r.ooo[i+2:]...)
		}
		r.oooB += o.end - o.seq - before
		r.dupBytes += (end - seq) - (o.end - o.seq - before)
		return
	}
	r.ooo = append(r.ooo, span{})
	copy(r.ooo[i+1:], r.ooo[i:])
	r.ooo[i] = span{seq, end}
	r.oooB += end - seq
}

// sendAck sends a pure ACK (tcp_send_ack) on cpu.
func (ep *endpoint) sendAck(now int64, kind ackKind, cpu *core) {
	r := &ep.rcv
	w := ep.w
	done := cpu.charge(now, ep.host.cpu.AckTx)
	r.delackAt = 0
	r.wup = r.nxt
	w.stats.acks[kind]++
	ep.prof.acks.onAckSent(ep)
	w.sendFrames(ep, done, ep.snd.sndNxt, 0, 1, false)
}

// onDelAck is the delayed-ACK timer (tcp_delack_timer).
func (ep *endpoint) onDelAck(now int64) {
	r := &ep.rcv
	r.delackEv = false
	if r.delackAt == 0 {
		return
	}
	if now < r.delackAt {
		r.delackEv = true
		ep.w.q.push(r.delackAt, evDelAck, ep.idx)
		return
	}
	ep.prof.acks.onTimer(ep)
	ep.sendAck(now, ackTimer, ep.rxCPU)
}

// windowScale is the smallest shift that fits buf in 16 bits.
func windowScale(buf int64) uint {
	var s uint
	for buf>>s > math.MaxUint16 && s < 14 {
		s++
	}
	return s
}
