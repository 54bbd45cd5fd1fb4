package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

// TestEventBudget: a run that reaches its event budget ends as its
// duration's end would (the fuzz target's bound on an input's work), one
// below it runs to its end.
func TestEventBudget(t *testing.T) {
	p := pair{stack: "linux-6", mtu: 1500, delay: 20 * time.Microsecond, wl: config.Workload{Duration: 100 * time.Millisecond, WriteSize: 65536}}
	run := func(budget int64) (*result.WorkloadResult, *checker) {
		e := New(Options{})
		e.checks, e.eventBudget = true, budget
		res := runScenario(t, e, p.scenario())
		if errs := e.lastCheck.errs; len(errs) > 0 {
			t.Fatalf("budget %d: invariants: %v", budget, errs)
		}
		return res, e.lastCheck
	}
	full, c := run(0)
	if c.cut || full.Metrics[result.MetricDurationS] != 0.1 {
		t.Fatalf("no budget: cut %v after %v s, want the whole 0.1 s", c.cut, full.Metrics[result.MetricDurationS])
	}
	events := c.steps
	if _, c := run(events + 1); c.cut {
		t.Errorf("a budget above the run's %d events cut it", events)
	}
	budget := events / 4
	part, c := run(budget)
	if !c.cut || c.steps <= budget || c.steps > budget+stillSteps {
		t.Fatalf("budget %d of %d events: cut %v after %d events", budget, events, c.cut, c.steps)
	}
	d := part.Metrics[result.MetricDurationS]
	if b := part.Metrics[result.MetricBytes]; d <= 0 || d >= 0.1 || b <= 0 || b >= full.Metrics[result.MetricBytes] {
		t.Errorf("budget %d of %d events: %v bytes in %v s, want part of %v bytes in 0.1 s", budget, events, b, d, full.Metrics[result.MetricBytes])
	}
}

// TestCheckerLivelock: events without simulated time passing are a
// failure, and the checker ends the run; events that advance time are not.
func TestCheckerLivelock(t *testing.T) {
	for _, advance := range []bool{false, true} {
		w := &world{now: 5}
		c := &checker{}
		for range 2 * stillSteps {
			c.step(w)
			if advance {
				w.now++
			}
		}
		stuck := len(c.errs) > 0 && strings.Contains(c.errs[0], "livelock")
		if stuck == advance || (w.q.len() > 0) == advance {
			t.Errorf("time advancing %v: errors %v, %d events queued", advance, c.errs, w.q.len())
		}
	}
}
