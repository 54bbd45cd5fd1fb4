package sim

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/provenance"
	"github.com/tsolab/tsolab/result"
)

// Options configures the model.
type Options struct {
	// DefaultStack is the stack profile of a host without `stack`;
	// "" means "linux-6".
	DefaultStack string
	// LineRate is the rate of a NIC without `rate`; 0 means 10 Gb/s.
	LineRate config.Rate
	// CPUProfiles replaces the built-in `cpu` profiles when not nil.
	CPUProfiles []CPUProfile
	// ProfileFiles are the files CPUProfiles were read from (calibration
	// files), named with their hashes in every run's provenance.
	ProfileFiles []string
	// MaxSimTime bounds a run in virtual time; 0 means one hour. A run
	// that reaches it reports what it measured with a note.
	MaxSimTime time.Duration
	// Seed seeds the random source of every run (with the run's
	// repetition): the draws of the hosts' schedulers (Scheduler). A run
	// whose hosts have no scheduler draws nothing and does not depend on
	// it; one that draws reports it in its provenance.
	Seed uint64
}

// Engine runs workloads on the model. It holds no state between runs and
// is safe to call from one goroutine at a time per Run (runs share
// nothing).
type Engine struct {
	defaultStack string
	lineRate     config.Rate
	cpus         []CPUProfile
	maxSim       int64
	seed         uint64 // Options.Seed
	// wakeTables are the wake-up latency quantiles (LogNormal.table) of
	// the CPU profiles' schedulers, by wakeKey: made once, read by every
	// run.
	wakeTables map[string][]int64
	files      []result.File // ProfileFiles with their hashes
	checks     bool          // tests: verify the invariants after every step
	lastCheck  *checker      // tests: the checker of the last run
	// eventBudget, when > 0 with checks, ends a run after that many
	// events as its duration's end would (tests: the fuzz target's
	// bound on an input's work).
	eventBudget int64
	// noHold (tests only) holds no application turn (holdTurn): the
	// runs must be the same.
	noHold bool
	// editProfile, when set (tests only), changes each host's profile
	// after it is built: one strategy swapped to see its effect alone.
	editProfile func(*profile)
}

var _ engine.Engine = (*Engine)(nil)

// New returns the model engine.
func New(o Options) *Engine {
	e := &Engine{defaultStack: o.DefaultStack, lineRate: o.LineRate, cpus: o.CPUProfiles, maxSim: int64(o.MaxSimTime), seed: o.Seed, files: provenance.HashFiles(o.ProfileFiles)}
	if e.defaultStack == "" {
		e.defaultStack = "linux-6"
	}
	if e.lineRate == 0 {
		e.lineRate = 10e9
	}
	if e.cpus == nil {
		e.cpus = builtinCPUProfiles()
	}
	if e.maxSim == 0 {
		e.maxSim = int64(time.Hour)
	}
	e.wakeTables = map[string][]int64{}
	for _, p := range e.cpus {
		for _, s := range p.Schedulers {
			if k := wakeKey(p.Name, s.Name); e.wakeTables[k] == nil { // cpuProfile finds the first of a name
				e.wakeTables[k] = s.WakeLatency.table()
			}
		}
	}
	return e
}

// Name is "sim".
func (e *Engine) Name() string { return "sim" }

// CPUProfiles lists the cpu profiles the engine knows.
func (e *Engine) CPUProfiles() []CPUProfile { return append([]CPUProfile(nil), e.cpus...) }

// world is one run: the topology, the connections, the clock and the
// event queue.
type world struct {
	e *Engine
	q eventQueue
	// heldOn are the guarded cores (core.holders) with a turn held
	// still to come (holdTurn): other work charges them too (a receive
	// queue, the interrupt core), so after an event that made such a
	// core busy past a held turn (heldBusy) that turn is queued
	// (unholdGuarded).
	heldOn []*core
	// heldBusy: the event running charged a listed guarded core past its
	// first held turn (core.charge), so unholdGuarded has turns to queue.
	heldBusy bool
	now      int64
	hosts    []*host // in the scenario's declaration order
	nics     []*nicState
	eps      []*endpoint
	rxqs     []rxQueue
	client   *host
	servers  []*host // distinct server hosts, in order

	readers  int   // stream endpoints that must read a byte count
	doneRead int   // of them, finished
	finished bool  // the workload is complete
	finishAt int64 // when, ns
	stopping bool  // the duration is over: no new transactions
	stats    stats
	checks   *checker
	rep      int        // the run's repetition (engine.RunRequest)
	rnd      *rand.Rand // the run's random source; nil until a scheduler needs it
	notes    []string
	// limit and progressAt are the loop's: the time past which it stops,
	// and when it next reports progress (MaxInt64: never).
	limit, progressAt int64
}

// Run runs one workload of one scenario on the model.
func (e *Engine) Run(ctx context.Context, req engine.RunRequest) (*result.WorkloadResult, error) {
	if req.Scenario == nil || req.Workload == nil {
		return nil, fmt.Errorf("sim: a run needs a scenario and a workload")
	}
	w, err := e.build(req.Scenario, req.Workload, req.Repetition)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	end, err := w.loop(ctx, req)
	if err != nil {
		return nil, err
	}
	if w.checks != nil {
		w.checks.finish(w)
		e.lastCheck = w.checks
	}
	return w.result(req, end), nil
}

// loop runs events until the workload completes, its duration ends or the
// time limit is reached, and returns the measured duration in ns.
func (w *world) loop(ctx context.Context, req engine.RunRequest) (int64, error) {
	wl := req.Workload
	limit := w.e.maxSim
	dur := int64(wl.Duration)
	if wl.Bytes == 0 && dur == 0 {
		dur = int64(10 * time.Second)
		w.notes = append(w.notes, "the workload sets neither bytes nor duration: the model ran it for 10s")
	}
	if wl.Kind == config.RR && dur == 0 {
		dur = int64(10 * time.Second)
		w.notes = append(w.notes, "an rr workload runs for a duration: the model ran it for 10s")
	}
	if dur > 0 {
		limit = min(limit, dur)
		w.q.push(dur, evStop, 0)
	}
	var events uint64
	nextProgress := int64(time.Second)
	lastBytes := int64(0)
	w.limit, w.progressAt = limit, math.MaxInt64
	if req.Progress != nil {
		w.progressAt = nextProgress
	}
	for !w.finished {
		// Between two checks of ctx (every 65536 events), one event at a
		// time under checks.
		batch := ctxEvery - events%ctxEvery
		if w.checks != nil {
			batch = 1
		}
		n, end := w.run(batch)
		events += n
		if end {
			break
		}
		if w.checks != nil {
			w.checks.step(w)
		}
		if events%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		if req.Progress != nil && w.now >= nextProgress {
			req.Progress(engine.Progress{
				Scenario: req.Scenario.Name, Workload: wl.Name,
				Elapsed: time.Duration(w.now), Planned: time.Duration(dur),
				ThroughputBps: float64(w.stats.readBytes-lastBytes) * 8,
			})
			lastBytes = w.stats.readBytes
			nextProgress += int64(time.Second)
			w.progressAt = nextProgress
		}
	}
	w.stats.events = int64(events)
	if !w.finished {
		w.passHeld()
		if dur > 0 {
			w.finishAt = dur
		} else {
			w.finishAt = w.now
			w.notes = append(w.notes, fmt.Sprintf("the model stopped at its time limit (%s) before the workload completed", time.Duration(limit)))
		}
	}
	return w.finishAt, nil
}

// ctxEvery is how many events the loop runs between two looks at its
// context.
const ctxEvery = 1 << 16

// run runs at most max events, and fewer when the workload finishes or
// an event reaches w.progressAt (a progress report is due after it), and
// returns how many it ran; end says the queue has no event left up to
// w.limit (the one past it is dropped, as the loop ends). It keeps the
// loop's bookkeeping out of the way of each event: Go's calls save no
// register, so every value the loop holds across a handler is reloaded
// after it.
func (w *world) run(max uint64) (n uint64, end bool) {
	for n < max {
		ev, ok := w.q.pop()
		if !ok || ev.at > w.limit {
			return n, true
		}
		w.now = ev.at
		switch ev.kind {
		case evRxPoll:
			w.poll(ev.id, ev.at)
		case evAppRun:
			w.eps[ev.id].runApp(ev.at)
		case evDelAck:
			w.eps[ev.id].onDelAck(ev.at)
		case evRTO:
			w.eps[ev.id].onRTO(ev.at)
		case evPace:
			ep := w.eps[ev.id]
			ep.snd.paceEv = false
			ep.afterPace(ev.at)
		case evTSQ:
			w.eps[ev.id].onTSQ(ev.at)
		case evStop:
			w.stopping = true
			w.finished = true
			w.finishAt = ev.at
		}
		if w.heldBusy {
			w.heldBusy = false
			w.unholdGuarded()
		}
		n++
		if w.finished || ev.at >= w.progressAt {
			break
		}
	}
	return n, false
}

// afterPace sends what pacing held back.
func (ep *endpoint) afterPace(now int64) {
	ep.output(now, ep.snd.nonagle, ep.rxCPU)
}

// connect makes one connection between client NIC cn and server NIC sn.
func (w *world) connect(wl *config.Workload, ch *host, cn *nicState, sh *host, sn *nicState) error {
	conn := len(w.eps) / 2
	mss := int64(min(cn.mtu, sn.mtu) - hdrLen)
	a := &endpoint{idx: int32(len(w.eps)), conn: conn, client: true, w: w, host: ch, nic: cn, prof: ch.prof, mss: mss}
	b := &endpoint{idx: int32(len(w.eps) + 1), conn: conn, w: w, host: sh, nic: sn, prof: sh.prof, mss: mss}
	a.peer, b.peer = b, a
	w.eps = append(w.eps, a, b)
	if sameMachine(ch, sh) {
		onMachineVeth(cn)
		onMachineVeth(sn)
	}
	for side, ep := range []*endpoint{a, b} {
		h := ep.host
		switch n := len(h.cores); {
		case h.machine != nil:
			// One machine's threads spread over all its cores: a
			// connection's writer on core conn mod n, its reader on the
			// next (there is no interrupt core: veths raise none).
			ep.core = (conn + side) % n
		case n > 1:
			ep.core = 1 + h.nEps%(n-1)
		}
		h.nEps++
		ep.appCPU = &h.cores[ep.core]
		s := &ep.snd
		w.sockbufs(ep, wl)
		switch {
		case wl.Cork:
			s.nonagle = nagleCork
		case wl.NoDelay:
			s.nonagle = nagleOff
		}
		s.rto = 1e9
		s.tsoDeferredAt = -1
		s.paceBps = float64(wl.Rate)
		s.tso = ep.nic.off.Has(offTSO)
		s.gso = ep.prof.buildsGSO(ep.nic.off)
		cc, err := ep.prof.cc.connection(ep.prof.name, wl.CC)
		if err != nil {
			return err
		}
		s.cc = cc
		s.cc.init(ep)
		// tcp_init_buffer_space: an autosizing send buffer takes the
		// initial cwnd's size (tcp_sndbuf_expand).
		ep.prof.bufs.sndExpand(ep)
		// tcp_init_buffer_space: the first measure of DRS is
		// TCP_INIT_CWND segments.
		ep.rcv.space = min(10*mss, ep.rcv.buf)
		// tcp_select_initial_window: the first window is the
		// buffer's space in whole segments, and rcv_ssthresh starts
		// there (linuxAcks.growWindow).
		ep.rcv.ssthr = ep.rcv.buf - ep.rcv.buf%mss
		if sc := ep.host.sched; sc != nil {
			// It starts asleep; startApps starts the writers.
			ep.onWake, ep.app.woken = wokeUp, wokeUp
			ep.app.lag = sc.latency()
		}
		ep.coalesce = ep.prof.coalesces(ep.nic.off)
		if ep.nic.loopback {
			ep.coalesce = false
		}
	}
	for _, ep := range []*endpoint{a, b} {
		// The handshake is over: each side knows the other's window.
		ep.snd.sndWnd = ep.peer.advertise()
		ep.snd.maxWnd = ep.snd.sndWnd
		// Frames for ep arrive on a queue of its host: the sender's core
		// on loopback, the flow's core with RSS, else core 0.
		if ep.nic.onMachine {
			// The sender's context (sendFrames): a queue of each core
			// of each side; timers run on the endpoint's own core.
			w.ctxQueues(ep.host)
			w.ctxQueues(ep.peer.host)
			if ep.peer.nic.shaped {
				w.machineSoftirq(ep.peer.host)
			}
			ep.rxq = ep.host.ctxQueues[ep.core]
			ep.rxCPU = &ep.host.cores[w.rxqs[ep.rxq].core]
			continue
		}
		qc := ep.host.irqCore
		switch {
		case ep.nic.loopback:
			qc = ep.peer.core
		case ep.host.cpu.RSS:
			qc = ep.conn % len(ep.host.cores)
		}
		if ep.host.queues[qc] < 0 {
			ep.host.queues[qc] = int32(len(w.rxqs))
			w.rxqs = append(w.rxqs, rxQueue{host: ep.host, core: qc, cpu: &ep.host.cores[qc]})
		}
		ep.rxq = ep.host.queues[qc]
		ep.rxCPU = &ep.host.cores[w.rxqs[ep.rxq].core]
	}
	return nil
}

// ctxQueues makes h's receive queues in its own context, one a core,
// for frames its endpoints send over veths of its machine: they run as
// softirq in the sending thread's local_bh_enable (veth_xmit, netif_rx,
// process_backlog), with h's costs, on the core that sent them.
func (w *world) ctxQueues(h *host) {
	if h.ctxQueues != nil {
		return
	}
	h.ctxQueues = make([]int32, len(h.cores))
	for i := range h.cores {
		h.ctxQueues[i] = int32(len(w.rxqs))
		w.rxqs = append(w.rxqs, rxQueue{host: h, core: i, cpu: &h.cores[i], softirq: true})
	}
}

// sockbufs sizes ep's socket buffers: SO_SNDBUF/SO_RCVBUF when the
// workload sets them and the stack grants them (sockbufPolicy.refuse),
// else the profile's defaults; a send buffer the workload sets does not
// autosize (FreeBSD: sosetopt clears SB_AUTOSIZE).
func (w *world) sockbufs(ep *endpoint, wl *config.Workload) {
	s := &ep.snd
	bufs := ep.prof.bufs
	s.sndBuf, ep.rcv.buf, s.sndAuto = bufs.defaults()
	for _, b := range []struct {
		name string
		set  int
		dst  *int64
		auto *bool
	}{{"SO_SNDBUF", wl.SndBuf, &s.sndBuf, &s.sndAuto}, {"SO_RCVBUF", wl.RcvBuf, &ep.rcv.buf, nil}} {
		if b.set <= 0 {
			continue
		}
		if note := bufs.refuse(b.name, int64(b.set), ep.host.name); note != "" {
			if ep.conn == 0 {
				w.notes = append(w.notes, note)
			}
			continue
		}
		*b.dst = int64(b.set)
		if b.auto != nil {
			*b.auto = false
		}
	}
	s.sndBuf, ep.rcv.buf = bufs.mssRound(s.sndBuf, ep.rcv.buf, ep.mss)
	ep.rcv.wscale = bufs.wscale(ep.rcv.buf)
	if wl.RcvBuf <= 0 {
		// SO_RCVBUF sets SOCK_RCVBUF_LOCK: no autotuning, and
		// tcp_connect_init clamps the window (and so the scale
		// tcp_select_initial_window picks) to the buffer; without it
		// the scale reaches tcp_rmem[2].
		if ep.rcv.autoMax = bufs.rcvAutoMax(); ep.rcv.autoMax > 0 {
			ep.rcv.wscale = bufs.wscale(max(ep.rcv.buf, ep.rcv.autoMax))
		}
	}
}

// resolveOffloads applies the declared offloads to a device that has every
// feature on (LRO off) and then the kernel's fix-ups (config.Requirement).
func resolveOffloads(o config.Offloads) config.OffloadSet {
	var s config.OffloadSet
	for _, f := range config.AllOffloads() {
		s = s.Set(f, f != offLRO)
	}
	for _, f := range config.AllOffloads() {
		if on, decl := o.Get(f); decl {
			s = s.Set(f, on)
		}
	}
	return s.Fix()
}

// offloadNotes says where the lab asked for an offload the model (or the
// kernel) does not hold.
func (w *world) offloadNotes() []string {
	var notes []string
	for _, n := range w.nics {
		if n.loopback {
			continue
		}
		if !n.host.prof.holds(offGRO) && n.off.Has(offGRO) {
			notes = append(notes, fmt.Sprintf("nic.%s: %s has no GRO; only lro coalesces on receive", n.name, n.host.prof.name))
		}
	}
	return notes
}

// onRead counts bytes an application read.
func (w *world) onRead(ep *endpoint, at, n int64) {
	w.stats.reads++
	w.stats.readBytes += n
	w.bin(at).readBytes += n
	if a := &ep.app; a.want > 0 && ep.rcv.readBytes >= a.want && ep.rcv.readBytes-n < a.want {
		w.doneRead++
		if w.doneRead == w.readers {
			w.finished = true
			w.finishAt = at
		}
	}
}

func (w *world) onTransaction(lat int64) {
	w.stats.txns++
	w.stats.lat.add(lat)
}

// countUnit counts what the client side's TCP hands the device layer
// (send_units): a TSO or software-GSO super-packet once, before the NIC or
// validate_xmit_skb cuts it — the kernel engine counts at net_dev_queue,
// the same place. The wire segments it becomes are data_packets.
func (w *world) countUnit(ep *endpoint, now, n, pc int64, retrans bool) {
	if !ep.client {
		return
	}
	st := &w.stats
	units, full := int64(1), int64(0)
	if n == ep.mss {
		full = 1
	}
	bucket := int((n + ep.mss - 1) / ep.mss)
	st.units += units
	st.unitBytes += n
	st.dataPackets += pc
	st.singleMSS += full
	if retrans {
		st.retrans += pc
	}
	for len(st.hist) < bucket {
		st.hist = append(st.hist, 0)
	}
	st.hist[bucket-1] += units
	bin := w.bin(now)
	bin.units += units
	bin.unitBytes += n
}

func (w *world) sampleCwnd(ep *endpoint, now int64) {
	if ep.idx == 0 {
		w.bin(now).cwnd = ep.snd.cc.segments(ep)
	}
}

// stats are the run's counters.
type stats struct {
	units, unitBytes, dataPackets, singleMSS, retrans int64
	hist                                              []int64
	stops                                             [numStopReasons]int64
	acks                                              [numAckKinds]int64
	timeouts, drops                                   int64
	refused                                           int64 // units the sender's own full queue refused (localCongestion)
	rxMissed                                          int64 // frames a full receive ring dropped (CPUProfile.RxRing)
	readBytes                                         int64
	reads                                             int64 // read calls that returned data (tests)
	wireSegs                                          int64 // data segments sent, both directions (benchmarks)
	events                                            int64 // events the loop ran (benchmarks)
	txns                                              int64
	lat                                               latencies
	bins                                              []bin
}

// latencies are a run's transaction latencies, ns, as a count per
// distinct value: a run's transactions take few distinct times (3 to 49
// in the example labs for 1.2 k to 154 k transactions), so a run keeps a
// small map where a list of every latency grew with the run, copied as
// it doubled, cloned and sorted at the end, and its memory scavenged
// (docs/engine.md, Speed). Its quantiles are the list's.
// A run of equal latencies in a row is counted beside the map (last,
// run) and goes into it when another latency comes or a quantile is asked:
// one compare a transaction instead of a map assignment while the latency
// repeats.
type latencies struct {
	n      int64           // transactions
	counts map[int64]int64 // transactions by latency, ns, but the current run
	last   int64           // latency of the current run, ns
	run    int64           // transactions in the current run, not yet in counts
}

// add counts one transaction of latency ns.
func (l *latencies) add(ns int64) {
	l.n++
	if ns == l.last && l.run > 0 {
		l.run++
		return
	}
	l.flush()
	l.last, l.run = ns, 1
}

// flush moves the current run into counts.
func (l *latencies) flush() {
	if l.run == 0 {
		return
	}
	if l.counts == nil {
		l.counts = map[int64]int64{}
	}
	l.counts[l.last] += l.run
	l.run = 0
}

// at is the latency of rank (n-1)*pct/100 (from 0) of the latencies in
// increasing order, as the sorted list's element at that index. Precondition:
// n > 0.
func (l *latencies) at(pct int64) int64 {
	l.flush()
	rank := (l.n - 1) * pct / 100
	vals := slices.Sorted(maps.Keys(l.counts))
	for _, v := range vals {
		if rank < l.counts[v] {
			return v
		}
		rank -= l.counts[v]
	}
	panic("sim: latency rank beyond the count")
}

// bin is one millisecond of the time series.
type bin struct {
	readBytes, unitBytes, units int64
	cwnd                        float64
}

func (w *world) bin(t int64) *bin {
	i := int(t / 1e6)
	for len(w.stats.bins) <= i {
		w.stats.bins = append(w.stats.bins, bin{})
	}
	return &w.stats.bins[i]
}

// result turns the counters into a WorkloadResult.
func (w *world) result(req engine.RunRequest, end int64) *result.WorkloadResult {
	wl := req.Workload
	st := &w.stats
	dur := float64(end) / 1e9
	if dur <= 0 {
		dur = 1e-9
	}
	cpuTx, cpuRx := w.cpuPct(end)
	m := map[string]float64{}
	for _, n := range result.Names() {
		m[n] = 0
	}
	m[result.MetricBytes] = float64(st.readBytes)
	m[result.MetricDurationS] = dur
	m[result.MetricCPUTxPct] = cpuTx
	m[result.MetricCPURxPct] = cpuRx
	m[result.MetricDataPackets] = float64(st.dataPackets)
	m[result.MetricRetransmits] = float64(st.retrans)
	counts := result.Counts{SendUnits: st.units, SendUnitBytes: st.unitBytes, SingleMSS: st.singleMSS}
	if wl.Kind == config.RR {
		counts.Transactions = st.txns
		if st.lat.n > 0 {
			m[result.MetricLatencyP50us] = float64(st.lat.at(50)) / 1e3
			m[result.MetricLatencyP99us] = float64(st.lat.at(99)) / 1e3
		}
	}
	// Model-only metrics: ACKs by kind and the mean congestion window of
	// the first connection, in segments.
	for k := range numAckKinds {
		m[result.MetricAcks(k.String())] = float64(st.acks[k])
	}
	m[result.MetricCwndMeanSegments] = w.meanCwnd(end)
	result.Derive(m, counts)

	res := &result.WorkloadResult{
		Scenario: req.Scenario.Name, Workload: wl.Name, Kind: string(wl.Kind),
		Repetition: req.Repetition, Engine: "sim",
		Stack: w.client.prof.name, MSS: int(w.eps[0].mss),
		CongestionControl: w.client.prof.cc.named(wl.CC),
		Offloads:          map[string]map[string]bool{},
		Metrics:           m,
		SendUnitHistogram: append([]int64{}, st.hist...),
		Series:            w.series(end),
		StopReasons:       map[string]int64{},
		Acks:              map[string]int64{},
		Notes:             w.notes,
		Provenance:        w.provenance(req.Scenario),
	}
	for _, n := range w.nics {
		o := map[string]bool{}
		for _, f := range config.AllOffloads() {
			if n.host.prof.holds(f) {
				o[f.String()] = n.off.Has(f)
			}
		}
		key := n.name
		if n.loopback {
			key = n.host.name + ".lo"
		}
		res.Offloads[key] = o
	}
	for r := stopCwnd; r < numStopReasons; r++ {
		res.StopReasons[r.String()] = st.stops[r]
	}
	for k := range numAckKinds {
		res.Acks[k.String()] = st.acks[k]
	}
	if st.drops > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d frames were tail-dropped by a full queue", st.drops))
	}
	if st.refused > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d send units found the sender's own queue full and were refused (NET_XMIT_DROP): local congestion, the connection entered CWR and sent them later", st.refused))
	}
	if st.rxMissed > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d frames found the receiving NIC's ring full and were dropped (rx_missed)", st.rxMissed))
	}
	if st.timeouts > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d retransmission timeouts", st.timeouts))
	}
	return res
}

// cpuPct is cpu_tx_pct and cpu_rx_pct: each host's busy time over the
// run in % of one core, summed over its cores (the receivers' value is
// their mean).
func (w *world) cpuPct(end int64) (cpuTx, cpuRx float64) {
	busy := func(h *host) float64 {
		var b int64
		for i := range h.cores {
			c := &h.cores[i]
			b += c.busy - max(0, c.last-end)
		}
		return float64(b) / float64(end) * 100
	}
	// Softirq work no thread ran (a shaped veth's, machineSoftirq) counts
	// half to each side, as the kernel engine splits it by the segments
	// each side sent and received, which are equal for a connection.
	soft := func(h *host) float64 {
		if h.machine == nil || h.machine.soft == nil {
			return 0
		}
		return busy(h.machine.soft) / 2
	}
	cpuTx = busy(w.client) + soft(w.client)
	for _, h := range w.servers {
		cpuRx += busy(h) + soft(h)
	}
	cpuRx /= float64(len(w.servers))
	return cpuTx, cpuRx
}

// meanCwnd is the time-average of the first connection's cwnd over the
// run, in segments (each millisecond holds the last value seen).
func (w *world) meanCwnd(end int64) float64 {
	n := int((end + 1e6 - 1) / 1e6)
	if n == 0 {
		return 0
	}
	var sum, cw float64
	for i := 0; i < n; i++ {
		if i < len(w.stats.bins) && w.stats.bins[i].cwnd > 0 {
			cw = w.stats.bins[i].cwnd
		}
		sum += cw
	}
	return sum / float64(n)
}

// series folds the millisecond bins into samples: one per second for runs
// of 10 s or more, else 100 ms (1 s or more), 10 ms (100 ms or more) or
// 1 ms, so a short run still shows its shape.
func (w *world) series(end int64) []result.Sample {
	step := int64(1000)
	switch {
	case end < 100e6:
		step = 1
	case end < 1e9:
		step = 10
	case end < 10e9:
		step = 100
	}
	n := int((end + 1e6 - 1) / 1e6)
	bins := w.stats.bins
	out := []result.Sample{}
	cwnd := 0.0
	for start := 0; start < n; start += int(step) {
		var rb, ub, u int64
		stop := min(start+int(step), n)
		for i := start; i < stop && i < len(bins); i++ {
			rb += bins[i].readBytes
			ub += bins[i].unitBytes
			u += bins[i].units
			if bins[i].cwnd > 0 {
				cwnd = bins[i].cwnd
			}
		}
		secs := float64(stop-start) / 1e3
		if stop == n {
			secs = float64(end-int64(start)*1e6) / 1e9
		}
		s := result.Sample{T: math.Min(float64(stop)/1e3, float64(end)/1e9), CwndSegments: cwnd}
		if secs > 0 {
			s.ThroughputBps = float64(rb) * 8 / secs
		}
		if u > 0 {
			s.SendUnitBytes = float64(ub) / float64(u)
		}
		out = append(out, s)
	}
	return out
}
