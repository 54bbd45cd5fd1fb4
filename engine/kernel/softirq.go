package kernel

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/engine/kernel/devqueue"
)

// softirqVec is a softirq vector, numbered as the kernel's
// include/linux/interrupt.h numbers them (the vec_nr of the
// irq:softirq_entry and irq:softirq_exit tracepoints).
type softirqVec int

const (
	vecHI softirqVec = iota
	vecTimer
	vecNetTx
	vecNetRx
	vecBlock
	vecIRQPoll
	vecTasklet
	vecSched
	vecHRTimer
	vecRCU
	nrSoftirqs
)

// String is the vector's name as /proc/softirqs prints it.
func (v softirqVec) String() string {
	names := [...]string{"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"}
	if v >= 0 && v < nrSoftirqs {
		return names[v]
	}
	return fmt.Sprintf("softirqVec(%d)", int(v))
}

// labVecs are the vectors whose time outside the workers' threads is
// the lab's network work: NET_TX (a qdisc run, the tbf watchdog's
// __netif_schedule), NET_RX (the veth peer's backlog: the receive path,
// the ACKs it sends and the transmits they clock out), TASKLET (TCP
// Small Queues' tsq tasklet, which sends what a freed skb let go),
// TIMER (TCP's delayed ACK, retransmission and probe timers) and
// HRTIMER (a paced socket's pacing timer, tcp_pace_kick, which sends).
// TIMER and HRTIMER carry the machine's other timers too: 1 ms of TIMER
// and no HRTIMER softirq in 3 s of this 2-core VM without a lab. An
// HRTIMER softirq outside the workers that expired network timers of
// other namespaces only is not counted, one of the lab's only counts
// whole (softirqowner.go); one that expired no network timer, and every
// TIMER softirq, goes by the lab's share of the packets.
var labVecs = []softirqVec{vecNetTx, vecNetRx, vecTasklet, vecTimer, vecHRTimer}

// softirqClass is what a softirq interrupted, which decides whose CPU
// time the kernel charged it to (this kernel, like most builds, has no
// CONFIG_IRQ_TIME_ACCOUNTING: softirq time counts as the interrupted
// task's run time).
type softirqClass int

const (
	// classWorker is a worker's thread while it is metered: a thread
	// named the run's workerName (see workerName), in this process or
	// in an agent's on the same kernel. Its softirq time is in its
	// thread CPU time already.
	classWorker softirqClass = iota
	// classIdle is the idle task (pid 0): no process is charged.
	classIdle
	// classOther is any other task: another process, ksoftirqd, a
	// kworker, this process's other threads (the Go runtime's, the
	// sampler's).
	classOther
	// classLab is a softirq on the idle task or another task that
	// received only the lab's packets or expired only the lab's network
	// timers (the owner programs: softirqowner.go): the lab's, whatever
	// the share of the machine's packets.
	classLab
	// classForeign is a softirq on the idle task or another task that
	// received only other namespaces' packets or expired only other
	// namespaces' network timers: another job's, never counted.
	classForeign
	nrClasses
)

func (c softirqClass) String() string {
	switch c {
	case classWorker:
		return "the workers' threads"
	case classIdle:
		return "idle"
	case classOther:
		return "other tasks"
	case classLab:
		return "the lab's only"
	case classForeign:
		return "others' only"
	}
	return fmt.Sprintf("softirqClass(%d)", int(c))
}

// softirqSpan is the time a CPU spent in softirqs of one vector and
// class, from softirq_entry to softirq_exit, and how many ran.
type softirqSpan struct {
	Time  time.Duration
	Count uint64
}

// softirqTimes is the meter's totals over the CPUs, by vector and class.
type softirqTimes [nrSoftirqs][nrClasses]softirqSpan

// sub is t - a, vector by vector.
func (t softirqTimes) sub(a softirqTimes) softirqTimes {
	for v := range t {
		for c := range t[v] {
			t[v][c].Time -= a[v][c].Time
			t[v][c].Count -= a[v][c].Count
		}
	}
	return t
}

// outside is the time of vecs that ran outside the workers' threads
// in softirqs whose owner the meter could not tell: to be scaled by the
// lab's share of the packets.
func (t softirqTimes) outside(vecs []softirqVec) time.Duration {
	return t.sum(vecs, classIdle, classOther)
}

// sum is the time of vecs in the classes cs.
func (t softirqTimes) sum(vecs []softirqVec, cs ...softirqClass) time.Duration {
	var d time.Duration
	for _, v := range vecs {
		for _, c := range cs {
			d += t[v][c].Time
		}
	}
	return d
}

// count is the softirqs of vector v the meter saw, in every class.
func (t softirqTimes) count(v softirqVec) uint64 {
	var n uint64
	for _, s := range t[v] {
		n += s.Count
	}
	return n
}

// The meter's map value, one per CPU, in 64-bit words: the open
// softirq's entry time (0 = none) and vector, the lab's and others'
// packets and timers the owner programs saw in it, the device of the
// last packet they looked at and the class of the task it interrupted
// (classWorker, classIdle or classOther), then a time (ns) and a count
// for every vector and class.
const (
	sirqEntry     = 0
	sirqEntryVec  = 1
	sirqLab       = 2
	sirqForeign   = 3
	sirqLastDev   = 4
	sirqClass     = 5
	sirqSpans     = 6
	sirqValueWord = sirqSpans + int(nrSoftirqs)*int(nrClasses)*2
)

// softirqMeter times every softirq on every CPU with two raw tracepoint
// programs, on irq:softirq_entry and irq:softirq_exit, into a per-CPU
// array (no atomics: softirqs do not nest on a CPU), by vector and by
// what they interrupted (softirqClass, from the current task's pid and
// its comm, bpf_get_current_comm, against the workers' thread name,
// noted at the entry). Its programs took 80-105 ns at a softirq's
// entry and 95-115 ns at its exit (BenchmarkSoftirqMeter on the 2-core
// VM at load 11-20; 109-112 and 98-105 ns since the entry reads the
// comm, at load 9-23): 0.5-2% of a core at the 30-90 k softirqs a
// second the kernel-calibration and tso-basics runs logged. The owner
// programs (softirqowner.go) took 46-107 ns a packet (skb) and 72-81 ns
// a timer (hrtimer) from a sender outside the workers' threads, and the
// skb program 51-136 ns a packet from a sender named as the workers are
// (its loopback ACKs still run in the unnamed receiver's thread; every
// figure includes the statistics' own clock reads), load 5-23.
type softirqMeter struct {
	m      *ebpf.Map
	labMap *ebpf.Map // the lab's namespaces, for the owner programs
	progs  []*ebpf.Program
	tps    []string // the tracepoint each of progs attaches to
	// ownerErr says why the owner programs did not run (nil: they did).
	ownerErr error

	mu    sync.Mutex // guards the fields below: sample's and read's
	links []link.Link
	// on is how long the programs were attached before since, since when
	// they were last attached (zero: detached, links nil).
	on    time.Duration
	since time.Time
	// stop ends sample, which closes sampled; sampleErr is why it
	// stopped early (the programs could not be attached again).
	stop      chan struct{}
	sampled   chan struct{}
	sampleErr error
}

// The meter runs in windows: attached for sirqWindow, then detached for
// a gap drawn at random between sirqGapMin and sirqGapMax, so for an
// eighth of the run on average (sample). Attached the whole run it took
// 7% of one stream's throughput where the machine ran fast (its
// programs and the raw tracepoint's dispatch at each of 250-300 k
// softirqs a second; docs/status.md, issue 16, session 19); in windows
// it costs an eighth of that, plus the windows' edges: taking a program
// off its tracepoint and putting it back costs 0.2-0.5 ms of CPU at
// each edge here (the kernel patches the tracepoint's call site;
// BenchmarkSoftirqMeterWindow, two programs: 0.9-1.9 ms a window), 1.9-3.8
// ms a window for the four programs, 0.3-0.5% of a core at 1.4 windows
// a second. What the windows timed is scaled by the run's time over
// theirs (outsideWorkers): they fall at random against the run's
// softirqs, so the scaled time is the run's, with the error of a sample
// of windows (TestSoftirqMeterWindows). A softirq across a window's edge
// is not timed: at most one a CPU an edge, against the ~20 us a softirq
// took on average in a one-connection stream (0.30 s of NET_RX in the
// 16168 softirqs a bench run's windows timed), under 0.1% of a 100 ms
// window.
const (
	sirqWindow = 100 * time.Millisecond
	sirqGapMin = 400 * time.Millisecond
	sirqGapMax = 1000 * time.Millisecond
)

// openSoftirqMeter loads and attaches the meter, which tells the
// workers' threads by their name, worker (see workerName), and, with
// the owner programs, the lab's packets and timers by their namespace,
// one of labNS (inode numbers; none: the owner programs do not run). It
// needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN); raw tracepoints
// need no tracefs. The owner programs failing leaves the meter running
// without them (ownerErr).
func openSoftirqMeter(worker threadName, labNS []uint64) (*softirqMeter, error) {
	m, err := ebpf.NewMap(&ebpf.MapSpec{
		Name:       "tsl_softirq",
		Type:       ebpf.PerCPUArray,
		KeySize:    4,
		ValueSize:  uint32(sirqValueWord * 8),
		MaxEntries: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("softirq meter: create the map: %w", err)
	}
	s := &softirqMeter{m: m}
	if len(labNS) == 0 {
		s.ownerErr = errors.New("the lab's namespaces are not known (a socket in the process's own namespace)")
	} else if s.ownerErr = s.attachOwners(labNS); s.ownerErr != nil {
		s.closeOwners()
	}
	for _, tp := range []struct {
		name  string
		insns asm.Instructions
	}{
		{"softirq_entry", softirqEntryProgram(m.FD(), worker)},
		{"softirq_exit", softirqExitProgram(m.FD())},
	} {
		if err := s.attach(tp.name, tp.insns); err != nil {
			s.close()
			return nil, fmt.Errorf("softirq meter: %w", err)
		}
	}
	s.since = time.Now()
	return s, nil
}

// closeOwners detaches and frees what attachOwners made, after it
// failed.
func (s *softirqMeter) closeOwners() {
	for _, l := range s.links {
		l.Close()
	}
	for _, p := range s.progs {
		p.Close()
	}
	if s.labMap != nil {
		s.labMap.Close()
	}
	s.links, s.progs, s.tps, s.labMap = nil, nil, nil, nil
}

// softirqEntryProgram notes the time and vector a softirq started on
// this CPU, and what it interrupted: classIdle for pid 0, classWorker
// for a thread named worker, classOther for any other. Registers: R6
// the vector, R7 this CPU's value. The comm is read on the stack at -24.
func softirqEntryProgram(mapFD int, worker threadName) asm.Instructions {
	insns := asm.Instructions{
		asm.LoadMem(asm.R6, asm.R1, 0, asm.DWord), // args[0]: vec_nr
		asm.JGE.Imm(asm.R6, int32(nrSoftirqs), "exit"),
	}
	insns = append(insns, sirqValue(mapFD)...)
	return append(insns,
		asm.Mov.Imm(asm.R1, 0),
		asm.StoreMem(asm.R7, sirqLab*8, asm.R1, asm.DWord),
		asm.StoreMem(asm.R7, sirqForeign*8, asm.R1, asm.DWord),
		asm.StoreMem(asm.R7, sirqLastDev*8, asm.R1, asm.DWord),
		// The idle task: pid (the low half) 0.
		asm.Mov.Imm(asm.R1, int32(classIdle)),
		asm.StoreMem(asm.R7, sirqClass*8, asm.R1, asm.DWord),
		asm.FnGetCurrentPidTgid.Call(),
		asm.LSh.Imm(asm.R0, 32),
		asm.JEq.Imm(asm.R0, 0, "time"),
		// A worker's thread: its comm is worker's 16 bytes.
		asm.Mov.Imm(asm.R1, int32(classOther)),
		asm.StoreMem(asm.R7, sirqClass*8, asm.R1, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.R10),
		asm.Add.Imm(asm.R1, -24),
		asm.Mov.Imm(asm.R2, int32(len(worker))),
		asm.FnGetCurrentComm.Call(),
		asm.JNE.Imm(asm.R0, 0, "time"),
		asm.LoadMem(asm.R1, asm.R10, -24, asm.DWord),
		asm.LoadImm(asm.R2, int64(binary.NativeEndian.Uint64(worker[:8])), asm.DWord),
		asm.JNE.Reg(asm.R1, asm.R2, "time"),
		asm.LoadMem(asm.R1, asm.R10, -16, asm.DWord),
		asm.LoadImm(asm.R2, int64(binary.NativeEndian.Uint64(worker[8:])), asm.DWord),
		asm.JNE.Reg(asm.R1, asm.R2, "time"),
		asm.Mov.Imm(asm.R1, int32(classWorker)),
		asm.StoreMem(asm.R7, sirqClass*8, asm.R1, asm.DWord),
		// The time last: what the programs above take is not timed.
		asm.FnKtimeGetNs.Call().WithSymbol("time"),
		asm.StoreMem(asm.R7, sirqEntry*8, asm.R0, asm.DWord),
		asm.StoreMem(asm.R7, sirqEntryVec*8, asm.R6, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("exit"),
		asm.Return(),
	)
}

// softirqExitProgram adds the time since this CPU's softirq_entry of the
// same vector to the vector's span of the class softirq_entry noted, or,
// outside the workers' threads, of classLab or classForeign where the
// owner programs saw packets or timers of the lab alone or of others
// alone. An exit without its entry (the meter attached in between) adds
// nothing. Registers: R6 the vector, then the class, R7 this CPU's
// value, R8 the time spent, R9 the span's index, vec*nrClasses + class.
func softirqExitProgram(mapFD int) asm.Instructions {
	insns := asm.Instructions{
		asm.LoadMem(asm.R6, asm.R1, 0, asm.DWord), // args[0]: vec_nr
		asm.JGE.Imm(asm.R6, int32(nrSoftirqs), "exit"),
	}
	insns = append(insns, sirqValue(mapFD)...)
	return append(insns,
		asm.LoadMem(asm.R8, asm.R7, sirqEntry*8, asm.DWord),
		asm.JEq.Imm(asm.R8, 0, "exit"),
		asm.Mov.Imm(asm.R2, 0),
		asm.StoreMem(asm.R7, sirqEntry*8, asm.R2, asm.DWord),
		asm.LoadMem(asm.R2, asm.R7, sirqEntryVec*8, asm.DWord),
		asm.JNE.Reg(asm.R2, asm.R6, "exit"),
		asm.FnKtimeGetNs.Call(),
		asm.Sub.Reg(asm.R0, asm.R8),
		asm.Mov.Reg(asm.R8, asm.R0),
		asm.Mov.Reg(asm.R9, asm.R6),
		asm.Mul.Imm(asm.R9, int32(nrClasses)),
		asm.LoadMem(asm.R6, asm.R7, sirqClass*8, asm.DWord),
		asm.JGE.Imm(asm.R6, int32(nrClasses), "exit"),
		asm.JEq.Imm(asm.R6, int32(classWorker), "span"),
		// Outside the workers: the lab's only or others' only, where
		// the owner programs saw packets or timers of one side alone.
		asm.LoadMem(asm.R1, asm.R7, sirqLab*8, asm.DWord),
		asm.LoadMem(asm.R2, asm.R7, sirqForeign*8, asm.DWord),
		asm.JNE.Imm(asm.R1, 0, "haslab"),
		asm.JEq.Imm(asm.R2, 0, "span"),
		asm.Mov.Imm(asm.R6, int32(classForeign)),
		asm.Ja.Label("span"),
		asm.JNE.Imm(asm.R2, 0, "span").WithSymbol("haslab"),
		asm.Mov.Imm(asm.R6, int32(classLab)),
		// The span's two words: time, count.
		asm.Add.Reg(asm.R9, asm.R6).WithSymbol("span"),
		asm.LSh.Imm(asm.R9, 4),
		asm.Add.Reg(asm.R9, asm.R7),
		asm.LoadMem(asm.R3, asm.R9, sirqSpans*8, asm.DWord),
		asm.Add.Reg(asm.R3, asm.R8),
		asm.StoreMem(asm.R9, sirqSpans*8, asm.R3, asm.DWord),
		asm.LoadMem(asm.R3, asm.R9, sirqSpans*8+8, asm.DWord),
		asm.Add.Imm(asm.R3, 1),
		asm.StoreMem(asm.R9, sirqSpans*8+8, asm.R3, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("exit"),
		asm.Return(),
	)
}

// sirqValue looks up this CPU's value (key 0) into R7, or goes to
// "exit". It uses the stack at -8.
func sirqValue(mapFD int) asm.Instructions {
	return devqueue.Key0Value(mapFD, -8, asm.R7, "exit")
}

// read sums the meter's spans over the CPUs, and says how long its
// programs have been attached since it opened.
func (s *softirqMeter) read() (softirqTimes, time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var t softirqTimes
	var perCPU [][sirqValueWord]uint64
	if err := s.m.Lookup(uint32(0), &perCPU); err != nil {
		return t, 0, fmt.Errorf("softirq meter: read the map: %w", err)
	}
	for _, v := range perCPU {
		for vec := range t {
			for c := range t[vec] {
				i := sirqSpans + (vec*int(nrClasses)+c)*2
				t[vec][c].Time += time.Duration(v[i])
				t[vec][c].Count += v[i+1]
			}
		}
	}
	on := s.on
	if !s.since.IsZero() {
		on += time.Since(s.since)
	}
	return t, on, nil
}

// detach takes the programs off their tracepoints; they stay loaded.
func (s *softirqMeter) detach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unlink()
	s.on += time.Since(s.since)
	s.since = time.Time{}
}

// unlink closes the links (closing a link the meter holds does not
// fail); s.mu is held.
func (s *softirqMeter) unlink() {
	for _, l := range s.links {
		l.Close()
	}
	s.links = nil
}

// reattach puts the programs back on their tracepoints. It first clears
// every CPU's open softirq: one that began in the last window and ended
// after it would otherwise pair its entry with the exit of a softirq
// that began before this one. No program runs while they are detached,
// so the clearing races with none.
func (s *softirqMeter) reattach() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var perCPU [][sirqValueWord]uint64
	if err := s.m.Lookup(uint32(0), &perCPU); err != nil {
		return fmt.Errorf("softirq meter: read the map: %w", err)
	}
	for i := range perCPU {
		perCPU[i][sirqEntry] = 0
	}
	if err := s.m.Update(uint32(0), perCPU, ebpf.UpdateExist); err != nil {
		return fmt.Errorf("softirq meter: clear the open softirqs: %w", err)
	}
	for i, p := range s.progs {
		l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: s.tps[i], Program: p})
		if err != nil {
			s.unlink()
			return fmt.Errorf("softirq meter: attach to %s again: %w", s.tps[i], err)
		}
		s.links = append(s.links, l)
	}
	s.since = time.Now()
	return nil
}

// sample runs the meter in windows (sirqWindow) with random gaps between
// them until stopSampling; the programs are attached when it starts.
func (s *softirqMeter) sample() {
	s.stop, s.sampled = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.sampled)
		window := time.NewTimer(sirqWindow)
		defer window.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-window.C:
			}
			s.detach()
			gap := sirqGapMin + rand.N(sirqGapMax-sirqGapMin)
			window.Reset(gap)
			select {
			case <-s.stop:
				return
			case <-window.C:
			}
			if err := s.reattach(); err != nil {
				s.sampleErr = err
				return
			}
			window.Reset(sirqWindow)
		}
	}()
}

// stopSampling ends sample, leaving the programs as they are; it returns
// why sample stopped early, if it did.
func (s *softirqMeter) stopSampling() error {
	if s.stop == nil {
		return nil
	}
	close(s.stop)
	<-s.sampled
	s.stop = nil
	return s.sampleErr
}

// close detaches the programs and frees them and the map; it returns
// the program runs the kernel skipped (recursion misses).
func (s *softirqMeter) close() (missed uint64) {
	s.stopSampling()
	var errs []error
	for _, l := range s.links {
		errs = append(errs, l.Close())
	}
	for _, p := range s.progs {
		if st, err := p.Stats(); err == nil {
			missed += st.RecursionMisses
		}
		errs = append(errs, p.Close())
	}
	if s.labMap != nil {
		errs = append(errs, s.labMap.Close())
	}
	errs = append(errs, s.m.Close())
	if err := errors.Join(errs...); err != nil {
		// Closing file descriptors the meter owns does not fail.
		panic(fmt.Sprintf("softirq meter: close: %v", err))
	}
	return missed
}

// parseProcSoftirqs sums each vector's count over the CPUs from
// /proc/softirqs (the kernel's kstat_softirqs, counted where the
// softirq_entry tracepoint fires).
func parseProcSoftirqs(s string) (counts [nrSoftirqs]uint64) {
	for _, line := range strings.Split(s, "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		name = strings.TrimSpace(name)
		for v := range nrSoftirqs {
			if v.String() != name {
				continue
			}
			for _, f := range strings.Fields(rest) {
				n, _ := strconv.ParseUint(f, 10, 64)
				counts[v] += n
			}
		}
	}
	return counts
}

// openSoftirqMeter starts the run's softirq meter, with the owner
// programs for the lab's namespaces when it knows them.
func (r *run) openSoftirqMeter() {
	inodes, err := nsInodes(r.ownerNamespaces())
	if err != nil {
		inodes = nil
	}
	r.sirq, r.sirqErr = openSoftirqMeter(r.worker, inodes)
	if r.sirq != nil && err != nil {
		r.sirq.ownerErr = err
	}
	if r.sirq != nil {
		r.sirq.sample()
	}
}

// closeSoftirqMeter stops the run's softirq meter, if it runs.
func (r *run) closeSoftirqMeter() {
	if r.sirq != nil {
		r.sirqOwnerErr = r.sirq.ownerErr
		r.sirqSampleErr = r.sirq.stopSampling()
		r.sirqMissed = r.sirq.close()
		r.sirq = nil
	}
}

// softirqNotes are the notes on the run's softirq accounting: the
// meter's (note), the runs it missed, or why it did not load.
func (r *run) softirqNotes(note string) []string {
	if r.sirqErr != nil {
		return []string{fmt.Sprintf("softirq meter: %v; cpu_tx_pct and cpu_rx_pct count the softirq time no thread ran and the ksoftirqd threads' instead, and miss softirqs that ran on other processes' threads", r.sirqErr)}
	}
	var notes []string
	if note != "" {
		notes = append(notes, note)
	}
	if r.sirqMissed > 0 {
		notes = append(notes, fmt.Sprintf("softirq meter: the kernel skipped its programs %d times (recursion)", r.sirqMissed))
	}
	if r.sirqSampleErr != nil {
		notes = append(notes, fmt.Sprintf("softirq meter: its windows stopped before the run's end (%v): the time after its last window is estimated from the windows before it", r.sirqSampleErr))
	}
	if r.sirqOwnerErr != nil {
		notes = append(notes, fmt.Sprintf("softirq meter: whose packets and timers a softirq handled was not read (%v): all of its time outside the workers' threads is scaled by the lab's share of the packets", r.sirqOwnerErr))
	}
	return notes
}

// labNamespaces are the namespaces of the sockets this run holds, or
// none when one of them is the process's own (its links carry the
// machine's other traffic too).
func (r *run) labNamespaces() []string {
	seen := map[string]bool{}
	var out []string
	add := func(ns string) bool {
		if ns == "" {
			return false
		}
		if !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
		return true
	}
	for _, c := range r.conns {
		if (c.client >= 0 && !add(c.ep.ClientNS)) || (c.server >= 0 && !add(c.ep.ServerNS)) {
			return nil
		}
	}
	return out
}

// ownerNamespaces are the namespaces of every endpoint of the job, both
// ends, held by this Worker or not (a Worker on the same kernel holds
// the others: its packets and timers are the lab's too), or none when
// one of them is the process's own.
func (r *run) ownerNamespaces() []string {
	var out []string
	for _, e := range r.eps {
		if e.ClientNS == "" || e.ServerNS == "" {
			return nil
		}
		out = append(out, e.ClientNS, e.ServerNS)
	}
	return out
}

// rxPackets sums the rx_packets of every link in the namespaces: the
// packets the kernel received for them, each once (a veth counts what
// its peer sent it, a loopback what it sent itself).
func rxPackets(nss []string) (uint64, error) {
	var n uint64
	for _, ns := range nss {
		err := inNamespace(ns, func() error {
			links, err := netlink.LinkList()
			if err != nil {
				return err
			}
			for _, l := range links {
				if st := l.Attrs().Statistics; st != nil {
					n += st.RxPackets
				}
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("interface counters in %s: %w", ns, err)
		}
	}
	return n, nil
}

// parseSoftnetProcessed reads the first column of /proc/net/softnet_stat
// (hexadecimal, one line a CPU): the packets __netif_receive_skb_core
// took on each CPU, in every namespace.
func parseSoftnetProcessed(s string) []uint32 {
	var out []uint32
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		v, _ := strconv.ParseUint(f[0], 16, 32)
		out = append(out, uint32(v))
	}
	return out
}

// threadName is a thread's comm as the kernel keeps it (TASK_COMM_LEN
// bytes, NUL-padded).
type threadName [16]byte

// workerName is what the run's workers call their threads while they
// are metered, so that the softirq meter tells them apart from every
// other thread, this process's or an agent's on the same kernel: "tsl"
// and 12 hex digits of a hash of what every Worker of the run shares
// (scenario, repetition, workload, endpoints), which names the
// namespaces of the lab (its -name).
func workerName(job Job) threadName {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00", job.Scenario, job.Repetition)
	if job.Workload != nil {
		fmt.Fprintf(h, "%s\x00", job.Workload.Name)
	}
	for _, e := range job.Endpoints {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00", e.Server, e.ClientNS, e.ServerNS, e.Addr)
	}
	var n threadName
	copy(n[:], fmt.Sprintf("tsl%x", h.Sum(nil)[:6]))
	return n
}

// getThreadName reads the calling thread's comm (PR_GET_NAME).
func getThreadName() threadName {
	var n threadName
	if err := unix.Prctl(unix.PR_GET_NAME, uintptr(unsafe.Pointer(&n[0])), 0, 0, 0); err != nil {
		// PR_GET_NAME reads the caller's own comm: it cannot fail.
		panic(fmt.Sprintf("prctl(PR_GET_NAME): %v", err))
	}
	return n
}

// setThreadName sets the calling thread's comm (PR_SET_NAME).
func setThreadName(n threadName) {
	if err := unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&n[0])), 0, 0, 0); err != nil {
		// PR_SET_NAME sets the caller's own comm: it cannot fail.
		panic(fmt.Sprintf("prctl(PR_SET_NAME): %v", err))
	}
}
