package sim

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"
)

// TestEventQueueAgainstSort pushes and pops at random, as the model does
// (new events at the time of the last one handed out, the FIFO's case, or
// later, in the near heap or the far one, now and then earlier; a third
// of them as turns that wait for a core, pushWait), and checks every pop against a sorted list of what is queued: by time, ties
// in insertion order.
func TestEventQueueAgainstSort(t *testing.T) {
	type ref struct {
		at   int64
		seq  int
		kind eventKind
		id   int32
	}
	rng := rand.New(rand.NewSource(1))
	var q eventQueue
	var want []ref
	now, seq := int64(0), 0
	for step := 0; step < 200000; step++ {
		if len(want) == 0 {
			if ev, ok := q.pop(); ok {
				t.Fatalf("step %d: pop of an empty queue = %+v, true", step, ev)
			}
		}
		if len(want) == 0 || len(want) < 100 && rng.Intn(2) == 0 {
			at := now
			switch rng.Intn(5) {
			case 0:
				at += int64(rng.Intn(1000))
			case 3:
				at += int64(rng.Intn(3 * farNs)) // the far heap, or near
			case 1:
				at += int64(rng.Intn(3))
			case 2:
				if now > 0 && rng.Intn(50) == 0 {
					at -= 1 // in the past: the heap still orders it
				}
			}
			id := int32(rng.Intn(maxEventID + 1))
			kind := evRxPoll + eventKind(rng.Intn(int(evStop)))
			if rng.Intn(3) == 0 {
				kind = evAppRun // a turn that waits for its core, in a lane (or none)
				q.pushWait(at, id, int8(rng.Intn(waitLanes+1)-1))
			} else {
				q.push(at, kind, id)
			}
			want = append(want, ref{at, seq, kind, id})
			seq++
			continue
		}
		sort.Slice(want, func(i, j int) bool {
			return want[i].at < want[j].at || want[i].at == want[j].at && want[i].seq < want[j].seq
		})
		got, ok := q.pop()
		if !ok {
			t.Fatalf("step %d: pop found no event", step)
		}
		if w := want[0]; got.at != w.at || got.kind != w.kind || got.id != w.id {
			t.Fatalf("step %d: pop = %+v, want at %d kind %d id %d", step, got, w.at, w.kind, w.id)
		}
		want = want[1:]
		now = max(now, got.at)
		if q.len() != len(want) {
			t.Fatalf("step %d: len = %d, want %d", step, q.len(), len(want))
		}
	}
}

// TestReservedEventKeepsItsPlace reserves an event's place, queues others
// at the same time and later, and queues the reserved one afterwards: it
// comes out where push would have put it when it was reserved.
func TestReservedEventKeepsItsPlace(t *testing.T) {
	for _, at := range []int64{0, 5} { // in the FIFO (the current time), and later
		var q eventQueue
		q.push(0, evRxPoll, 1)
		q.pop()
		q.push(at, evAppRun, 2)
		r := q.reserve(at, evAppRun, 3)
		q.push(at, evAppRun, 4)
		q.push(at+1, evAppRun, 5)
		if q.handedOut(r) {
			t.Fatalf("at %d: reserved event handed out before any was", at)
		}
		q.pushReserved(r)
		var got []int32
		for ev, ok := q.pop(); ok; ev, ok = q.pop() {
			got = append(got, ev.id)
			if ev.id == 4 && !q.handedOut(r) {
				t.Errorf("at %d: the reserved event is not handed out after a later one", at)
			}
		}
		if want := []int32{2, 3, 4, 5}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("at %d: order %v, want %v", at, got, want)
		}
	}
}

// TestNearHeapEpoch runs the queue's clock past several spans of the
// near heap (its epoch moves) and queues an event further in the past
// than the span (it goes to the far heap): every event still comes out
// by time, ties in insertion order.
func TestNearHeapEpoch(t *testing.T) {
	var q eventQueue
	span := int64(1) << nearSpanBits
	var want []int64
	for at := int64(0); at < 5*span; at += farNs / 4 {
		q.push(at, evRxPoll, 1)
		q.push(at+farNs/2, evAppRun, 2)
		want = append(want, at, at+farNs/2)
		sort.SliceStable(want, func(i, j int) bool { return want[i] < want[j] })
		ev, _ := q.pop()
		if ev.at != want[0] {
			t.Fatalf("pop at %d, want %d", ev.at, want[0])
		}
		want = want[1:]
	}
	past := q.cur - 3*span
	q.push(past, evTSQ, 3)
	if ev, _ := q.pop(); ev.at != past || ev.kind != evTSQ {
		t.Fatalf("got %+v, want the event in the past (at %d) first", ev, past)
	}
	for _, w := range want {
		if ev, _ := q.pop(); ev.at != w {
			t.Fatalf("pop at %d, want %d", ev.at, w)
		}
	}
	if q.len() != 0 {
		t.Fatalf("%d events left", q.len())
	}
}

// TestWaitLaneHop runs two queues on the same random script: one whose
// hop re-queues the turns that would only wait again (the model's
// waitsAgain), and one where the test does so as the loop would, through
// pushWait. Both must hand out the same events in the same order, and
// hop's re-queued turns in the same places.
func TestWaitLaneHop(t *testing.T) {
	type core struct{ free int64 }
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		var cores [2 * waitLanes]core // some without a lane
		laneOf := func(id int32) int8 {
			if c := int(id) % len(cores); c < waitLanes {
				return int8(c)
			}
			return -1
		}
		// waitsAgain: a turn of a thread (even id) waits while its core
		// is busy.
		again := func(id int32, now int64) (int64, bool) {
			c := &cores[int(id)%len(cores)]
			return c.free, id%2 == 0 && c.free > now
		}
		var hopped, plain eventQueue
		hops := 0
		hopped.hop = hopFunc(func(id int32, now int64) (int64, bool) {
			at, w := again(id, now)
			if w {
				hops++
			}
			return at, w
		})
		type out struct {
			at int64
			id int32
		}
		var got []out
		got0 := func(o []out) int64 {
			if len(o) == 0 {
				return 0
			}
			return o[len(o)-1].at
		}
		pushes := rand.New(rand.NewSource(seed + 100))
		pushesB := rand.New(rand.NewSource(seed + 100))
		script := func(q *eventQueue, r *rand.Rand, now int64) {
			n := r.Intn(3) // the queue holds 10 to 50 events
			if q.len() < 10 {
				n = 2
			} else if q.len() > 50 {
				n = 0
			}
			for range n {
				id := int32(r.Intn(4 * len(cores)))
				at := now + int64(r.Intn(50))
				if r.Intn(10) == 0 {
					at += farNs
				}
				if id%2 == 0 {
					// A thread that waits for its core, busy or not.
					q.pushWait(max(at, cores[int(id)%len(cores)].free), id, laneOf(id))
				} else {
					q.push(at, evRxPoll, id)
				}
			}
		}
		script(&hopped, pushes, 0)
		script(&plain, pushesB, 0)
		// next is the next event a queue hands the loop that does not
		// only wait again; the loop queues those again itself.
		next := func(q *eventQueue) (event, bool) {
			for {
				e, ok := q.pop()
				if !ok {
					return e, false
				}
				if at, w := again(e.id, e.at); e.kind == evAppRun && w {
					q.pushWait(at, e.id, laneOf(e.id))
					continue
				}
				return e, true
			}
		}
		for step := 0; step < 20000; step++ {
			// The cores get busier now and then (the same for both).
			for i := range cores {
				if rng.Intn(3) == 0 {
					cores[i].free = max(cores[i].free, got0(got)) + int64(rng.Intn(200))
				}
			}
			ev, ok := next(&hopped)
			e, ok2 := next(&plain)
			if ok != ok2 || ev != e {
				t.Fatalf("seed %d step %d: hop queue gave %+v (%v), the loop's %+v (%v)", seed, step, ev, ok, e, ok2)
			}
			if !ok {
				break
			}
			got = append(got, out{ev.at, ev.id})
			script(&hopped, pushes, ev.at)
			script(&plain, pushesB, ev.at)
		}
		if len(got) < 1000 || hops < 200 {
			t.Fatalf("seed %d: only %d events, %d hops", seed, len(got), hops)
		}
	}
}

// hopFunc is a hopper made of a function.
type hopFunc func(id int32, at int64) (int64, bool)

func (f hopFunc) waitsAgain(id int32, at int64) (int64, bool) { return f(id, at) }
