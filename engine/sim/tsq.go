package sim

// smallQueues is TCP Small Queues (Linux 3.6 and later; linux-6 here), as
// net/ipv4/tcp_output.c of Linux 6.x has it. tcp_write_xmit calls
// tcp_small_queue_check before it hands a buffer to tcp_transmit_skb:
// while the socket's bytes below TCP (sk_wmem_alloc, the truesize of the
// skbs given to the qdisc and the device and not yet freed) exceed about
// a millisecond of the pacing rate (sk_pacing_rate >> sk_pacing_shift, at
// least two of the buffer's truesize), capped by tcp_limit_output_bytes
// and doubled for a retransmission, it marks the socket TSQ_THROTTLED and
// stops, unless the retransmit queue holds at most one skb
// (tcp_rtx_queue_empty_or_single_skb). When the device frees one of the
// socket's skbs, tcp_wfree sees the mark and queues the socket's TSQ
// handler (tcp_tsq_handler, tcp_tsq_write), which runs tcp_write_xmit
// again in softirq context on the core that freed it.
//
// Where the skb is freed: a NIC frees it at TX completion, once its last
// frame has left; the model frees it when that frame leaves the egress
// serializer (the NIC's queue and wire, or a shaping qdisc's), without
// the TX interrupt's moderation. Loopback frees it at once
// (loopback_xmit orphans the skb), and so does a frame the queue drops.
type smallQueues struct {
	// limitOutputBytes is net.ipv4.tcp_limit_output_bytes: 4 MB in
	// tcp_sk_init since 2025 ("Default TSQ limit of 4 MB", 1 MB before),
	// what this machine's Linux 6.18 reports.
	limitOutputBytes int64
}

// pacingShift is sk_pacing_shift's default (10: ~1 ms of the pacing
// rate; sk_pacing_shift_update lowers it only for wifi drivers).
const pacingShift = 10

// skbOverhead is what an skb of the write queue costs beyond its payload
// in truesize on x86-64: struct sk_buff (232 bytes, SKB_DATA_ALIGNed to
// 256), and the head that tcp_stream_alloc_skb allocates for
// MAX_TCP_HEADER (320) with its skb_shared_info (320) from a 1 KB slab;
// the payload sits in page frags that count their size.
const skbOverhead = 256 + 1024

// throttle is tcp_small_queue_check for buffer b at now: true when TSQ
// holds it, with the TSQ handler armed for the next free.
func (t *smallQueues) throttle(ep *endpoint, b *skb, now int64) bool {
	return t.throttlePaced(ep, b, now, ep.snd.pacedBytes(ep.mss))
}

// throttlePaced is throttle for a sender whose pacedBytes is paced (an
// output pass takes it once until it sends: tcp_write_xmit).
func (t *smallQueues) throttlePaced(ep *endpoint, b *skb, now, paced int64) bool {
	s := &ep.snd
	s.releaseWmem(now)
	truesize := b.len() + skbOverhead
	limit := max(2*truesize, paced)
	limit = min(limit, t.limitOutputBytes)
	if b.seq < s.sndMax {
		limit <<= 1 // factor 1: a retransmission
	}
	if s.wmem <= limit || s.wq.sendHead-s.wq.head <= 1 {
		return false
	}
	ep.markThrottled()
	return true
}

// markThrottled sets TSQ_THROTTLED and queues the TSQ handler for the
// next free of the socket's skbs below TCP (tcp_wfree).
func (ep *endpoint) markThrottled() {
	s := &ep.snd
	s.tsqThrottled = true
	if !s.tsqEv {
		s.tsqEv = true
		ep.w.q.push(s.frees[s.freeHead].at, evTSQ, ep.idx)
	}
}

// txFree is one skb below TCP: its truesize and when the device frees it.
type txFree struct{ at, bytes int64 }

// holdWmem charges a unit of n payload bytes handed to the device to
// sk_wmem_alloc until freeAt (skb_set_owner_w; tcp_wfree).
func (s *sender) holdWmem(n, freeAt int64) {
	s.wmem += n + skbOverhead
	s.frees = append(s.frees, txFree{at: freeAt, bytes: n + skbOverhead})
}

// releaseWmem frees what the device has freed by now. Frees come in
// order: one connection's frames leave one serializer first in, first
// out.
func (s *sender) releaseWmem(now int64) {
	for s.freeHead < len(s.frees) && s.frees[s.freeHead].at <= now {
		s.wmem -= s.frees[s.freeHead].bytes
		s.freeHead++
	}
	if s.freeHead == len(s.frees) {
		s.frees, s.freeHead = s.frees[:0], 0
	} else if s.freeHead >= 64 && s.freeHead > len(s.frees)/2 {
		s.frees = s.frees[:copy(s.frees, s.frees[s.freeHead:])]
		s.freeHead = 0
	}
}

// onTSQ is the TSQ handler (tcp_tsq_handler, tcp_tsq_write), queued by
// the first free after a throttle: tcp_write_xmit with the socket's
// nonagle, in softirq on the CPU whose tcp_wfree found the socket
// throttled (tsq_tasklet is per CPU). A NIC frees at TX completion, on
// the core that runs its interrupts. A veth to a host of the same machine
// frees when the receiver's ip_rcv_core orphans the skb: unshaped, in the
// sending thread's context on its core (sendFrames); behind a tbf, in
// the machine's softirq context that no thread runs (machineSoftirq),
// where the qdisc's watchdog dequeues it.
func (ep *endpoint) onTSQ(now int64) {
	s := &ep.snd
	s.tsqEv = false
	s.releaseWmem(now)
	if !s.tsqThrottled {
		return
	}
	s.tsqThrottled = false
	if !s.wq.unsent() {
		return
	}
	c := &ep.host.cores[ep.host.irqCore]
	switch {
	case ep.nic.onMachine && ep.nic.shaped:
		c = &ep.host.machine.soft.cores[ep.core]
	case ep.nic.onMachine:
		c = ep.appCPU
	}
	ep.output(now, s.nonagle, c)
}
