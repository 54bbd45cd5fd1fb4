package sim

import "fmt"

// eventKind says what a scheduled event does when it fires.
type eventKind uint8

const (
	evRxPoll eventKind = iota + 1 // a NAPI poll of one receive queue (id = queue index)
	evAppRun                      // an application gets the CPU (id = endpoint index)
	evDelAck                      // the delayed-ACK timer of an endpoint (tcp_delack_timer)
	evRTO                         // the retransmission timer of an endpoint (tcp_retransmit_timer)
	evPace                        // the pacing timer of an endpoint (SO_MAX_PACING_RATE)
	evStop                        // the end of a duration-bound workload
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
// a binary min-heap. Neither allocates once its backing array has grown
// to the working set.
type eventQueue struct {
	h    []qent // the heap
	now  []qent // the FIFO: events at cur, from head
	head int    // first event of now not yet handed out
	cur  int64  // time of the event last handed out, ns
	next uint64 // insertion order of the next event
}

func (q *eventQueue) len() int { return len(q.h) + len(q.now) - q.head }

func (q *eventQueue) push(at int64, kind eventKind, id int32) {
	if id < 0 || id > maxEventID || q.next > maxEventSeq {
		panic(fmt.Sprintf("sim: event id %d or count %d beyond the queue's bounds", id, q.next))
	}
	e := qent{at: at, key: q.next<<keySeqShift | uint64(id)<<keyKindBits | uint64(kind)}
	q.next++
	if at == q.cur {
		q.now = append(q.now, e)
		return
	}
	h := append(q.h, e)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !e.before(h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
	q.h = h
}

// pop removes and returns the earliest event. Precondition: len() > 0.
func (q *eventQueue) pop() event {
	if q.head < len(q.now) {
		if f := q.now[q.head]; len(q.h) == 0 || f.before(q.h[0]) {
			q.head++
			if q.head == len(q.now) {
				q.now, q.head = q.now[:0], 0
			}
			return f.event()
		}
	}
	h := q.h
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	q.h = h
	if n > 0 {
		i := 0
		for {
			l := 2*i + 1
			if l >= n {
				break
			}
			m := l
			if r := l + 1; r < n && h[r].before(h[l]) {
				m = r
			}
			if !h[m].before(last) {
				break
			}
			h[i] = h[m]
			i = m
		}
		h[i] = last
	}
	if top.at > q.cur {
		// Time moves on; the FIFO is empty (its events, at cur, come
		// before top).
		q.cur = top.at
	}
	return top.event()
}
