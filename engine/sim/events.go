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
// the next event, and then it never enters a heap. The near heap keeps
// an event's time and insertion order in one word (nearHeap).
//
// The turns of threads that wait for a busy core (pushWait) wait in a
// FIFO per core, its wait lane, beside the heaps: they are queued for
// the core's free time, which only grows, so they come in order. When
// such a turn's time comes and it would only wait again (hop: the core
// took more work meanwhile, as a busy receiver's softirq does step
// after step), the queue queues it again at the tail of its lane, as
// the loop would have done, without handing it out. The far heap and
// the lanes share one bound, later, their least event, so pop and push
// compare with one event beyond the near heap, as with the far heap
// alone. None allocates once its backing array has grown to the
// working set.
type eventQueue struct {
	near   nearHeap
	far    heap
	lanes  [waitLanes]lane // pushWait's turns, by core (core.lane)
	nLanes int             // lanes used: 0 to nLanes-1
	waitN  int             // turns in the lanes
	// later is the least event of far and the lanes, when hasLater
	// (setLater), and laterLane the lane it is first in, -1 for far;
	// other is the least of the others (far's first and the lanes'
	// first turns), when hasOther: a lane's turn that hops is the next
	// later when its lane's next turn comes before other.
	later     qent
	hasLater  bool
	laterLane int
	other     qent
	hasOther  bool
	// hop says whether the turn of endpoint id at at, the least event,
	// from a lane, would only wait again, and for when (the world);
	// nil: never.
	hop      hopper
	epoch    int64 // the near heap's times count from it, ns (nearHeap)
	first    qent  // when hasFirst: an event before every one in near, far and the lanes
	hasFirst bool
	now      []qent // the FIFO: events at cur, from head
	head     int    // first event of now not yet handed out
	cur      int64  // time of the event last handed out, ns
	curKey   uint64 // key of the event last handed out (its place at cur)
	next     uint64 // insertion order of the next event
}

// hopper is what the queue asks whether a lane's turn would only wait
// again (world.waitsAgain). An interface, not a func value: the call
// goes to the method, not through a method value's wrapper.
type hopper interface {
	waitsAgain(id int32, at int64) (int64, bool)
}

// farNs is how far ahead of the current time an event goes to the far
// heap, ns: beyond any frame's or core's next step, short of the timers.
const farNs = 1e6

func (q *eventQueue) len() int {
	n := len(q.near) + len(q.far) + q.waitN + len(q.now) - q.head
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
	if d := uint64(e.at - q.epoch); e.at-q.cur <= farNs && d < 1<<nearSpanBits {
		q.near.push(toNear(d, e.key))
		return
	}
	q.pushOut(e)
}

// waitLanes is how many cores of a run have a wait lane (core.lane); the
// threads of others wait in the heaps.
const waitLanes = 4

// lane is a FIFO of turns in order, from head.
type lane struct {
	ev   []qent
	head int
}

// add queues e at the tail, moving the turns down over those handed out
// when the array is full and they are at least half of it: a lane whose
// turns hop never empties.
func (l *lane) add(e qent) {
	if len(l.ev) == cap(l.ev) && 2*l.head >= len(l.ev) {
		l.ev, l.head = l.ev[:copy(l.ev, l.ev[l.head:])], 0
	}
	l.ev = append(l.ev, e)
}

// pushWait is push for the turn of endpoint id, a thread that waits for
// its busy core, whose wait lane is ln (-1: none): at the tail of the
// lane when it comes after the lane's last turn and is not the next
// event, else where push puts it. Either way its place in the order is
// push's.
func (q *eventQueue) pushWait(at int64, id int32, ln int8) {
	if ln < 0 || at == q.cur || id > maxEventID || q.next > maxEventSeq {
		q.push(at, evAppRun, id)
		return
	}
	e := qent{at: at, key: q.next<<keySeqShift | uint64(id)<<keyKindBits | uint64(evAppRun)}
	l := &q.lanes[ln]
	n := len(l.ev)
	if n > l.head && l.ev[n-1].at > at || q.hasFirst && e.before(q.first) || !q.hasFirst && q.heapsBefore(e) {
		q.push(at, evAppRun, id)
		return
	}
	q.next++
	q.waitN++
	q.nLanes = max(q.nLanes, int(ln)+1)
	l.add(e)
	if n == l.head {
		q.offer(e, int(ln))
	}
}

// setLater makes later the least event of far and the lanes.
func (q *eventQueue) setLater() {
	q.hasLater, q.hasOther, q.laterLane = len(q.far) > 0, false, -1
	if q.hasLater {
		q.later = q.far[0]
	}
	if q.waitN == 0 {
		return
	}
	for i := range q.lanes[:q.nLanes] {
		if l := &q.lanes[i]; l.head < len(l.ev) {
			q.offer(l.ev[l.head], i)
		}
	}
}

// offer makes e, the first event of lane ln (-1: far), which was empty,
// later or other if it comes before them.
func (q *eventQueue) offer(e qent, ln int) {
	switch {
	case !q.hasLater:
		q.later, q.hasLater, q.laterLane = e, true, ln
	case e.before(q.later):
		q.other, q.hasOther = q.later, true
		q.later, q.laterLane = e, ln
	case !q.hasOther || e.before(q.other):
		q.other, q.hasOther = e, true
	}
}

// pushOut puts e, which push did not put in the near heap, in the far
// heap, or in the near heap when it is within farNs and fits the near
// heap's span once the epoch moves (rebase).
//
//go:noinline
func (q *eventQueue) pushOut(e qent) {
	if e.at-q.cur <= farNs && q.rebase(e.at) {
		q.near.push(toNear(uint64(e.at-q.epoch), e.key))
		return
	}
	q.far.push(e)
	switch {
	case q.far[0].key != e.key: // far's first is as it was
	case q.laterLane == -1 && q.hasLater:
		q.later = e // it was far's first, and e comes before it
	default:
		q.offer(e, -1) // far's first, one of other, now comes earlier
	}
}

// rebase moves the epoch to the earliest of at and the near heap's
// times, if at and every event in the near heap then fit its span, and
// reports whether they do. (The model's times only grow, so it runs
// about once per span of virtual time; an event far in the past goes to
// the far heap.)
func (q *eventQueue) rebase(at int64) bool {
	lo, hi := at, at
	for _, n := range q.near {
		t := q.epoch + int64(n.ord>>nearSeqBits)
		lo, hi = min(lo, t), max(hi, t)
	}
	if hi-lo >= 1<<nearSpanBits {
		return false
	}
	delta := uint64(lo-q.epoch) << nearSeqBits // two's complement: lo may be earlier
	for i := range q.near {
		q.near[i].ord -= delta
	}
	q.epoch = lo
	return true
}

// nearTop is the least event of the near heap. Precondition: len > 0.
func (q *eventQueue) nearTop() qent {
	return qent{at: q.epoch + int64(q.near[0].ord>>nearSeqBits), key: q.near[0].key}
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
	for {
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
		if len(q.near) > 0 {
			if top := q.nearTop(); !q.hasLater || top.before(q.later) {
				q.near.pop()
				return q.popped(top), true
			}
		}
		if !q.hasLater {
			return event{}, false
		}
		if ev, ok := q.popLater(); ok {
			return ev, true
		}
		// A lane's turn hopped: it is queued again.
	}
}

// popLater is pop's end when the least event is later: it hands out the
// far heap's least, or a lane's first turn, unless that turn hops
// (eventQueue.hop): then it is queued again at its lane's tail, its time
// and place passed as if handed out, and popLater returns false.
//
//go:noinline
func (q *eventQueue) popLater() (event, bool) {
	e := q.later
	if q.laterLane >= 0 {
		l := &q.lanes[q.laterLane]
		l.head++
		id := int32(e.key >> keyKindBits & maxEventID)
		if q.hop != nil && q.next <= maxEventSeq {
			at, again := q.hop.waitsAgain(id, e.at)
			n := qent{at: at, key: q.next<<keySeqShift | uint64(id)<<keyKindBits | uint64(evAppRun)}
			if again && at > e.at && at >= l.ev[len(l.ev)-1].at && !(q.hasFirst && n.before(q.first)) {
				q.popped(e)
				l.add(n)
				q.next++
				if h := l.ev[l.head]; !q.hasOther || h.before(q.other) {
					q.later = h
				} else {
					q.setLater()
				}
				return event{}, false
			}
		}
		q.waitN--
		if l.head == len(l.ev) {
			l.ev, l.head = l.ev[:0], 0
		}
		q.setLater()
		return q.popped(e), true
	}
	q.far.pop()
	q.setLater()
	return q.popped(e), true
}

// nextAt returns the time of the earliest event, if any. first comes
// before every event in the heaps and the lanes (pop takes it before
// them), and later stands for far and the lanes (setLater).
func (q *eventQueue) nextAt() (int64, bool) {
	at, ok := int64(math.MaxInt64), false
	if q.head < len(q.now) {
		at, ok = q.now[q.head].at, true
	}
	if q.hasFirst {
		return min(at, q.first.at), true
	}
	if len(q.near) > 0 {
		at, ok = min(at, q.nearTop().at), true
	}
	if q.hasLater {
		at, ok = min(at, q.later.at), true
	}
	return at, ok
}

// heapsBefore reports whether e comes before every event in the heaps.
func (q *eventQueue) heapsBefore(e qent) bool {
	return (len(q.near) == 0 || e.before(q.nearTop())) && (!q.hasLater || e.before(q.later))
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

// The near heap orders its events by one word: the event's time from the
// queue's epoch in the top nearSpanBits bits (16.7 ms: an event goes to
// the near heap within farNs of the current time, and the epoch follows
// the current time), its insertion order below. One comparison of words
// orders two events by (time, insertion order), as qent.before does with
// two, and the choice of the lesser child in pop needs no branch.
const (
	nearSpanBits = 24
	nearSeqBits  = 64 - nearSpanBits
)

// An insertion order must fit below the time.
var _ [nearSeqBits - (64 - keySeqShift)]struct{}

// nearEnt is an event in the near heap.
type nearEnt struct {
	ord uint64 // time from the epoch << nearSeqBits | insertion order
	key uint64 // qent's key
}

// toNear is the near heap's entry for an event d ns after the epoch
// with key.
func toNear(d, key uint64) nearEnt {
	return nearEnt{ord: d<<nearSeqBits | key>>keySeqShift, key: key}
}

// nearHeap is a binary min-heap of events by ord.
type nearHeap []nearEnt

func (hp *nearHeap) push(e nearEnt) {
	*hp = append(*hp, e)
	hp.up(len(*hp)-1, e)
}

// up puts e in the hole at i or above it, as heap.up does.
func (hp nearHeap) up(i int, e nearEnt) {
	for i > 0 {
		p := (i - 1) / 2
		if e.ord >= hp[p].ord {
			break
		}
		hp[i] = hp[p]
		i = p
	}
	hp[i] = e
}

// pop removes the least event. Precondition: len > 0.
func (hp *nearHeap) pop() {
	h := *hp
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	*hp = h
	if n == 0 {
		return
	}
	// Floyd's pop (heap.pop), the lesser of two children chosen by a
	// conditional move: which one it is is as likely as not.
	i := 0
	for {
		l := 2*i + 1
		if l+1 >= n {
			if l < n {
				h[i] = h[l]
				i = l
			}
			break
		}
		l += int(b2u(h[l+1].ord < h[l].ord))
		h[i] = h[l]
		i = l
	}
	h.up(i, last)
}

// b2u is 1 for true, 0 for false (a SETcc, no branch).
func b2u(b bool) uint {
	var u uint
	if b {
		u = 1
	}
	return u
}
