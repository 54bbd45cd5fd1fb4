package sim

import (
	"fmt"
	"math"
	"math/bits"
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
	// IdleSpin is how long a core that has gone idle keeps spinning in
	// the idle loop before it enters an idle state, ns; 0 = none. A
	// thread woken on a core that is busy or still spinning runs
	// without WakeLatency (no idle state to leave, no IPI); its core
	// still pays ContextSwitch. FreeBSD 10's ULE: sched_idletd
	// spins sched_idlespins (10000) iterations of cpu_spinwait,
	// checking tdq_load, while the core switches more than
	// sched_idlespinthresh times in two stathz ticks (see wake).
	IdleSpin int64
	// Migrate: a thread woken while its core is busy runs on an idle
	// core of its machine, if one is (migrate). Linux's
	// try_to_wake_up -> select_task_rq_fair -> select_idle_sibling
	// (kernel/sched/fair.c) returns the previous CPU when it is idle
	// and else looks for an idle CPU sharing its cache (available_idle_cpu).
	Migrate bool
}

// String names the scheduler with its figures and their source, as the
// results' provenance reports it.
func (s Scheduler) String() string {
	spin := ""
	if s.IdleSpin > 0 {
		spin = fmt.Sprintf(", none on a core busy or idle less than %d ns (idle spin)", s.IdleSpin)
	}
	return fmt.Sprintf("%s: wake-up latency %s%s, context switch %.0f ns (%s)", s.Name, s.WakeLatency, spin, s.ContextSwitch, s.Source)
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
// a host with a scheduler (queued app.lag after the wake-up). runApp
// calls it once the core is free, or the thread's wait for it is over
// (waitCore): the core pays the context switch, queued behind its work,
// and the turn is queued again for its end, when the thread acts; the
// next wake-up's latency is drawn.
func (ep *endpoint) waking(now int64) {
	a := &ep.app
	c := ep.appCPU
	sc := ep.host.sched
	a.lag = sc.latency()
	a.woken = wokeNone
	a.ev = true
	ep.w.q.push(c.charge(now, sc.ContextSwitch), evAppRun, ep.idx)
}

// latency is one draw of the wake-up latency, ns.
//
//go:noinline
func (s *sched) latency() int64 { return s.wake[s.rnd.IntN(quantiles)] }

// spinning reports whether a thread woken at now on core c finds the
// core busy or still in its idle spin (Scheduler.IdleSpin), so that it
// runs without the wake-up latency. FreeBSD 10's sched_idletd (sys/kern/
// sched_ule.c) spins while tdq_load is 0 for sched_idlespins
// iterations when switchcnt > sched_idlespinthresh, and only then calls
// cpu_idle, whose MWAIT C1 (or ACPI C-state) is what WakeLatency
// prices; sched_add on a busy or spinning core needs no IPI
// (tdq_notify, cpu_idle_wakeup). The switch count condition is not
// modelled: a stream that wakes its threads every few microseconds
// switches far above the threshold (2 * max(10000, 6 * hz) / stathz,
// 157 switches in two ticks of stathz 127, about 10 k a second).
func (s *sched) spinning(c *core, now int64) bool {
	return s.IdleSpin > 0 && now-c.free < s.IdleSpin
}

// wakeAt is when a thread woken at now on core c, with lag its drawn
// wake-up latency, runs: now when its core is busy or spinning, else
// now + lag.
func (s *sched) wakeAt(c *core, now, lag int64) int64 {
	if s != nil && s.spinning(c, now) {
		return now
	}
	return now + lag
}

// wakeAt is when ep's thread, woken at now with lag its drawn wake-up
// latency, runs: on its core, or, when its scheduler migrates (Migrate)
// and that core is busy, on an idle one (migrate) first.
func (ep *endpoint) wakeAt(now, lag int64) int64 {
	if ep.migrates() {
		ep.migrate(now)
	}
	return ep.host.sched.wakeAt(ep.appCPU, now, lag)
}

// migrates reports whether ep's host's scheduler moves threads between
// cores (Scheduler.Migrate).
func (ep *endpoint) migrates() bool {
	s := ep.host.sched
	return s != nil && s.Migrate
}

// firstFree is when the first of ep's host's cores other than c is free,
// ns: when a thread waiting for c would be pulled to it (newidle_balance).
func (ep *endpoint) firstFree(c *core) int64 {
	t := int64(math.MaxInt64)
	for i := range ep.host.cores {
		if o := &ep.host.cores[i]; o != c {
			t = min(t, o.free)
		}
	}
	return t
}

// migrate moves ep's thread, woken at now, to the first idle core of its
// host when its own core is busy: select_idle_sibling (kernel/sched/
// fair.c) keeps prev when available_idle_cpu(prev), else scans the LLC
// for an idle CPU (select_idle_cpu); the model's cores share one cache.
// Only the thread moves (appCPU: its reads, writes and the sends its
// system calls make are charged there); the queue its frames go to
// follows it when that keeps them in order (backlog).
func (ep *endpoint) migrate(now int64) {
	if ep.appCPU.free <= now {
		return
	}
	cs := ep.host.cores
	for i := range cs {
		if cs[i].free <= now {
			ep.appCPU = &cs[i]
			return
		}
	}
}

// backlog is the receive queue ep's frames go to over an unshaped veth:
// the backlog of the core its thread runs on, as veth_xmit's netif_rx
// queues on the sending CPU's (net/core/dev.c: enqueue_to_backlog with
// smp_processor_id(), no RPS on a veth). When the thread has migrated,
// the frames move to its new core's queue only once the old one is
// empty, so a flow's segments stay in order: RFS moves a flow to a new
// CPU only when the old CPU's backlog has passed the flow's last packet
// (get_rps_cpu, rflow->last_qtail); the model, which does not track a
// flow's place in a shared queue, waits until the queue has drained.
// Until then they go where they went (ep.core). The shaped path (a
// tbf's queue, machine.soft) does not move.
func (ep *endpoint) backlog() int32 {
	h := ep.host
	qi := h.ctxQueues[ep.core]
	if c := ep.appCPU.id; c != ep.core && ep.migrates() {
		if q := &ep.w.rxqs[qi]; q.head >= len(q.ring) {
			ep.core = c
			qi = h.ctxQueues[c]
		}
	}
	return qi
}

// irqWake is when the interrupt raised at t on core c is handled: at t,
// unless the stack runs interrupt handlers in threads (profile.ithreads)
// and the host has a scheduler, which wakes the handler's thread a draw
// later, or at once on a core busy or still spinning in its idle loop
// (an interrupt thread preempts the idle thread on the interrupted core:
// sched_ule.c sched_add, ithread priority).
func (h *host) irqWake(c *core, t int64) int64 {
	if h.ithread != nil && !h.ithread.spinning(c, t) {
		t += h.ithread.latency()
	}
	return t
}

// wakeKey names a CPU profile's scheduler in Engine.wakeTables.
func wakeKey(cpu, scheduler string) string { return cpu + "\x00" + scheduler }

// timeslice is how long a kernel's scheduler lets a thread that is
// runnable wait behind the one on its core: the running thread's slice,
// after which the waiting one runs, for a slice of its own. The model's
// cores are FIFO servers of work, and work done in other threads'
// context (a sender's softirq receive on a veth, its ACK processing) is
// charged without waiting, while an application's turn that finds its
// core busy comes back when it is free: a thread that has just run
// queues its next turn at exactly that time and keeps the core, and a
// waiting one could be pushed behind it without end. With a slice a
// turn waits at most that long (waitCore); then it runs, its work queued
// behind what the core holds, and so do the thread's turns for one slice
// more unless it sleeps. A zero timeslice is unbounded (tests only: the
// model before slices).
type timeslice struct {
	// base is the slice, ns, before any scaling by the CPU count.
	base int64
	// logCPUs: the kernel scales it by 1 + ilog2(min(cpus, maxCPUs))
	// (sysctl_sched_tunable_scaling's default, SCHED_TUNABLESCALING_LOG:
	// sched_init_granularity, get_update_sysctl_factor).
	logCPUs bool
	// maxCPUs caps the CPU count the scaling counts (8 in 6.x's
	// get_update_sysctl_factor); 0 = no cap (2.6's
	// sched_init_granularity counts every online CPU).
	maxCPUs int
	// source says where the figures come from.
	source string
}

// of is the slice on a machine of cpus cores, ns; 0 = unbounded.
func (s timeslice) of(cpus int) int64 {
	if !s.logCPUs {
		return s.base
	}
	if s.maxCPUs > 0 {
		cpus = min(cpus, s.maxCPUs)
	}
	return s.base * int64(bits.Len(uint(max(cpus, 1)))) // 1 + ilog2(cpus)
}

// waitCore is runApp's turn at now on its core c, busy past now: the
// thread waits for it, from the first turn that found it busy, at most
// the host's slice. It returns true when it waits (the turn is queued
// again: when the core is free or the slice ends, whichever comes first)
// and false when the turn runs now, its work queued behind the core's:
// the wait has lasted the slice, or one that did ended less than a slice
// ago (app.runUntil) and the thread has not slept since.
func (ep *endpoint) waitCore(now int64, c *core) bool {
	a := &ep.app
	if now < a.runUntil {
		return false
	}
	if !a.waiting {
		a.waiting, a.waitFrom = true, now
	}
	at := c.free
	if ep.migrates() {
		at = min(at, ep.firstFree(c))
	}
	if s := ep.host.slice; s > 0 {
		if now >= a.waitFrom+s {
			a.runUntil = now + s
			return false
		}
		at = min(at, a.waitFrom+s)
	}
	a.ev = true
	ep.w.q.pushWait(at, ep.idx, c.lane)
	return true
}

// waitsAgain is the event queue's hop: whether the turn of endpoint id at
// now, the least event, from a wait lane, would do nothing but wait again
// (runApp to waitCore: its core busy, the wait begun and not past the
// slice), and for when. Then the queue queues it again without the loop
// running it, which changes nothing the run computes: not beyond the
// limit or where a progress report is due (the loop would stop or report
// there), nor under checks (they see every event). The clock moves to
// now, as the loop would have moved it.
func (w *world) waitsAgain(id int32, now int64) (int64, bool) {
	if now > w.limit || now >= w.progressAt || w.checks != nil {
		return 0, false
	}
	ep := w.eps[id]
	a := &ep.app
	c := ep.appCPU
	if c.free <= now || now < a.runUntil || !a.waiting || !a.ev || a.held || ep.migrates() {
		return 0, false
	}
	at := c.free
	if s := ep.host.slice; s > 0 {
		if now >= a.waitFrom+s {
			return 0, false
		}
		at = min(at, a.waitFrom+s)
	}
	w.now = now
	return at, true
}

// The kernels' slices. A historical profile's slice has not bound in any
// example: the longest wait for a busy core there is 1.13 ms
// (neterion-2005 and super-tso-v2, linux-2.6.12), far below them, so
// their outputs are what they were before slices.
var (
	// eevdfSlice is Linux 6.x's EEVDF: a task runs its request,
	// sysctl_sched_base_slice, before a waiting one whose virtual
	// deadline is earlier (RUN_TO_PARITY protects the current one
	// until then). The slice is 0.70 ms in 6.17's fair.c (0.75 ms
	// when EEVDF came in 6.6, through at least 6.13; this machine runs
	// 6.18), times 1 + ilog2(min(cpus, 8)): 1.4 ms on 2 CPUs, 2.8 ms
	// on 8.
	eevdfSlice = timeslice{base: 700000, logCPUs: true, maxCPUs: 8,
		source: "kernel/sched/fair.c (6.17): sysctl_sched_base_slice 700000 ns, get_update_sysctl_factor 1+ilog2(min(ncpus, 8))"}
	// cfsSlice is 2.6.27's CFS: with the running task and one waiting,
	// the running one's ideal runtime is half the period
	// (sched_slice, check_preempt_tick), and the period is
	// sysctl_sched_latency, 20 ms times 1 + ilog2(cpus)
	// (sched_init_granularity; the period stretches only beyond
	// sched_nr_latency = 5 runnable tasks).
	cfsSlice = timeslice{base: 10e6, logCPUs: true,
		source: "kernel/sched_fair.c (2.6.27): sysctl_sched_latency 20 ms, sched_slice of 2 runnable = half; sched_init_granularity 1+ilog2(ncpus)"}
	// o1Slice is the O(1) scheduler of 2.6.12 and 2.6.13: a nice-0
	// task's timeslice, DEF_TIMESLICE (task_timeslice), before a task of
	// the same priority runs.
	o1Slice = timeslice{base: 100e6,
		source: "kernel/sched.c (2.6.12): DEF_TIMESLICE 100 ms, task_timeslice at nice 0"}
	// uleSlice is FreeBSD 10's ULE: a timeshare thread runs
	// sched_slice, stathz / SCHED_SLICE_DEFAULT_DIVISOR = 12 ticks of
	// stathz 127 (~94 ms), and a woken timeshare thread does not preempt
	// it (preempt_thresh PRI_MIN_KERN).
	uleSlice = timeslice{base: 94488188, // 12e9/127
		source: "sys/kern/sched_ule.c (FreeBSD 10): sched_slice = realstathz/10, 12 ticks of stathz 127"}
)
