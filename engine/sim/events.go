package sim

import (
	"fmt"
	"math"
)

// eventKind says what a scheduled event does when it fires.
type eventKind uint8

const (
	evRxPoll eventKind = iota + 1 // a NAPI poll of one receive queue (id = queue index)
	evAppRun                      // an application gets the CPU (id = endpoint index)
	evDelAck                      // the delayed-ACK timer of an endpoint (tcp_delack_timer)
	evRTO                         // the retransmission timer of an endpoint (tcp_retransmit_timer)
	evPace                        // the pacing timer of an endpoint (SO_MAX_PACING_RATE)
	evStop                        // the end of a duration-bound workload
	evTSQ                         // the TSQ handler of an endpoint (tcp_wfree -> tcp_tsq_handler)
)

// event is one event as the queue hands it out.
type event struct {
	at   int64     // virtual time it fires, ns
	kind eventKind // what it does
	id   int32     // the queue, endpoint or host it concerns
}

// The queue keeps an event in 16 bytes: its time and a key that packs,
// from the top, its insertion order (keyIDBits+keyKindBits below it), its
// id and its kind. Insertion orders are distinct, so comparing keys
// compares insertion orders.
const (
	keyKindBits = 3
	keyIDBits   = 21
	keySeqShift = keyKindBits + keyIDBits
	// maxEventID bounds the ids (receive queues, endpoints) of a run.
	maxEventID = 1<<keyIDBits - 1
	// maxEventSeq bounds the events one run may schedule.
	maxEventSeq = 1<<(64-keySeqShift) - 1
)

// qent is an event in the queue.
type qent struct {
	at  int64  // virtual time it fires, ns
	key uint64 // insertion order, id, kind (see keySeqShift)
}

// before orders events by time, ties by insertion order: the order is total.
func (e qent) before(o qent) bool {
	return e.at < o.at || (e.at == o.at && e.key < o.key)
}

func (e qent) event() event {
	return event{at: e.at, kind: eventKind(e.key & (1<<keyKindBits - 1)), id: int32(e.key >> keyKindBits & maxEventID)}
}

// eventQueue holds the scheduled events and hands them out by (time,
// insertion order). Events scheduled for the time of the event last
// handed out, the commonest case, wait in a FIFO (they come after every
// event already queued for that time, in insertion order); the others in
// one of two binary min-heaps, near (within farNs) or far (the timers:
// delayed ACKs, retransmission, the end), so the heap that turns over
// with every frame stays shallow. A later event that comes before all of
// the heaps' waits outside them, in first: a core's next step is often
// the next event, and then it never enters a heap. None allocates once
// its backing array has grown to the working set.
type eventQueue struct {
	near, far heap
	first     qent // when hasFirst: an event before every one in near and far
	hasFirst  bool
	now       []qent // the FIFO: events at cur, from head
	head      int    // first event of now not yet handed out
	cur       int64  // time of the event last handed out, ns
	curKey    uint64 // key of the event last handed out (its place at cur)
	next      uint64 // insertion order of the next event
}

// farNs is how far ahead of the current time an event goes to the far
// heap, ns: beyond any frame's or core's next step, short of the timers.
const farNs = 1e6

func (q *eventQueue) len() int {
	n := len(q.near) + len(q.far) + len(q.now) - q.head
	if q.hasFirst {
		n++
	}
	return n
}

func (q *eventQueue) push(at int64, kind eventKind, id int32) {
	if id < 0 || id > maxEventID || q.next > maxEventSeq {
		q.beyond(id)
	}
	e := qent{at: at, key: q.next<<keySeqShift | uint64(id)<<keyKindBits | uint64(kind)}
	q.next++
	if at == q.cur {
		q.now = append(q.now, e)
		return
	}
	switch {
	case q.hasFirst:
		if e.before(q.first) {
			e, q.first = q.first, e
		}
	case q.heapsBefore(e):
		q.first, q.hasFirst = e, true
		return
	}
	if e.at-q.cur > farNs {
		q.far.push(e)
	} else {
		q.near.push(e)
	}
}

// beyond panics: an id or an insertion order past the key's bits.
func (q *eventQueue) beyond(id int32) {
	panic(fmt.Sprintf("sim: event id %d or count %d beyond the queue's bounds", id, q.next))
}

// reserve gives an event at at its place in the order, the next
// insertion order, without queueing it: pushReserved queues it later
// where push would have queued it now. Its ids, endpoints', are in
// bounds (build).
func (q *eventQueue) reserve(at int64, kind eventKind, id int32) qent {
	if q.next > maxEventSeq {
		q.beyond(id)
	}
	e := qent{at: at, key: q.next<<keySeqShift | uint64(id)<<keyKindBits | uint64(kind)}
	q.next++
	return e
}

// handedOut reports whether e, reserved, would have been handed out by
// now: it is the event last handed out or comes before it.
func (q *eventQueue) handedOut(e qent) bool {
	return !(qent{at: q.cur, key: q.curKey}).before(e)
}

// pushReserved queues an event reserve made that has not been handed out
// (handedOut is false): push with its insertion order, and at cur into
// the FIFO before the events queued after its reservation.
func (q *eventQueue) pushReserved(e qent) {
	next := q.next
	q.next = e.key >> keySeqShift
	q.push(e.at, eventKind(e.key&(1<<keyKindBits-1)), int32(e.key>>keyKindBits&maxEventID))
	q.next = next
	if e.at != q.cur {
		return
	}
	i := len(q.now) - 1
	for ; i > q.head && e.key < q.now[i-1].key; i-- {
		q.now[i] = q.now[i-1]
	}
	q.now[i] = e
}

// popped is pop's end for an event taken from first or a heap.
func (q *eventQueue) popped(top qent) event {
	if top.at > q.cur {
		// Time moves on; the FIFO is empty (its events, at cur, come
		// before top).
		q.cur = top.at
	}
	q.curKey = top.key
	return top.event()
}

// pop removes and returns the earliest event; false when there is none.
func (q *eventQueue) pop() (event, bool) {
	if q.head < len(q.now) {
		f := q.now[q.head]
		if !q.hasFirst && q.heapsBefore(f) || q.hasFirst && f.before(q.first) {
			q.curKey = f.key
			q.head++
			if q.head == len(q.now) {
				q.now, q.head = q.now[:0], 0
			}
			return f.event(), true
		}
	}
	if q.hasFirst {
		q.hasFirst = false
		return q.popped(q.first), true
	}
	if len(q.near) == 0 || len(q.far) > 0 && q.far[0].before(q.near[0]) {
		if len(q.far) == 0 {
			return event{}, false
		}
		return q.popped(q.far.pop()), true
	}
	return q.popped(q.near.pop()), true
}

// nextAt returns the time of the earliest event, if any.
func (q *eventQueue) nextAt() (int64, bool) {
	at := int64(math.MaxInt64)
	if q.head < len(q.now) {
		at = q.now[q.head].at
	}
	if q.hasFirst {
		at = min(at, q.first.at)
	}
	if len(q.near) > 0 {
		at = min(at, q.near[0].at)
	}
	if len(q.far) > 0 {
		at = min(at, q.far[0].at)
	}
	return at, q.len() > 0
}

// heapsBefore reports whether e comes before every event in the heaps.
func (q *eventQueue) heapsBefore(e qent) bool {
	return (len(q.near) == 0 || e.before(q.near[0])) && (len(q.far) == 0 || e.before(q.far[0]))
}

// heap is a binary min-heap of events.
type heap []qent

func (hp *heap) push(e qent) {
	*hp = append(*hp, e)
	hp.up(len(*hp)-1, e)
}

// up puts e in the hole at i or above it, moving down the parents it
// comes before.
func (hp heap) up(i int, e qent) {
	for i > 0 {
		p := (i - 1) / 2
		if !e.before(hp[p]) {
			break
		}
		hp[i] = hp[p]
		i = p
	}
	hp[i] = e
}

// pop removes and returns the least event. Precondition: len > 0.
func (hp *heap) pop() qent {
	h := *hp
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	*hp = h
	if n == 0 {
		return top
	}
	// Floyd's pop: move the hole down to a leaf along the smaller
	// children, then sift last up from there. last comes from the
	// bottom, usually a late event, so it rarely climbs: one comparison
	// per level instead of two.
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		if r := l + 1; r < n && h[r].before(h[l]) {
			l = r
		}
		h[i] = h[l]
		i = l
	}
	h.up(i, last)
	return top
}
