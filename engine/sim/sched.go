package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Scheduler is how a machine runs the threads of the model when they
// sleep and wake: the application's reader and writer (one thread per
// endpoint, on its core) and, where the stack runs interrupts in a thread
// (FreeBSD's ithreads), the receive queue's interrupt thread (on its
// core). A CPU profile offers its machine's schedulers by name and a
// host chooses one (`scheduler`); a host that chooses none ("none", the
// default) keeps the model as it was before schedulers existed: FIFO
// cores, where a woken thread runs at once, for free.
//
// With one, a thread woken from sleep (a reader by arriving data, a
// writer by an ACK that freed send-buffer space, an interrupt thread by
// an interrupt that found it idle) runs WakeLatency later, a draw from
// the run's random source, and its core is charged ContextSwitch when it
// runs. A thread that yields with work left, or waits for a busy core,
// is not asleep and draws nothing.
type Scheduler struct {
	// Name is how a host chooses it (`scheduler = "c1-idle"`), among
	// its CPU profile's Schedulers.
	Name string
	// Source says where the figures come from, or that they are assumed.
	Source string
	// WakeLatency is the time from a wake-up (wakeup(9), try_to_wake_up)
	// to the woken thread running on its idle core, ns.
	WakeLatency LogNormal
	// ContextSwitch is the CPU a woken thread's core spends switching to
	// it (mi_switch, cpu_switch; __schedule, switch_to), ns.
	ContextSwitch float64
}

// LogNormal is a distribution of durations whose logarithm is normal,
// cut to [Min, Max]: the usual shape of scheduling latency (a floor, a
// mode a little above it, a long right tail).
type LogNormal struct {
	Median float64 // ns
	Sigma  float64 // standard deviation of the natural logarithm
	Min    float64 // ns; a draw below it is Min
	Max    float64 // ns; a draw above it is Max
}

// quantiles is how many equally likely values a run draws a LogNormal
// from: its quantiles at (i+0.5)/quantiles, so a draw is one step of the
// random source and a table lookup, not a normal deviate and an exp per
// wake-up (which took a third of a run's time).
const quantiles = 4096

// table returns the distribution's quantiles, ns, rounded and cut to
// [Min, Max].
func (d LogNormal) table() []int64 {
	t := make([]int64, quantiles)
	for i := range t {
		z := math.Sqrt2 * math.Erfinv(2*(float64(i)+0.5)/quantiles-1)
		t[i] = int64(math.Round(min(max(d.Median*math.Exp(d.Sigma*z), d.Min), d.Max)))
	}
	return t
}

func (d LogNormal) String() string {
	return fmt.Sprintf("lognormal(median %.0f ns, sigma %.2f, [%.0f, %.0f] ns)", d.Median, d.Sigma, d.Min, d.Max)
}

// hashText is the text of a host's CPU profile the provenance hash
// covers: the profile as %+v prints it without the schedulers it offers,
// then the scheduler the host runs, if any. A host without a scheduler
// hashes as it did before schedulers existed, so its runs keep their
// hash.
func (p CPUProfile) hashText(run *Scheduler) string {
	q := p
	q.Schedulers = nil
	s := strings.TrimSuffix(fmt.Sprintf("%+v", q), " Schedulers:[]}") + "}"
	if run != nil {
		s += fmt.Sprintf("%+v", *run)
	}
	return s
}

// sched is a host's scheduler in a run, nil when it runs none.
type sched struct {
	Scheduler
	rnd  *rand.Rand // the run's random source (world.rnd)
	wake []int64    // WakeLatency.table(), shared by the engine's runs (read only)
}

// newRand is the random source of one run: the engine's seed and the
// repetition, so repetitions of a cell draw differently and the same seed
// gives the same run.
func newRand(seed uint64, repetition int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(repetition)))
}

// random is the run's random source, made on first use.
func (w *world) random() *rand.Rand {
	if w.rnd == nil {
		w.rnd = newRand(w.e.seed, w.rep)
	}
	return w.rnd
}

// wokeState says whether an application's queued turn wakes it from
// sleep, on a host with a scheduler.
type wokeState uint8

const (
	wokeNone wokeState = iota // a turn of a running thread (or no scheduler)
	wokeUp                    // asleep: its next turn, queued app.lag after a wake-up (sowakeup, sk_data_ready, sk_stream_write_space), pays a context switch first
)

// waking is the start of a turn that wakes an application from sleep on
// a host with a scheduler (queued app.lag after the wake-up): once its
// core is free, the core pays the context switch and the turn is queued
// again for its end, when the thread acts (true); the next wake-up's
// latency is drawn. False while the core is busy: runApp waits for it as
// for any turn, and the turn comes back here.
func (ep *endpoint) waking(now int64) bool {
	a := &ep.app
	c := &ep.host.cores[ep.core]
	if c.free > now {
		return false
	}
	sc := ep.host.sched
	a.lag = sc.latency()
	a.woken = wokeNone
	a.ev = true
	ep.w.q.push(c.charge(now, sc.ContextSwitch), evAppRun, ep.idx)
	return true
}

// latency is one draw of the wake-up latency, ns.
//
//go:noinline
func (s *sched) latency() int64 { return s.wake[s.rnd.IntN(quantiles)] }

// irqWake is when the interrupt raised at t is handled: at t, unless the
// stack runs interrupt handlers in threads (profile.ithreads) and the host
// has a scheduler, which wakes the handler's thread a draw later.
func (h *host) irqWake(t int64) int64 {
	if h.ithread != nil {
		t += h.ithread.latency()
	}
	return t
}

// wakeKey names a CPU profile's scheduler in Engine.wakeTables.
func wakeKey(cpu, scheduler string) string { return cpu + "\x00" + scheduler }
