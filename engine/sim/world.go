package sim

import (
	"math"

	"github.com/tsolab/tsolab/config"
)

// ethOverhead is the per-frame Ethernet cost on the wire beyond the IP
// packet: preamble 8, header 14, FCS 4, inter-frame gap 12.
const ethOverhead = 8 + 14 + 4 + 12

// hdrLen is the IP and TCP header of every segment, options included.
const hdrLen = 40 + tcpOptLen

// Offloads as config names them, aliased for brevity.
const (
	offTSO    = config.TSO
	offGSO    = config.GSO
	offGRO    = config.GRO
	offLRO    = config.LRO
	offSG     = config.SG
	offTxCsum = config.TxCsum
	offRxCsum = config.RxCsum
)

// host is one machine of the lab.
type host struct {
	name    string
	cpu     CPUProfile
	prof    *profile
	cores   []core
	irqCore int     // the core interrupts land on without RSS
	busNs   float64 // bus time per byte, ns; 0 = no bus limit
	busFree float64 // when the bus is free, ns
	nEps    int     // endpoints placed so far (for core assignment)
	queues  []int32 // receive queue index per core, -1 = none yet
	lo      *nicState
	sched   *sched // the scheduler the host runs (config.Host.Scheduler); nil = none
	// slice is the most an application's turn waits for its busy core,
	// ns: the stack's timeslice on this machine's cores (waitCore).
	slice   int64
	ithread *sched // sched when the stack runs interrupt handlers in threads (profile.ithreads), else nil
	// interrupts counts the NIC interrupts its receive queues took
	// (poll), and ithreadSwitches the interrupt thread's context
	// switches charged with them (irqWake): what the model did, for
	// tests to check.
	interrupts, ithreadSwitches int64
	// delayedAck: the receiver may delay ACKs (config.Host.DelayedAck);
	// without it every data segment is ACKed at once.
	delayedAck bool
	// machine is the host whose cores this one shares, itself for that
	// host (config.Host.CoresOf); nil for a host with cores of its own.
	machine *host
	// ctxQueues are the receive queues that run in this host's context,
	// by core, for veths to hosts of its machine (onMachine).
	ctxQueues []int32
	// soft is, on a machine's first host, the machine's softirq context
	// that no thread runs (machineSoftirq); nil until a shaped veth needs
	// it.
	soft *host
}

// machineSoftirq is the context of h's machine in which a shaped veth's
// frames are received: tbf's watchdog (an hrtimer) dequeues them and
// veth_xmit, netif_rx and process_backlog run in softirq outside any
// thread, so the kernel engine counts that time to neither side's
// threads and splits it between them. It is a view of the machine's
// cores with h's costs.
func (w *world) machineSoftirq(h *host) *host {
	m := h.machine
	if m.soft == nil {
		s := &host{name: m.name + " softirq", cpu: h.cpu, prof: h.prof, cores: make([]core, len(m.cores)), irqCore: m.irqCore}
		for i := range s.cores {
			s.cores[i].id = i
		}
		shareCores(s, m)
		m.soft = s
		w.ctxQueues(s)
	}
	return m.soft
}

// sameMachine reports whether a and b are namespaces of one machine
// (config.Host.CoresOf): their cores are one machine's.
func sameMachine(a, b *host) bool { return a.machine != nil && a.machine == b.machine }

// busEnd is when a transfer of one send unit of bytes in bufs DMA
// buffers over the host's I/O bus, ready at t, would end, reserving
// nothing (transmit reserves it: busFree).
func (h *host) busEnd(t, bytes, bufs int64) float64 {
	start := float64(t)
	if h.busFree > start { // math.Max without its NaN and signed-zero cases: neither occurs
		start = h.busFree
	}
	return start + h.cpu.BusPerUnit + float64(bufs)*h.cpu.BusPerBuffer + float64(bytes)*h.busNs
}

// nicState is one NIC with its resolved offloads and its wire.
type nicState struct {
	name     string
	host     *host
	mtu      int
	off      config.OffloadSet // in force after the feature fix-ups
	egress   serializer        // its transmit side: rate, queue, tail drop
	port     serializer        // the switch port that transmits toward it
	delay    int64             // one-way propagation delay of its egress, ns
	switched bool              // connected to a switch
	loopback bool              // the host's lo: no wire at all
	l2       int64             // what a frame costs the egress beyond its IP packet, bytes
	shaped   bool              // the lab sets its rate (a tbf)
	groSet   bool              // the lab sets its gro offload
	// onMachine: a veth to a host of the same machine (sameMachine): no
	// wire, a TSO unit crosses whole, the receive runs in the sender's
	// context (onMachineVeth).
	onMachine bool
}

// onMachineVeth makes n a veth between namespaces of one machine, as the
// kernel's veth driver is: without a wire (only a tbf `rate` shapes it,
// counting the frame from its Ethernet header: veth has no preamble, FCS
// or gap), the switch a bridge in the same kernel, and GRO off unless the
// lab turns it on (veth clears NETIF_F_GRO by default since Linux 5.13:
// "veth: allow enabling NAPI even without XDP").
func onMachineVeth(n *nicState) {
	if n.onMachine || n.loopback {
		return
	}
	n.onMachine = true
	n.l2 = 14
	if !n.shaped {
		n.egress.nsPerByte = 0
	}
	n.port.nsPerByte = 0
	if !n.groSet {
		n.off = n.off.Without(offGRO)
	}
}

// serializer is a link direction: frames leave one after another at the
// rate; a frame that would push the backlog past limit bytes is dropped.
// Without a rate they leave at once, in order.
type serializer struct {
	nsPerByte float64 // 8e9 / rate; 0 = infinitely fast
	free      float64 // when the last queued frame has left, ns
	limit     float64 // queue limit, bytes
	drops     int64   // frames tail-dropped
}

// Without a rate (nsPerByte 0: a veth on one machine, no wire) a frame
// leaves at once, in the order frames were sent, and none is dropped.
// (One body for both keeps send small enough to inline into path.)
func (l *serializer) send(t int64, bytes int64) (int64, bool) {
	ft := float64(t)
	start, backlog := ft, 0.0
	if l.free > ft {
		start = l.free
		backlog = (start - ft) / l.nsPerByte // +Inf without a rate: unused
	}
	if l.nsPerByte != 0 && backlog+float64(bytes) > l.limit {
		l.drops++
		return 0, false
	}
	l.free = start + float64(bytes)*l.nsPerByte
	return int64(math.Ceil(l.free)), true
}

// takes reports whether a unit of bytes that reaches the queue at t
// finds room: the queue is empty, or its backlog and the unit fit the
// limit. Without a rate nothing queues.
func (l *serializer) takes(t int64, bytes int64) bool {
	ft := float64(t)
	if l.nsPerByte == 0 || l.free <= ft {
		return true
	}
	return (l.free-ft)/l.nsPerByte+float64(bytes) <= l.limit
}

// frame is one wire frame on its way to a receive queue: a data segment
// (n > 0) or a pure ACK, carrying the sender's ACK and window either way.
type frame struct {
	at  int64 // arrival at the receive queue, ns
	seq int64 // first payload byte
	ack int64 // cumulative ACK of the other direction
	wnd int64 // window advertised with it, bytes
	ep  int32 // destination endpoint
	n   int32 // payload bytes
	fin bool
}

// rxQueue is one receive ring and the NAPI context that drains it.
type rxQueue struct {
	host *host
	core int
	cpu  *core   // &host.cores[core] (host.cores never grows)
	ring []frame // frames pending, from head, in arrival order
	head int
	// inRing ends the frames (from head) the receive ring holds, when
	// the CPU profile bounds it (RxRing): those that have arrived by the
	// queue's last poll step. The frames after it are still on the wire.
	inRing int
	pollEv bool // an evRxPoll is queued
	cont   bool // the queued poll continues a NAPI round: no new interrupt
	budget int  // frames left in this round's budget (NAPI weight 64)
	// softirq: no interrupt raises it; the sender's local_bh_enable runs
	// it at once (a veth's netif_rx and process_backlog).
	softirq bool
}

// wake is when a poll for a frame that arrives at at starts: after the
// interrupt's moderation, or at once in softirq context.
func (q *rxQueue) wake(at int64) int64 {
	if q.softirq {
		return at
	}
	return q.host.irqWake(q.cpu, at+int64(q.host.cpu.IRQDelay))
}

// pushFrame puts a frame (its fields, frame's) into receive queue qi's
// ring in arrival order and raises the interrupt of an idle queue. It
// takes the fields one by one and stores them into the slot: a frame
// passed whole is copied through the stack in wide moves that wait for
// the narrow stores before them, a stall per frame.
func (w *world) pushFrame(qi int32, at, seq, ack, wnd int64, ep, n int32, fin bool) {
	q := &w.rxqs[qi]
	if len(q.ring) == cap(q.ring) {
		q.ring = append(q.ring, frame{})
	} else {
		q.ring = q.ring[:len(q.ring)+1]
	}
	i := len(q.ring) - 1
	for ; i > q.head && q.ring[i-1].at > at; i-- {
		q.ring[i] = q.ring[i-1]
	}
	f := &q.ring[i]
	f.at, f.seq, f.ack, f.wnd, f.ep, f.n, f.fin = at, seq, ack, wnd, ep, n, fin
	if !q.pollEv {
		q.pollEv = true
		q.cont = false
		w.q.push(q.wake(at), evRxPoll, qi)
	}
}

// path carries one frame from NIC a to NIC b, returning when it leaves
// a's egress (t on loopback, and for a frame the egress drops) and its
// arrival.
func (w *world) path(a, b *nicState, t, wire int64) (left, arr int64, ok bool) {
	if a.loopback {
		return t, t, true
	}
	d, ok := a.egress.send(t, wire)
	if !ok {
		w.stats.drops++
		return t, 0, false
	}
	arr = d + a.delay
	if a.switched && b.switched {
		d2, ok := b.port.send(arr, wire)
		if !ok {
			w.stats.drops++
			return d, 0, false
		}
		arr = d2
	}
	return d, arr, true
}

// sendFrames puts a send unit of n payload bytes (pcount segments; n == 0
// is a pure ACK) from ep on the wire at time t (after the bus: transmit),
// and returns when its
// last frame has left ep's NIC (the skb is freed: TCP Small Queues).
// Over a veth on one machine the frames go to the receive queue of ep's
// core in ep's host's context (the sending thread's; one queue per
// direction of a connection, as the kernel's socket lock keeps one
// connection's frames in order), and a unit leaves its qdisc whole: a
// TSO unit crosses as one skb, a software GSO unit's segments arrive
// together (vethUnit).
func (w *world) sendFrames(ep *endpoint, t, seq, n, pcount int64, fin bool) int64 {
	dst := ep.peer
	ack := ep.rcv.nxt
	wnd := ep.advertise()
	qi := dst.rxq
	switch {
	case ep.nic.onMachine && ep.nic.shaped:
		qi = ep.host.machine.soft.ctxQueues[ep.core]
	case ep.nic.onMachine:
		qi = ep.backlog()
	}
	if n == 0 {
		left, arr, ok := w.path(ep.nic, dst.nic, t, hdrLen+ep.nic.l2)
		if ok {
			w.pushFrame(qi, arr, seq, ack, wnd, dst.idx, 0, false)
		}
		return left
	}
	if ep.nic.onMachine && pcount > 1 {
		return w.vethUnit(ep, qi, t, seq, ack, wnd, n, pcount, fin)
	}
	off, last := int64(0), t
	for k := int64(0); k < pcount; k++ {
		plen := min(ep.mss, n-off)
		if k == pcount-1 {
			plen = n - off
		}
		left, arr, ok := w.path(ep.nic, dst.nic, t, plen+hdrLen+ep.nic.l2)
		if ok {
			w.pushFrame(qi, arr, seq+off, ack, wnd, dst.idx, int32(plen), fin && k == pcount-1)
		}
		last = max(last, left)
		off += plen
	}
	return last
}

// vethUnit puts a send unit of n bytes in pcount > 1 segments from ep,
// carrying ack and wnd, on a veth to a host of the same machine, into
// receive queue qi, as sendFrames does, and returns when it left.
// The qdisc (a tbf: the lab's rate) takes the skb whole and lets it go
// whole: tbf_dequeue charges qdisc_pkt_len, the unit's bytes with every
// segment's headers (qdisc_pkt_len_init), against its tokens at once,
// and provider/nic sizes the bucket so that tbf_enqueue never cuts a unit
// (tbf_segment). Only after the dequeue does software GSO cut it
// (sch_direct_xmit, validate_xmit_skb, skb_gso_segment), and
// dev_hard_start_xmit hands the segments to veth_xmit one after another
// at CPU speed: they reach the peer's backlog back to back, not one per
// segment time at the rate. A TSO unit crosses the veth as one skb; a
// software GSO unit as its segments, all arriving when the unit leaves
// the qdisc. (Behind a tbf a reader woken by the first segment so finds
// the unit's others queued when it runs, as the kernel's, which reads
// about once per unit: docs/engine.md, The receiver's reads.)
func (w *world) vethUnit(ep *endpoint, qi int32, t, seq, ack, wnd, n, pcount int64, fin bool) int64 {
	dst := ep.peer
	left, arr, ok := w.path(ep.nic, dst.nic, t, n+pcount*(hdrLen+ep.nic.l2))
	switch {
	case !ok:
		w.stats.drops += pcount - 1 // path counted one: the unit's frames are lost
	case ep.snd.tso:
		w.pushFrame(qi, arr, seq, ack, wnd, dst.idx, int32(n), fin)
	default:
		for off := int64(0); off < n; off += ep.mss {
			plen := min(ep.mss, n-off)
			w.pushFrame(qi, arr, seq+off, ack, wnd, dst.idx, int32(plen), fin && off+plen == n)
		}
	}
	return left
}

// poll runs one step of a receive queue's NAPI context (the driver's poll
// with GRO/LRO and the TCP receive path): it takes one skb (a frame, or
// consecutive in-order frames of one flow merged by GRO/LRO) that has
// arrived, charges its core, and queues the next step for when the core
// is done. One skb per step lets work on other cores, above all the
// reading application, run between two skbs of one poll, as it does on a
// machine where the reader has a core of its own: an ACK carries the
// window of what the reader has taken so far, not of the whole batch.
func (w *world) poll(qi int32, now int64) {
	q := &w.rxqs[qi]
	q.pollEv = false
	h := q.host
	c := q.cpu
	if c.free > now && !q.softirq {
		q.pollEv = true
		w.q.push(c.free, evRxPoll, qi)
		return
	}
	// (A softirq queue does not wait for its core: it runs inside the
	// sending thread's work, whose next turn would otherwise always come
	// first. Its work queues after what the core holds.)
	p := &h.cpu
	if !q.cont && !q.softirq {
		// (A veth raises no interrupt: its frames reach the backlog
		// through netif_rx, and net_rx_action's entry is left in
		// RxPerSkb.)
		c.charge(now, p.Interrupt)
		h.interrupts++
		if h.ithread != nil {
			// The interrupt thread is switched in (irqWake).
			c.charge(now, h.ithread.ContextSwitch)
			h.ithreadSwitches++
		}
	}
	if q.budget <= 0 {
		q.budget = 64
	}
	if r := p.RxRing; r > 0 {
		w.fillRing(q, now, r)
	}
	if q.head < len(q.ring) && q.ring[q.head].at <= now {
		w.rxSkb(q, c, now)
		// A softirq queue (a veth's backlog: process_backlog) takes
		// what has come, up to its budget, before the core's threads
		// run again, each skb after the last.
		for q.softirq && q.budget > 0 && q.head < len(q.ring) && q.ring[q.head].at <= c.free {
			w.rxSkb(q, c, c.free)
		}
	}
	if q.head >= 64 && q.head > len(q.ring)/2 {
		q.ring = q.ring[:copy(q.ring, q.ring[q.head:])]
		q.inRing = max(0, q.inRing-q.head)
		q.head = 0
	}
	if q.head < len(q.ring) {
		q.pollEv = true
		next := q.ring[q.head].at
		if next <= c.free {
			q.cont = true
			w.q.push(c.free, evRxPoll, qi)
		} else {
			q.cont = false
			q.budget = 0
			w.q.push(max(q.wake(next), c.free), evRxPoll, qi)
		}
	} else {
		q.budget = 0
	}
}

// fillRing puts the frames that have arrived by now into q's receive
// ring of r descriptors, in arrival order, and drops each that finds it
// full (the NIC's rx_missed). Whether a frame finds room depends on what
// the poll took before it arrived, which pushFrame, running at the send,
// cannot know; the poll takes frames only at its steps, so at a step the
// ring holds what it held after the last step plus what arrived since.
func (w *world) fillRing(q *rxQueue, now int64, r int) {
	i := max(q.inRing, q.head)
	for i < len(q.ring) && q.ring[i].at <= now {
		if i-q.head >= r {
			q.ring = append(q.ring[:i], q.ring[i+1:]...)
			w.stats.rxMissed++
			continue
		}
		i++
	}
	q.inRing = i
}

// rxSkb takes the skb at the head of q: a pure ACK, or data merged with
// the frames after it when the flow coalesces, within the round's budget.
func (w *world) rxSkb(q *rxQueue, c *core, now int64) {
	p := &q.host.cpu
	// The fields it needs, not a copy of the frame (see pushFrame).
	f := &q.ring[q.head]
	seq, n, ack, wnd, fin := f.seq, int64(f.n), f.ack, f.wnd, f.fin
	ep := w.eps[f.ep]
	q.head++
	q.budget--
	// A veth has no receive ring: veth_xmit hands the sender's own skb
	// to the peer's backlog (veth_forward_skb, __netif_rx): no
	// descriptor, no skb allocation, no DMA unmap.
	ring := p.RxPerFrame
	if q.softirq {
		ring = 0
	}
	if n == 0 {
		c.charge(now, ring+p.AckRx)
		before := ep.snd.sndUna
		ep.onAck(now, ack, wnd, true, c)
		ep.afterAck(now, before, c)
		return
	}
	frames := int64(1)
	if ep.coalesce && !fin {
		for q.budget > 0 && q.head < len(q.ring) {
			g := &q.ring[q.head]
			if g.at > now || g.ep != ep.idx || g.n == 0 || g.seq != seq+n || n+int64(g.n) > 65536 {
				break
			}
			n += int64(g.n)
			frames++
			ack, wnd = g.ack, g.wnd
			q.head++
			q.budget--
		}
	}
	cost := float64(frames)*ring + float64(frames-1)*p.GROMerge + p.RxPerSkb
	if !ep.nic.off.Has(offRxCsum) {
		cost += p.CsumPerByte * float64(n)
	}
	before := ep.snd.sndUna
	if ack > before {
		cost += p.AckRx
	}
	c.charge(now, cost)
	ep.onAck(now, ack, wnd, false, c)
	ep.rcvData(now, seq, n, frames, c)
	ep.afterAck(now, before, c)
}

// afterAck is tcp_data_snd_check and tcp_check_space after an incoming
// segment: send what the new window allows, grow the send buffer of a
// blocked writer and wake it (tcp_new_space).
func (ep *endpoint) afterAck(now, before int64, cpu *core) {
	s := &ep.snd
	if s.wq.unsent() {
		ep.output(now, s.nonagle, cpu)
	}
	if s.sndUna > before {
		ep.w.sampleCwnd(ep, now)
		if a := &ep.app; a.blocked && !a.ev {
			// tcp_check_space with SOCK_NOSPACE set: tcp_new_space
			// grows the buffer while the cwnd is not full
			// (tcp_should_expand_sndbuf), then sk_stream_write_space
			// wakes the writer when room enough is free.
			if s.inFlight() < s.cwnd {
				ep.prof.bufs.sndExpand(ep)
			}
			if ep.prof.wake.canWrite(ep, true) {
				a.ev = true
				ep.w.q.push(ep.wakeAt(now, a.lag), evAppRun, ep.idx)
			}
		}
	}
}
