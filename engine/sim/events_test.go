package sim

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"
)

// TestEventQueueAgainstSort pushes and pops at random, as the model does
// (new events at the time of the last one handed out, the FIFO's case, or
// later, in the near heap or the far one, now and then earlier), and
// checks every pop against a sorted list of what is queued: by time, ties
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
			q.push(at, kind, id)
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
