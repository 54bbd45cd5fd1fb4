package sim

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
)

// TestHeldTurnsChangeNothing runs every example lab with application
// turns held out of the queue (holdTurn) and without, and wants the same
// results and progress reports byte for byte, and fewer events where
// turns were held.
func TestHeldTurnsChangeNothing(t *testing.T) {
	dirs, err := filepath.Glob("../../examples/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no example labs: %v", err)
	}
	fewer := 0
	for _, dir := range dirs {
		lab, opts := loadLab(t, dir)
		for _, sc := range lab.Scenarios {
			for _, wl := range sc.Workloads {
				req := engine.RunRequest{Lab: lab, Scenario: sc, Workload: wl}
				held, unheld := holdChangesNothing(t, filepath.Base(dir)+"/"+sc.Name+"/"+wl.Name, opts, req)
				if held < unheld {
					fewer++
				}
			}
		}
	}
	if fewer == 0 {
		t.Error("no example ran fewer events with held turns")
	}
	t.Logf("%d cells ran fewer events with held turns", fewer)
}

// TestHeldTurnsChangeNothingOnSharedCores: as TestHeldTurnsChangeNothing,
// for labs whose applications share a core (four connections on a host's
// one application core: a turn that makes the core busy past a mate's
// held turn queues that turn, unholdMates) and run past progress reports
// (a turn is not held past the next one: the report comes after the
// first event past its second), streams and request/response.
func TestHeldTurnsChangeNothingOnSharedCores(t *testing.T) {
	fewer := 0
	for _, p := range []pair{
		{stack: "linux-6", mtu: 1500, cores: 2, rate: 1e9, delay: 50 * time.Microsecond,
			wl: config.Workload{Duration: 2500 * time.Millisecond, WriteSize: 16384, Connections: 4, Rate: 50e6}},
		{stack: "linux-6", mtu: 1500, cores: 2, rate: 1e9, delay: 200 * time.Microsecond,
			wl: config.Workload{Kind: config.RR, Duration: 2500 * time.Millisecond, RequestSize: 256, ResponseSize: 20000, Concurrency: 4, NoDelay: true}},
		{stack: "freebsd-10", mtu: 9000, cores: 2, rate: 10e9, delay: 20 * time.Microsecond,
			wl: config.Workload{Kind: config.RR, Duration: 2500 * time.Millisecond, RequestSize: 100, ResponseSize: 100, Concurrency: 4}},
	} {
		sc := p.scenario()
		req := engine.RunRequest{Scenario: sc, Workload: sc.Workloads[0]}
		name := fmt.Sprintf("%s %s %d connections", p.stack, sc.Workloads[0].Kind, max(p.wl.Connections, p.wl.Concurrency))
		held, unheld := holdChangesNothing(t, name, Options{}, req)
		t.Logf("%s: %d events with held turns, %d without", name, held, unheld)
		if held < unheld {
			fewer++
		}
	}
	if fewer == 0 {
		t.Error("no lab ran fewer events with held turns")
	}
}

// holdChangesNothing runs req on an engine made with opts, with turns
// held and without (Engine.noHold), and wants the same result and
// progress reports byte for byte, and no more events with held turns;
// it returns the events of each run.
func holdChangesNothing(t *testing.T, name string, opts Options, req engine.RunRequest) (held, unheld int64) {
	t.Helper()
	var js, prog [2][]byte
	var events [2]int64
	for i, noHold := range []bool{false, true} {
		var progress []engine.Progress
		req.Progress = func(p engine.Progress) { progress = append(progress, p) }
		e := New(opts)
		e.noHold = noHold
		w := runWorld(t, e, req)
		events[i] = w.stats.events
		var err error
		if js[i], err = json.Marshal(w.result(req, w.finishAt)); err != nil {
			t.Fatal(err)
		}
		if prog[i], err = json.Marshal(progress); err != nil {
			t.Fatal(err)
		}
	}
	if string(js[0]) != string(js[1]) {
		t.Errorf("%s: the results with held turns differ from those without", name)
	}
	if string(prog[0]) != string(prog[1]) {
		t.Errorf("%s: the progress reports with held turns differ from those without:\n%s\n%s", name, prog[0], prog[1])
	}
	if events[0] > events[1] {
		t.Errorf("%s: %d events with held turns, %d without", name, events[0], events[1])
	}
	return events[0], events[1]
}

// TestIdleTurnRule: an application turn with nothing to read or write, on
// its free application core, is held only before the loop's limit and
// before the next progress report (which is timed by the first event
// past its second: a held turn there would move it); one with data to
// read, or whose core is busy, is not.
func TestIdleTurnRule(t *testing.T) {
	w := &world{limit: 10e9, progressAt: 1e9}
	h := &host{cores: make([]core, 2)}
	ep := &endpoint{w: w, host: h, core: 1, appCPU: &h.cores[1], appCore: true, canHold: true}
	for _, tt := range []struct {
		name   string
		at     int64
		unread int64
		busy   int64 // the core's free time
		held   bool
	}{
		{"nothing to do", 5e8, 0, 0, true},
		{"at the progress report", 1e9, 0, 0, false},
		{"past the limit", 10e9 + 1, 0, 0, false},
		{"data to read", 5e8, 1000, 0, false},
		{"its core busy", 5e8, 0, 6e8, false},
	} {
		ep.rcv.unread, h.cores[1].free = tt.unread, tt.busy
		if got := ep.idleTurn(tt.at); got != tt.held {
			t.Errorf("%s: idleTurn(%d) = %v, want %v", tt.name, tt.at, got, tt.held)
		}
	}
}

// TestUnholdMates: a turn that makes its core busy past a mate's held
// turn still to come queues that turn (it would find the core busy); a
// held turn after the core's new free time stays held.
func TestUnholdMates(t *testing.T) {
	w := &world{limit: 10e9, progressAt: 10e9}
	h := &host{cores: make([]core, 1)}
	a := &endpoint{w: w, host: h, appCPU: &h.cores[0], appCore: true, canHold: true}
	b := &endpoint{idx: 1, w: w, host: h, appCPU: &h.cores[0], appCore: true, canHold: true}
	c := &endpoint{idx: 2, w: w, host: h, appCPU: &h.cores[0], appCore: true, canHold: true}
	a.coreMates = []*endpoint{b, c}
	if !b.tryHold(100) || !c.tryHold(300) {
		t.Fatal("idle turns at 100 and 300 ns on a free core were not held")
	}
	h.cores[0].charge(50, 150) // a's turn: busy until 200
	a.unholdMates(&h.cores[0])
	if b.app.held || !c.app.held || w.q.len() != 1 {
		t.Errorf("held: b %v, c %v, %d queued; want b's turn at 100 queued (the core is busy until 200), c's at 300 held", b.app.held, c.app.held, w.q.len())
	}
}

// TestHeldTurnThatPassedSleeps: data after a held turn's time finds the
// thread asleep as the turn left it (runApp's end: not waiting, no core a
// slice-long wait won) and queues a turn for it.
func TestHeldTurnThatPassedSleeps(t *testing.T) {
	w := &world{limit: 10e9, progressAt: 10e9}
	h := &host{cores: make([]core, 2)}
	a := &endpoint{w: w, host: h, core: 1, appCPU: &h.cores[1], appCore: true, canHold: true}
	w.q.push(5, evRxPoll, 0)
	w.q.pop()
	h.cores[1].free = 5
	a.app.ev = true
	if !a.tryHold(5) {
		t.Fatal("an idle turn at 5 ns on a free core was not held")
	}
	a.app.runUntil, a.app.waiting = 100, true
	w.q.push(6, evRxPoll, 0)
	w.q.pop() // the event at 6: the held turn at 5 has passed
	a.rcv.unread = 1000
	a.app.wakeReader(a, 6)
	if a.app.held || a.app.runUntil != 0 || a.app.waiting {
		t.Errorf("after the pass: held %v, runUntil %d, waiting %v; want false, 0, false", a.app.held, a.app.runUntil, a.app.waiting)
	}
	if ev, ok := w.q.pop(); !ok || ev.kind != evAppRun || ev.id != a.idx || ev.at != 6 {
		t.Errorf("next event %+v (%v), want the turn of the data at 6", ev, ok)
	}
}

// TestUnholdGuarded: on a guarded core (a receive queue's), work that is
// not a turn (a poll step) and makes the core busy past a held turn
// still to come queues that turn after the event; a held turn after the
// core's new free time stays held and keeps the core listed, and a core
// whose held turns have all come leaves the list.
func TestUnholdGuarded(t *testing.T) {
	w := &world{limit: 10e9, progressAt: 10e9}
	h := &host{cores: make([]core, 1)}
	g := &h.cores[0]
	a := &endpoint{w: w, host: h, appCPU: g, canHold: true}
	b := &endpoint{idx: 1, w: w, host: h, appCPU: g, canHold: true}
	g.holders = []*endpoint{a, b}
	w.heldOn = make([]*core, 0, 1)
	if !a.tryHold(100) || !b.tryHold(300) {
		t.Fatal("idle turns at 100 and 300 ns on a free guarded core were not held")
	}
	if len(w.heldOn) != 1 {
		t.Fatalf("%d cores listed, want the guarded core once", len(w.heldOn))
	}
	g.charge(50, 150) // a poll step: busy until 200
	if !w.heldBusy {
		t.Fatal("a charge past the first held turn did not set world.heldBusy: the loop would not look")
	}
	w.unholdGuarded()
	if a.app.held || !b.app.held || w.q.len() != 1 || len(w.heldOn) != 1 {
		t.Errorf("held: a %v, b %v, %d queued, %d listed; want a's turn at 100 queued, b's at 300 held, the core listed", a.app.held, b.app.held, w.q.len(), len(w.heldOn))
	}
	if ev, ok := w.q.pop(); !ok || ev.kind != evAppRun || ev.id != a.idx || ev.at != 100 {
		t.Errorf("next event %+v (%v), want a's turn at 100", ev, ok)
	}
	w.q.push(400, evRxPoll, 0)
	w.q.pop() // the event at 400: b's held turn at 300 has passed
	g.charge(400, 100)
	w.unholdGuarded()
	if !b.app.held || w.q.len() != 0 || len(w.heldOn) != 0 || g.listed {
		t.Errorf("after b's time: held %v, %d queued, %d listed; want b's turn still held (it passed), nothing queued, no core listed", b.app.held, w.q.len(), len(w.heldOn))
	}
}
