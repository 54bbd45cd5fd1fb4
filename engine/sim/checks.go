package sim

import "fmt"

// checker verifies the model's invariants while it runs. Only tests turn
// it on (Engine.checks); it records the first violations instead of
// panicking so a fuzz failure says what broke.
type checker struct {
	delivered int64    // bytes handed to receive queues in order
	steps     int64    // events seen
	maxQueue  float64  // most bytes a NIC's egress queue held at once
	errs      []string // violations, the first few
	// budget, when > 0, is the events a run may take: the checker then
	// ends it as its duration's end would (Engine.eventBudget), and cut
	// says it did.
	budget int64
	cut    bool
	markAt int64 // simulated time at the last stillSteps boundary, ns
	// reads are the bytes each connection's reader read, by connection
	// (its server endpoint's), at the run's end.
	reads []int64
}

// stillSteps events at one instant of simulated time are a livelock: a
// lab of a few hosts has a handful of events per instant.
const stillSteps = 1 << 16

func (c *checker) fail(format string, args ...any) {
	if len(c.errs) < 8 {
		c.errs = append(c.errs, fmt.Sprintf(format, args...))
	}
}

// inFlight: after a new data send, packets in flight stay within cwnd.
func (c *checker) inFlight(ep *endpoint) {
	s := &ep.snd
	if bsd, ok := s.cc.(*newrenoBytes); ok {
		if fl := s.sndNxt - s.sndUna; fl > max(bsd.cwnd, ep.mss) {
			c.fail("conn %d: %d bytes in flight > cwnd %d bytes", ep.conn, fl, bsd.cwnd)
		}
		return
	}
	if s.inFlight() > s.cwnd {
		c.fail("conn %d: %d packets in flight > cwnd %d (ca %d dup %d out %d)", ep.conn, s.inFlight(), s.cwnd, s.ca, s.dupAcks, s.packetsOut)
	}
}

// unit: a send unit's pcount is what the split makes of it.
func (c *checker) unit(ep *endpoint, b *skb, pc int64) {
	n := b.len()
	switch {
	case n <= 0:
		c.fail("conn %d: empty send unit at %d", ep.conn, b.seq)
	case pc == 1 && n > ep.mss:
		c.fail("conn %d: one-segment unit of %d bytes > MSS %d", ep.conn, n, ep.mss)
	case pc > 1 && pc != (n+ep.mss-1)/ep.mss:
		c.fail("conn %d: unit of %d bytes has pcount %d, want %d", ep.conn, n, pc, (n+ep.mss-1)/ep.mss)
	case pc > 1 && !ep.snd.gso:
		c.fail("conn %d: multi-segment unit without GSO/TSO", ep.conn)
	}
}

// step runs after every event: it ends a run that stands still in
// simulated time or has had its budget, and checks the state.
func (c *checker) step(w *world) {
	c.steps++
	if c.steps%stillSteps == 0 {
		if w.now == c.markAt && !w.finished {
			c.fail("%d events at %d ns without simulated time passing: a livelock", stillSteps, w.now)
			c.end(w)
		}
		c.markAt = w.now
	}
	if c.steps == c.budget && !w.finished {
		c.cut = true
		c.end(w)
	}
	c.state(w)
}

// state checks the sequence-space ordering, and the write queue every
// 1024 events.
func (c *checker) state(w *world) {
	var nxt int64
	for _, ep := range w.eps {
		s := &ep.snd
		if !(s.sndUna <= s.sndNxt && s.sndNxt <= s.sndMax && s.sndMax <= s.writeSeq) {
			c.fail("conn %d: una %d nxt %d max %d write %d out of order", ep.conn, s.sndUna, s.sndNxt, s.sndMax, s.writeSeq)
		}
		if s.packetsOut < 0 {
			c.fail("conn %d: packets_out %d", ep.conn, s.packetsOut)
		}
		nxt += ep.rcv.nxt
		if c.steps%1024 == 0 {
			prev := s.sndUna
			for i := s.wq.head; i < len(s.wq.q); i++ {
				b := &s.wq.q[i]
				if b.seq != prev || b.end <= b.seq {
					c.fail("conn %d: write queue gap or empty buffer at %d: [%d,%d)", ep.conn, prev, b.seq, b.end)
					break
				}
				prev = b.end
			}
			if len(s.wq.q) > s.wq.head && prev != s.writeSeq {
				c.fail("conn %d: write queue ends at %d, write_seq %d", ep.conn, prev, s.writeSeq)
			}
		}
	}
	for _, n := range w.nics {
		if l := &n.egress; l.nsPerByte > 0 && l.free > float64(w.now) {
			c.maxQueue = max(c.maxQueue, (l.free-float64(w.now))/l.nsPerByte)
		}
	}
	if nxt != c.delivered {
		c.fail("delivered %d bytes in order but rcv_nxt sums to %d", c.delivered, nxt)
	}
}

// end ends the run as its duration's end would: after the events
// already queued for now.
func (c *checker) end(w *world) {
	w.q.push(w.now, evStop, 0)
}

// finish checks the end state: every reader got the bytes its writer
// queued, exactly once, when the workload was byte-bound and completed.
func (c *checker) finish(w *world) {
	c.state(w)
	for _, ep := range w.eps {
		if !ep.client {
			c.reads = append(c.reads, ep.rcv.readBytes)
		}
	}
	if !w.finished || w.stopping {
		return
	}
	for _, ep := range w.eps {
		if ep.app.want == 0 {
			continue
		}
		if got, want := ep.rcv.readBytes, ep.app.want; got != want {
			c.fail("conn %d: reader got %d bytes, want %d", ep.conn, got, want)
		}
		if got, want := ep.rcv.nxt, ep.peer.snd.writeSeq; got != want {
			c.fail("conn %d: rcv_nxt %d, writer queued %d", ep.conn, got, want)
		}
	}
}
