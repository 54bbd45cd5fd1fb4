package sim

import (
	"math"

	"github.com/tsolab/tsolab/config"
)

// app is the application on one endpoint: a writer feeding tcp_sendmsg
// (or sendfile) and a reader draining tcp_recvmsg.
type app struct {
	writeSize  int64     // bytes per write/sendfile call
	pending    int64     // bytes the application still wants to write
	callRemain int64     // bytes left in the current call
	blocked    bool      // waiting for send-buffer space (sk_stream_wait_memory)
	ev         bool      // an evAppRun is queued, or held (held)
	held       bool      // its next turn is held out of the queue at hold (holdTurn)
	woken      wokeState // its queued turn is a wake-up from sleep (hosts with a scheduler)
	waiting    bool      // its turn found its core busy and waits for it (waitCore)
	waitFrom   int64     // when it began to wait, ns (waitCore: at most the host's slice)
	runUntil   int64     // after such a wait it has the core until then, ns, unless it sleeps (waitCore)
	sendfile   bool      // zero-copy: pages, no copy cost
	bytesMode  bool      // the stream ends after pending bytes (FIN on the tail)

	// lag is the wake-up latency its next wake-up from sleep waits, ns:
	// drawn ahead on a host with a scheduler (sched.go), else 0.
	lag int64

	readSize int64 // bytes a read call asks for (stream, sendfile: the workload's read_size; rr: the larger message)
	msg      int64 // rr: bytes of one message (request or response)
	got      int64 // rr: bytes of the current message read so far
	reply    int64 // rr server: bytes written back per message read
	next     int64 // rr client: bytes of the next request
	txStart  int64 // rr client: when the outstanding transaction began, ns
	want     int64 // stream reader: bytes to read before this connection is done; 0 = unbounded

	// hold is the held turn's time and place in the order, when held.
	hold qent
}

// wakeReader queues the application when data arrives, or holds its
// turn (holdTurn), and ends a held turn. (rcvData pushes in line in the
// common case: no turn queued or held, and data it will read.)
func (a *app) wakeReader(ep *endpoint, now int64) {
	if a.held {
		ep.unhold()
	}
	if !a.ev {
		a.ev = true
		if ep.tryHold(now) {
			return
		}
		ep.w.q.push(ep.wakeAt(now, a.lag), evAppRun, ep.idx)
	}
}

// A held turn. An application turn at t that, as things stand, would
// find nothing to do (idleTurn) only clears app.ev, and the thread
// sleeps: a reader's turn after a read when data has not come since.
// Such a turn is held out of the
// queue with its place in the order (eventQueue.reserve) when only data
// for it or work that makes its core busy can change that before t: its
// core is free at t, its host has neither a scheduler nor a machine
// (canHold), and it wants to write nothing. Data comes with wakeReader,
// which ends the hold (unhold): a turn that would have come before the
// event now running has done nothing and the thread sleeps; one still to
// come is queued in its place and runs as it would have. Work that makes
// the core busy past a held turn still to come queues that too: it would
// find the core busy. On a core only applications charge (appCore: no
// receive queue and not the interrupt core) that work is another
// application's turn, which queues them (unholdMates); on the others,
// guarded cores, a poll step, a transmit completion or a timer may be,
// and the loop looks after each event (unholdGuarded). The run is the
// same event for event, less the turns that did nothing; the loop's end
// counts the time of a held turn it would have run (passHeld).

// idleTurn reports whether ep's turn at t, its core's free time or
// later, can be held: it would find nothing to read or write, within the
// loop's limit and before its next progress report.
func (ep *endpoint) idleTurn(t int64) bool {
	a, r, w := &ep.app, &ep.rcv, ep.w
	if a.pending > 0 || r.unread > 0 {
		return false
	}
	return ep.canHold && t <= w.limit && t < w.progressAt && ep.appCPU.free <= t
}

// tryHold holds ep's next turn at t if it can (idleTurn); app.ev stays
// set either way.
func (ep *endpoint) tryHold(t int64) bool {
	if !ep.idleTurn(t) {
		return false
	}
	a := &ep.app
	a.held = true
	a.hold = ep.w.q.reserve(t, evAppRun, ep.idx)
	c := ep.appCPU
	if c.lastHold.before(a.hold) {
		c.lastHold = a.hold
	}
	if len(c.holders) > 0 {
		switch {
		case !c.listed:
			c.listed = true
			c.heldBusy = &ep.w.heldBusy
			c.firstHold = a.hold
			ep.w.heldOn = append(ep.w.heldOn, c)
		case a.hold.before(c.firstHold):
			c.firstHold = a.hold
		}
	}
	return true
}

// unhold ends ep's held turn as data arrives for it.
func (ep *endpoint) unhold() {
	a := &ep.app
	q := &ep.w.q
	a.held = false
	if q.handedOut(a.hold) {
		// It ran before the event now running, found its core free
		// and nothing to do, and the thread slept (runApp).
		a.ev = false
		a.waiting = false
		ep.sleep()
		return
	}
	q.pushReserved(a.hold)
}

// unholdMates queues the held turns still to come of the other
// applications on ep's core, c, that its turn made busy past their time.
// (runApp calls it when the core's last hold is such a turn.)
func (ep *endpoint) unholdMates(c *core) {
	q := &ep.w.q
	for _, o := range ep.coreMates {
		if a := &o.app; a.held && a.hold.at < c.free && !q.handedOut(a.hold) {
			a.held = false
			q.pushReserved(a.hold)
		}
	}
}

// unholdGuarded queues the held turns still to come on the guarded cores
// (world.heldOn) that the event just run made busy past their time: each
// would find its core busy (runApp waits for it). The loop calls it after
// an event that charged a listed core past its first held turn
// (core.charge sets world.heldBusy), as runApp calls unholdMates on an
// application core: a guarded core is charged by its receive queue's
// poll steps, by transmit completions and by timers as well as by
// turns. Only a charge makes a core busy past a turn still to come
// (begin moves its free time to now, past turns that have come). A core
// keeps the first of its held turns still to come (core.firstHold); one
// whose held turns have all come or been queued leaves the list, at the
// next look.
func (w *world) unholdGuarded() {
	q := &w.q
	keep := w.heldOn[:0]
	for _, c := range w.heldOn {
		if c.firstHold.at < c.free || q.handedOut(c.firstHold) {
			c.firstHold = qent{}
			for _, o := range c.holders {
				a := &o.app
				switch {
				case !a.held || q.handedOut(a.hold):
				case a.hold.at < c.free:
					a.held = false
					q.pushReserved(a.hold)
				case c.firstHold.key == 0 || a.hold.before(c.firstHold):
					c.firstHold = a.hold
				}
			}
			if c.firstHold.key == 0 {
				c.listed = false
				continue
			}
		}
		keep = append(keep, c)
	}
	w.heldOn = keep
}

// passHeld is the loop's end: the held turns within the limit have run,
// and the clock has reached the last of them.
func (w *world) passHeld() {
	for _, ep := range w.eps {
		if a := &ep.app; a.held && a.hold.at <= w.limit {
			w.now = max(w.now, a.hold.at)
		}
	}
}

// run gives the application its core: one read call and/or one write
// (part of a call) per turn, then it yields.
func (ep *endpoint) runApp(now int64) {
	a := &ep.app
	w := ep.w
	a.ev = false
	c := ep.appCPU
	if c.free > now && ep.migrates() {
		// A runnable thread behind a busy core: a core that is idle
		// pulls it (newidle_balance, kernel/sched/fair.c: a CPU going
		// idle pulls a runnable task from a busier one).
		ep.migrate(now)
		c = ep.appCPU
	}
	if c.free > now && ep.waitCore(now, c) {
		return
	}
	if a.woken != wokeNone {
		ep.waking(now)
		return
	}
	a.waiting = false
	did := false
	r := &ep.rcv
	if r.unread > 0 {
		n := min(r.unread, a.readSize)
		msgDone := false
		if a.msg > 0 {
			// A read takes what has come of the message, as the
			// kernel engine's readFull loop does (a read returns what
			// is queued): a Linux receiver leaves the ACK of data
			// that found unread data behind it to the read
			// (linuxAcks), so a reader that waited for the whole
			// message would hold the sender, its window or cwnd
			// full, until the delayed-ACK timer.
			need := a.msg - a.got
			n, msgDone = min(r.unread, need), r.unread >= need
		}
		if n > 0 {
			done := c.charge(now, ep.readCost(n))
			oldWin := r.right - r.nxt
			r.unread -= n
			r.readBytes += n
			w.onRead(ep, done, n)
			if r.autoMax > 0 {
				ep.rcvSpaceAdjust(done)
			}
			// tcp_cleanup_rbuf / tcp_usr_rcvd: tell the peer when the
			// window opened a lot.
			if nw := ep.prof.acks.window(ep); ep.prof.acks.windowUpdate(ep, oldWin, nw) {
				ep.sendAck(now, ackWindow, c)
			}
			if a.msg > 0 {
				a.got += n
				if msgDone {
					a.got = 0
				}
			}
			if a.reply > 0 && msgDone {
				a.pending += a.reply
			}
			if a.next > 0 && msgDone {
				w.onTransaction(done - a.txStart)
				if !w.stopping {
					a.txStart = done
					a.pending += a.next
				}
			}
			did = true
		}
	}
	if a.pending > 0 {
		did = ep.write(now, c) || did
	}
	if ep.appCore && c.lastHold.at < c.free && !w.q.handedOut(c.lastHold) {
		ep.unholdMates(c)
	}
	if did && !a.ev && !(r.unread == 0 && a.pending == 0 && w.nextInLine(c.free)) {
		// (Otherwise the next turn would find nothing to read or write,
		// its core idle, and nothing could happen before it: it would
		// only clear a.ev. Most of a reader's turns after a read.)
		a.ev = true
		if ep.tryHold(c.free) {
			return
		}
		w.q.push(c.free, evAppRun, ep.idx)
		return
	}
	if !a.ev {
		ep.sleep()
	}
}

// readCost is the CPU of a read of n bytes: the call, the copy, and when
// it empties the receive queue the empty read and the poll the reader
// sleeps in until data comes (the kernel engine's reader reads again
// after a short read and polls after EAGAIN, as a nonblocking reader
// does).
func (ep *endpoint) readCost(n int64) float64 {
	p := &ep.host.cpu
	cost := p.Syscall + p.CopyPerByte*float64(n)
	if n == ep.rcv.unread {
		cost += p.ReadWait
	}
	return cost
}

// sleep is the end of a turn after which the thread sleeps: it gives up
// what a wait for its core won (waitCore), and its next turn is a
// wake-up (hosts with a scheduler).
func (ep *endpoint) sleep() {
	a := &ep.app
	a.runUntil = 0
	a.woken = ep.onWake
}

// nextInLine reports whether an event scheduled now for t would be the
// next one the loop runs, with another after it that the loop runs too,
// and no progress report between: then an event at t that would change
// nothing may be left out, and the run is the same.
func (w *world) nextInLine(t int64) bool {
	next, ok := w.q.nextAt()
	return ok && t < next && next <= w.limit && t < w.progressAt
}

// write is one turn of tcp_sendmsg: copy what the send buffer takes of
// the current call into the write queue, then push.
func (ep *endpoint) write(now int64, c *core) bool {
	a := &ep.app
	s := &ep.snd
	p := &ep.host.cpu
	if !ep.prof.wake.canWrite(ep, a.blocked) {
		if !a.blocked {
			ep.stopped(stopSndbuf)
		}
		a.blocked = true
		return false
	}
	a.blocked = false
	cost := 0.0
	if a.callRemain == 0 {
		a.callRemain = min(a.writeSize, a.pending)
		cost += p.Syscall
	}
	free := s.sndBuf - (s.writeSeq - s.sndUna)
	n := min(free, a.callRemain)
	if a.sendfile && ep.nic.off.Has(offSG) {
		cost += p.PagePerByte * float64(n)
	} else {
		cost += p.CopyPerByte * float64(n)
	}
	if ep.prof.divides && s.gso {
		cost += p.Divide
	}
	c.charge(now, cost)
	ep.queueData(n)
	a.callRemain -= n
	a.pending -= n
	nonagle := s.nonagle
	if a.callRemain > 0 {
		// The buffer is full mid-call: push everything before sleeping.
		nonagle |= naglePush
		a.blocked = true
		ep.stopped(stopSndbuf)
	}
	if a.pending == 0 && a.bytesMode {
		if t := s.wq.tail(); t != nil && s.wq.unsent() {
			t.fin = true
		}
	}
	ep.prof.push.push(ep, now, nonagle, c)
	return !a.blocked
}

// queueData is tcp_sendmsg's copy loop: append to the tail buffer while it
// is unsent and below the size goal (SG) or the MSS (linear), else start a
// new one.
func (ep *endpoint) queueData(n int64) {
	s := &ep.snd
	limit := ep.mss
	sg := ep.nic.off.Has(offSG)
	linearCap := int64(0) // select_size (sendfile's pages are referenced, never copied)
	if sg {
		limit = ep.prof.goal.goal(ep)
		if !ep.app.sendfile {
			linearCap = ep.prof.layout.linearCap(ep.mss, s.gso)
		}
	}
	for n > 0 {
		t := s.wq.tail()
		if t != nil && s.wq.unsent() && !t.fin && t.len() < limit {
			add := min(n, limit-t.len())
			if sg {
				s.place(t, add, linearCap)
			}
			t.end += add
			s.writeSeq += add
			n -= add
			continue
		}
		add := min(n, limit)
		b := skb{seq: s.writeSeq, end: s.writeSeq, linear: !sg}
		if sg {
			s.place(&b, add, linearCap)
		}
		b.end += add
		s.wq.q = append(s.wq.q, b)
		s.writeSeq += add
		n -= add
	}
}

// configureApps sets up the applications for the workload.
func (w *world) configureApps(wl *config.Workload) {
	writeSize := int64(wl.WriteCall())
	// A stream or sendfile reader asks for read_size a call, as the
	// kernel engine's does.
	readSize := int64(wl.ReadCall())
	for _, ep := range w.eps {
		a := &ep.app
		a.writeSize = writeSize
		a.readSize = readSize
		a.sendfile = wl.Kind == config.Sendfile
		switch wl.Kind {
		case config.RR:
			req, resp := int64(max(wl.RequestSize, 1)), int64(max(wl.ResponseSize, 1))
			a.writeSize = max(req, resp)
			a.readSize = a.writeSize
			if ep.client {
				a.msg = resp
				a.next = req
				a.pending = req
			} else {
				a.msg = req
				a.reply = resp
			}
		default:
			if ep.client {
				if wl.Bytes > 0 {
					a.pending = wl.Bytes
					a.bytesMode = true
				} else {
					a.pending = math.MaxInt64 / 4
				}
			} else if wl.Bytes > 0 {
				a.want = wl.Bytes
			}
		}
	}
}
