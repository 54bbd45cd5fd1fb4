package sim

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// CPUProfile is the cost of each event on one host, in nanoseconds of one
// core. A profile describes a machine (CPU, memory, chipset and driver), not
// a stack: the same profile runs any stack profile.
type CPUProfile struct {
	Name        string
	Description string
	Cores       int // cores when the host does not say

	Syscall float64 // one write/read/sendfile call: entry, socket lock, tcp_sendmsg/tcp_recvmsg bookkeeping
	// ReadWait is a read that empties the receive queue, beyond its
	// Syscall: the reader's next read finds nothing (EAGAIN) and its
	// poll sleeps until data comes (the calls, the sleep and the
	// wake-up on the reader's side).
	ReadWait    float64
	CopyPerByte float64 // one byte copied between user and kernel (skb_copy_to_page, skb_copy_datagram_iovec)
	PagePerByte float64 // one byte of sendfile: page reference and frag setup, no copy (do_tcp_sendpages)

	StackPerSkb   float64 // one skb through tcp_transmit_skb and ip_queue_xmit
	DriverPerUnit float64 // one send unit at the driver: descriptors and doorbell (hard_start_xmit)
	GSOPerSeg     float64 // one segment cut in software by skb_segment, plus its own trip through the driver
	TxCompletion  float64 // one send unit freed after the NIC sent it (TX completion in softirq)
	CsumPerByte   float64 // one byte checksummed by the CPU (no tx_csum, or no rx_csum on receive)
	Divide        float64 // one integer divide by the MSS in tcp_current_mss/tcp_set_skb_tso_segs (seed 004's modulo)

	AckRx float64 // one ACK processed by tcp_ack: clean the retransmit queue, congestion control
	AckTx float64 // one pure ACK built and sent by tcp_send_ack

	Interrupt  float64 // one interrupt and NAPI poll entry (hardirq + softirq)
	RxPerFrame float64 // one frame taken off the receive ring: skb allocation, DMA unmap
	RxPerSkb   float64 // one skb (after GRO/LRO) through ip_rcv and tcp_v4_rcv
	GROMerge   float64 // one frame merged into a GRO/LRO skb

	// IRQDelay is the NIC's interrupt moderation: the first frame into an
	// idle receive queue raises the interrupt this many ns later, so frames
	// of one burst are taken by one poll.
	IRQDelay float64
	// BusPerUnit is the bus time of one DMA transfer beyond its bytes
	// (descriptor fetch and write-back, PCI-X split transactions), ns. Only
	// used when the host has a `bus` limit.
	BusPerUnit float64
	// BusPerBuffer is the bus time of each DMA buffer of a transfer
	// beyond its bytes (a descriptor of its own and a read of its own),
	// ns: a unit of k buffers (skbLayout) costs BusPerUnit +
	// k·BusPerBuffer. Only used when the host has a `bus` limit.
	BusPerBuffer float64
	// RxRing is the receive ring in frames: a frame that finds it full
	// is dropped (rx_missed). 0 = unlimited.
	RxRing int
	// RSS spreads receive queues over the cores by flow (multi-queue NICs);
	// without it every interrupt lands on core 0.
	RSS bool
	// Schedulers are the scheduler models a host of this machine may
	// run, by name (a host's `scheduler`: wake-up latency and
	// context-switch cost of sleeping threads, sched.go). A host that
	// names none ("none", the default) runs FIFO cores: a woken thread
	// runs at once, for free. It stays the last field
	// (CPUProfile.hashText).
	Schedulers []Scheduler
}

// builtinCPUProfiles are the named `cpu` profiles. Calibration of each is
// in docs/engine.md.
func builtinCPUProfiles() []CPUProfile {
	opteron := CPUProfile{
		Name:        "opteron-2005",
		Description: "4-way 2.x GHz Opteron with a PCI-X 10GbE NIC (seed 001 sender); calibrated on the TSO-off rows",
		Cores:       4,
		Syscall:     1500, CopyPerByte: 1.5, PagePerByte: 0.05,
		StackPerSkb: 2500, DriverPerUnit: 1500, GSOPerSeg: 1200, TxCompletion: 700, CsumPerByte: 0.8,
		AckRx: 2500, AckTx: 1500,
		Interrupt: 3000, RxPerFrame: 1200, RxPerSkb: 1800, GROMerge: 300,
		IRQDelay: 15000,
		// The bus overhead of a one-buffer frame, 3000 ns, split into a
		// transfer's (descriptor list, doorbell, completion) and a DMA
		// buffer's (a read request of its own on PCI-X): a starting
		// point, which examples/neterion-2005 and super-tso-v2 fit.
		BusPerUnit: 2500, BusPerBuffer: 500,
	}
	// The receivers are the same Opterons, two of them. Their receive
	// path (no LRO, an older NIC) may cost more per frame; the seed gives
	// no figure of the receivers, so these are the sender's values and a
	// lab that needs them fits them (examples/neterion-2005 does, to the
	// one row they bind).
	opteronRx := opteron
	opteronRx.Name = "opteron-2005-rx"
	opteronRx.Description = "dual 2.x GHz Opteron receiver of seed 001 (no LRO); examples/neterion-2005 fits its receive cost to the TSO-on MTU 1500 row (the seed gives no receiver figure)"
	opteronRx.Cores = 2
	return []CPUProfile{
		opteron,
		opteronRx,
		{
			Name:        "xeon-2008",
			Description: "2008 Xeon (Core microarchitecture), as in seeds 002 and 004",
			Cores:       4,
			Syscall:     700, CopyPerByte: 0.5, PagePerByte: 0.02,
			StackPerSkb: 1000, DriverPerUnit: 600, GSOPerSeg: 350, TxCompletion: 300, CsumPerByte: 0.35, Divide: 40,
			AckRx: 900, AckTx: 700,
			Interrupt: 1500, RxPerFrame: 500, RxPerSkb: 900, GROMerge: 120,
			IRQDelay: 20000, BusPerUnit: 500,
		},
		{
			Name:        "xeon-2016",
			Description: "2016 Xeon with an ixgbe-class 10GbE NIC, as in seed 003",
			Cores:       8,
			Syscall:     400, CopyPerByte: 0.25, PagePerByte: 0.01,
			StackPerSkb: 600, DriverPerUnit: 350, GSOPerSeg: 200, TxCompletion: 150, CsumPerByte: 0.2,
			AckRx: 500, AckTx: 400,
			Interrupt: 1000, RxPerFrame: 250, RxPerSkb: 600, GROMerge: 60,
			IRQDelay: 8000, BusPerUnit: 200,
		},
		{
			Name:        "node-2016",
			Description: "the FreeBSD 10.2 nodes of seed 003 (10 GbE, one iperf stream at ~2.7 Gb/s); calibrated on that throughput",
			Cores:       4,
			Syscall:     500, CopyPerByte: 0.25, PagePerByte: 0.02,
			StackPerSkb: 800, DriverPerUnit: 400, GSOPerSeg: 300, TxCompletion: 200, CsumPerByte: 0.4,
			AckRx: 600, AckTx: 900,
			Interrupt: 2000, RxPerFrame: 1500, RxPerSkb: 2200, GROMerge: 150,
			IRQDelay: 3000, BusPerUnit: 300,
			Schedulers: []Scheduler{c1Idle},
		},
		withOwnSchedulers(modern),
	}
}

// withOwnSchedulers is p with a copy of its Schedulers: a caller that
// changes a scheduler of builtinCPUProfiles' result (tests do) must not
// change the package's profile that every later engine reads.
func withOwnSchedulers(p CPUProfile) CPUProfile {
	p.Schedulers = slices.Clone(p.Schedulers)
	return p
}

// modern is a 2020s server core, the default for linux-6. The costs of
// the output path's steps that a veth of one machine has are this
// machine's kernel's (Linux 6.18 on the 2-core VM, session 10), measured
// per event by bench/kernel-costs/run.sh: perf record -a -g of cpu-clock
// around `tsolab test -engine kernel` in examples/kernel-calibration's
// cells, each sample put in the step of the innermost kernel function of
// its context that names one (docs/engine.md, The kernel as a source of
// truth, has the table and the runs). The others are hand-set starting
// points, not measurements (below).
var modern = CPUProfile{
	Name:        "modern",
	Description: "a 2020s server core; the default for linux-6; its output path's costs per unit, segment and ACK measured on this VM's Linux 6.18 (bench/kernel-costs)",
	Cores:       8,

	// Measured: bench/kernel-costs/run.sh, the TSO-off cells behind the
	// tbf (off_1500_2g: 2 runs, off_9000_2g: 4; session 10, BBR), each
	// run's figures in docs/engine.md. Session 13 measured them again
	// with CUBIC (the lab's cc; session 10's runs had the machine's BBR):
	// RUNS=1 bench/kernel-costs/run.sh tso=false,mtu=1500,rate=2gbit
	// tso=false,mtu=9000,rate=2gbit, 3 rounds under the namespace lock,
	// load 11.5-18.4, one MTU 1500 run left out for another lab's
	// segments; figures below as "CUBIC:" (MTU 1500 runs; MTU 9000 runs).

	// tcp_write_xmit through __dev_queue_xmit and TSQ's tasklet: 645
	// samples of the 6 runs over their 49.9 k units (the eBPF counter),
	// 3300 ns under BBR. CUBIC: 2367, 2319; 2031, 1460, 2016 ns a unit,
	// the median 2031 taken (unshaped the kernel spends 692 ns a unit
	// with TSO on and 758-1169 with it off: docs/engine.md).
	StackPerSkb: 2031,
	// skb_segment and the GSO callbacks: 219 and 229 ns a segment at MTU
	// 1500 (294-338 at 9000: a part per byte the model has not). CUBIC:
	// 196, 247; 349, 312, 378 (kept: MTU 1500's within the spread).
	GSOPerSeg: 224,
	// validate_xmit_skb, dev_hard_start_xmit, veth_xmit, __netif_rx: 55
	// and 60 ns a segment (the tbf's own 13-22 ns are not modelled).
	// CUBIC: 52, 48; 110, 80, 107 (kept).
	DriverPerUnit: 57,
	// The skb's release: tcp_wfree (ip_rcv_core's skb_orphan), the GSO
	// skb's consume_skb, the reader's frees: 93 and 82 ns a segment.
	// CUBIC: 82, 69; 150, 125, 173 (kept).
	TxCompletion: 87,
	// __tcp_send_ack, whole: 35 samples of the 6 runs over their 64.7 k
	// pure ACKs (tcp:tcp_probe with data_len 0), so about ±17%. CUBIC:
	// 245, 113; 108, 141, 93 (kept).
	AckTx: 137,
	// The reader's read and poll calls per poll (the read that finds
	// nothing, the poll's sleep and wake-up, and the data read, whose own
	// call is `syscall`), CUBIC: 2803, 3275; 2479, 2307, 2575 ns; the
	// median, 2575, less `syscall`'s 250. (tcp_ack, whole, CUBIC: 649,
	// 735; 753, 1041, 1052 ns an ACK; `ack_rx` is fitted.)
	ReadWait: 2325,

	// Hand-set starting points, not measurements: the calls, the copy,
	// the receive path and the ACK's processing (examples/kernel-calibration
	// fits copy_per_byte, rx_per_skb and ack_rx), the checksum (a veth
	// with tx_csum computes none), and a NIC's (interrupt, ring, GRO,
	// moderation, bus), which a veth has not.
	Syscall: 250, CopyPerByte: 0.1, PagePerByte: 0.005, CsumPerByte: 0.1,
	AckRx: 300, RxPerSkb: 400,
	Interrupt: 600, RxPerFrame: 150, GROMerge: 40, IRQDelay: 5000, BusPerUnit: 100, RSS: true,
	// This VM's scheduler, measured (below).
	Schedulers: []Scheduler{vmHalt},
}

// c1Idle is a scheduler of seed 003's nodes (`scheduler = "c1-idle"`):
// FreeBSD 10.2's ULE on a 2016 Xeon (Haswell/Broadwell-EP) whose idle
// cores sit in C1. The seed measured no latency, so the distribution is
// an assumption, set from hardware facts before the model was run with
// it, and not tuned to any seed figure: a thread woken
// on an idle core waits at least for the core to leave C1 (assumed to be
// the deepest idle state the nodes used, hw.acpi.cpu.cx_lowest), whose exit
// latency on these cores is 2 us (Linux drivers/idle/intel_idle.c, the
// Haswell and Broadwell server tables: C1 2 us, C1E 10 us); C1E, which
// firmware often auto-promotes C1 to, takes 10 us; the IPI and ULE's
// sched_add/mi_switch add about a microsecond. So: a floor of 2 us, a
// median of 4 us, and C1E plus the switch (~11 us) at the 95th
// percentile (sigma 0.6), cut at 50 us. The context switch itself
// (cpu_switch and the cache refill of a small working set) is assumed at
// 1 us, the order lmbench's lat_ctx gives on such cores.
//
// A core pays that exit only once it is in C1. ULE's idle thread
// (sys/kern/sched_ule.c of FreeBSD 10, sched_idletd) first spins
// sched_idlespins (10000) iterations of cpu_spinwait checking tdq_load
// when its core switched more than sched_idlespinthresh (2 * max(10000,
// 6 * hz) / stathz = 157) times in this and the last stathz tick, as a
// stream's threads, woken every few microseconds, always have; only
// then does cpu_idle enter MWAIT C1 (sys/amd64/amd64/machdep.c,
// cpu_idle_mwait). A thread woken on a spinning core runs at once,
// without an IPI (tdq_notify, cpu_idle_wakeup). The spin is 10000
// PAUSEs of about 10 cycles each (Intel's optimization manual: "about
// 10 cycles" before Skylake) at an assumed 2.5 GHz: 40 us. Not tuned:
// seed 003's runs are the same send for send from 20 us of spin up, and
// hold issue 11's target from 5 us up (TestSeed003IdleSpin).
var c1Idle = Scheduler{
	Name:          "c1-idle",
	Source:        "assumed: floor C1 exit 2 us, p95 C1E exit 10 us + switch (intel_idle.c, Haswell/Broadwell-EP); switch 1 us; ULE idle spin 10000 PAUSEs, 40 us",
	WakeLatency:   LogNormal{Median: 4000, Sigma: 0.6, Min: 2000, Max: 50000},
	ContextSwitch: 1000,
	IdleSpin:      40000,
}

// vmHalt is the scheduler of the 2-vCPU Firecracker VM that
// examples/kernel-calibration's kernel.json was measured on (`scheduler =
// "vm-halt"`, on `modern`): Linux 6.18's EEVDF in a guest whose idle
// vCPUs halt at once (cpuidle haltpoll, guest_halt_poll_ns=0, nested
// virtualisation), so a thread woken on the other vCPU runs only after
// the waker's IPI has gone through the hypervisor and the halted vCPU has
// been resumed. Both figures are measured, not fitted (bench/wakeup,
// session 10, load 5-13): the wake-to-run delay, from sched_waking
// (try_to_wake_up) to the sched_switch onto the thread, of two threads
// ping-ponging a byte over pipes on the two vCPUs (perf record -a,
// 20000 round trips a run): median 16.4-17.2 us in the calmer runs, 5th
// percentile 15.0-15.3 us, 95th 22-26 us, 99th 39-60 us; and a context
// switch, half a round trip of the two threads on one vCPU less half
// of one thread's same four syscalls (lmbench's lat_ctx): 581-640 ns;
// and the waker's part, the write that wakes the thread on the other
// vCPU (its IPI traps to the hypervisor), median 10.1-11.9 us against
// about 0.15 us for a write that wakes no one.
var vmHalt = Scheduler{
	Name:          "vm-halt",
	Source:        "measured (bench/wakeup, session 10): wake-to-run across vCPUs median 17 us, p5 15 us, p95 24 us; context switch 0.6 us",
	WakeLatency:   LogNormal{Median: 17000, Sigma: 0.21, Min: 8000, Max: 60000},
	ContextSwitch: 600,
	Migrate:       true,
}

// schedulerNone is the `scheduler` value of a host without a scheduler
// model (FIFO cores), and the default.
const schedulerNone = "none"

// scheduler is the profile's scheduler of that name, nil for "none" (or
// ""): FIFO cores.
func (p *CPUProfile) scheduler(name string) (*Scheduler, error) {
	if name == "" || name == schedulerNone {
		return nil, nil
	}
	names := []string{schedulerNone}
	for i := range p.Schedulers {
		if p.Schedulers[i].Name == name {
			return &p.Schedulers[i], nil
		}
		names = append(names, p.Schedulers[i].Name)
	}
	return nil, fmt.Errorf("cpu profile %s has no scheduler %q: use %s", p.Name, name, quoteList(names))
}

// quoteList is names quoted, joined by commas and a final "or".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// cpuProfile finds a profile by name among the options' profiles.
func (e *Engine) cpuProfile(name string) (CPUProfile, error) {
	for _, p := range e.cpus {
		if p.Name == name {
			return p, nil
		}
	}
	names := make([]string, 0, len(e.cpus))
	for _, p := range e.cpus {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return CPUProfile{}, fmt.Errorf("unknown cpu profile %q: use one of %s", name, strings.Join(names, ", "))
}

// core is one CPU core as a FIFO server of work.
type core struct {
	free int64 // virtual time the core finishes the work queued on it, ns
	busy int64 // work charged through this host's view of it, ns (cpu_tx_pct/cpu_rx_pct)
	last int64 // when the last work charged through this view ends, ns
	id   int   // its index among the host's cores
	// lane is its wait lane in the event queue, shared with its mates
	// (eventQueue.pushWait); -1: none.
	lane int8
	// mates are the same core as the other hosts of one machine see it
	// (config.Host.CoresOf): they share its free time, each counts its
	// own busy time.
	mates []*core
	// lastHold is the latest turn held on it (holdTurn), on a core only
	// applications charge or a guarded one (holders).
	lastHold qent
	// holders are the endpoints whose turns a guarded core holds: one
	// that a receive queue or interrupts charge too (unholdGuarded);
	// listed: it is in world.heldOn.
	holders []*endpoint
	listed  bool
	// heldBusy is the world's flag (world.heldBusy) a charge sets when
	// it makes a listed core busy past its first held turn; set when
	// the core is listed (tryHold).
	heldBusy *bool
	// firstHold is the first of a listed guarded core's held turns still
	// to come, when it was last looked at (unholdGuarded).
	firstHold qent
}

// begin returns the time work submitted at now can start.
func (c *core) begin(now int64) int64 {
	if c.free < now {
		c.free = now
		c.sync()
	}
	return c.free
}

// charge queues cost ns of work after whatever is queued and returns the
// time it completes.
func (c *core) charge(now int64, cost float64) int64 {
	ns := int64(cost + 0.5)
	free := max(c.free, now) + ns // begin's, whose sync the one below makes redundant
	c.free, c.last = free, free
	c.busy += ns
	if c.listed && free > c.firstHold.at {
		*c.heldBusy = true
	}
	if len(c.mates) > 0 {
		c.sync()
	}
	return free
}

// doneAt is when work of cost queued at now would end: what charge
// would return, charging nothing.
func (c *core) doneAt(now int64, cost float64) int64 {
	return max(c.free, now) + int64(cost+0.5)
}

// sync gives the core's mates its free time.
func (c *core) sync() {
	for _, m := range c.mates {
		m.free = c.free
	}
}

// shareCores makes h run on owner's cores: each of h's cores becomes a
// mate of the owner's and of the other hosts' already on them.
func shareCores(h, owner *host) {
	for i := range h.cores {
		o := &owner.cores[i]
		c := &h.cores[i]
		for _, m := range append([]*core{o}, o.mates...) {
			m.mates = append(m.mates, c)
			c.mates = append(c.mates, m)
		}
	}
}
