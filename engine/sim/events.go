package sim

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

// event is one entry of the event queue. It is a value: the queue never
// allocates per event once its backing array has grown to the working set.
type event struct {
	at   int64     // virtual time it fires, ns
	seq  uint64    // insertion order, breaks ties so the order is total
	kind eventKind // what it does
	id   int32     // the queue, endpoint or host it concerns
}

// eventQueue is a binary min-heap of events ordered by (at, seq).
type eventQueue struct {
	h    []event
	next uint64
}

func (q *eventQueue) len() int { return len(q.h) }

func (q *eventQueue) push(at int64, kind eventKind, id int32) {
	e := event{at: at, seq: q.next, kind: kind, id: id}
	q.next++
	q.h = append(q.h, e)
	i := len(q.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.h[i].before(&q.h[p]) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

func (e *event) before(o *event) bool {
	return e.at < o.at || (e.at == o.at && e.seq < o.seq)
}

// pop removes and returns the earliest event. Precondition: len() > 0.
func (q *eventQueue) pop() event {
	top := q.h[0]
	n := len(q.h) - 1
	q.h[0] = q.h[n]
	q.h = q.h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.h[r].before(&q.h[l]) {
			m = r
		}
		if !q.h[m].before(&q.h[i]) {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return top
}
