package devqueue

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
)

// Options say what to count.
type Options struct {
	// Ifindex and NetNS name the device: its interface index and
	// the inode number of its network namespace (what stat(2) of
	// /proc/PID/ns/net or /run/netns/NAME reports, the kernel's
	// ns.inum). Both are needed: every namespace has an lo of index 1.
	Ifindex int
	NetNS   uint64
	// DstPorts select the measured direction: TCP data to one of these
	// ports (the servers') are the send units; other packets on the
	// device count as Other. Empty = every port.
	DstPorts []uint16
	// MSS in bytes, for the single-MSS count and the histogram buckets.
	MSS int
	// Headers, when not nil, gets every TCP packet to or from a watched
	// port on the device as the device layer got it, before software
	// GSO: its headers (up to HeaderMax bytes from the MAC header), its
	// whole length and when it was queued, from per-CPU record rings the
	// program writes (see record.go and Sink). Packets from a watched port (the server's, which
	// leave by the sender's device only on loopback) are recorded, not
	// counted.
	Headers Sink
	// Ingress counts and records what the device receives, at its TCX
	// ingress hook (HookTCXIngress), instead of what it is handed to
	// send: the units are then the TCP data to DstPorts the device hands
	// up (a GRO skb is one unit of gso_segs segments, as a GSO skb is at
	// egress), and Headers gets them with their Ethernet header. There
	// is no tracepoint fallback: on a kernel without TCX Open fails with
	// an error that wraps ebpf.ErrNotSupported. With Headers as well
	// (a receiver's capture) the program only records: the send units,
	// their bytes, segments and histogram are not counted (zero in
	// Result), and RecordedData is the data packets to DstPorts.
	Ingress bool

	// tracepoint (tests only) counts at the tracepoint even where TCX
	// would do, so a kernel with TCX tests the fallback too.
	tracepoint bool
}

// Sink receives recorded packets, one at a time, in order, on the
// reader's goroutine, most of them when the counter stops (the reader
// leaves them in the rings, or spools them, until then: see drainAt):
// data is the headers (valid until Frame returns),
// wireLen the whole packet with its MAC header. A sink that returns an
// error gets no more packets; Stop returns the error. capture.Pcapng is
// one.
type Sink interface {
	Frame(ts time.Time, data []byte, wireLen int) error
}

// RingBytes is a sender's record rings (Options.Ingress false), all
// CPUs together: ~760k full records of Ethernet, IPv4 and TCP headers
// (88 bytes each; ~1.4 M short ones of 48 at TCX egress), where a 2 s
// run of examples/tso-basics records 70-290k send units with TSO off
// (30-60k under BBR).
const RingBytes = 64 << 20

// IngressRingBytes is a receiver's record rings: ~11 M records of its
// wire segments (48 bytes each with Ethernet, IPv4 and TCP timestamps
// as short records, 88 as full ones), so that the reader can leave
// those of a 2 s TSO-off run of examples/tso-basics at MTU 1500
// (2.1-2.6 M at 12.9-14.7 Gb/s here under BBR: 94-114 MB a CPU as full
// records, 55% of that short; 2.5-2.9 M at 15-21 Gb/s under CUBIC,
// session 13: ~70 MB a CPU short) in the rings until the run's
// measurements are taken (see drainAt). Making them takes ~100 ms (vmalloc'd and zeroed by the
// kernel), before the run. A receiver whose rings would take the
// process's rings past ringsMax, or that the kernel refuses the memory,
// gets RingBytes.
const IngressRingBytes = 512 << 20

// ringsMax bounds the memory of all the record rings of the process.
const ringsMax = 1 << 30

// ringsMade is the memory of the record rings of the process.
var ringsMade atomic.Int64

// newRings makes the record rings of a counter at ingress or egress,
// counted in ringsMade until they are closed, and warms them (see
// warm.go: 1.1 s for a receiver's 512 MB on this project's paravirtual
// guest, before the run).
func newRings(ingress bool) (*recordRing, error) {
	r, err := makeRings(ingress)
	if err != nil {
		return nil, err
	}
	if err := r.warm(); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// makeRings is newRings without the warming.
func makeRings(ingress bool) (*recordRing, error) {
	if ingress {
		if ringsMade.Add(IngressRingBytes) <= ringsMax {
			if r, err := newRecordRing(IngressRingBytes); err == nil {
				r.free = func() { ringsMade.Add(-IngressRingBytes) }
				return r, nil
			}
		}
		ringsMade.Add(-IngressRingBytes)
	}
	r, err := newRecordRing(RingBytes)
	if err != nil {
		return nil, err
	}
	ringsMade.Add(RingBytes)
	r.free = func() { ringsMade.Add(-RingBytes) }
	return r, nil
}

// Counter is a loaded and attached program with its map, from Open until
// Stop.
type Counter struct {
	mu   sync.Mutex // guards the fields below against Stop during Totals
	m    *ebpf.Map
	prog *ebpf.Program
	lnk  link.Link
	hook Hook
	mss  int
	rec  *recorder // nil without Options.Headers
}

// kernelBTF caches the parsed vmlinux BTF and the offsets it gives (the
// parse takes tens of milliseconds).
var kernelBTF = sync.OnceValues(func() (offsets, error) {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return offsets{}, fmt.Errorf("kernel BTF (/sys/kernel/btf/vmlinux): %w", err)
	}
	return loadOffsets(spec)
})

// Open loads the program for opts, attaches it (see attach) and starts
// counting. It must run on a thread in the device's network namespace
// (opts.NetNS): the TCX hook names the device by its index there. It
// fails when the thread is elsewhere, the kernel has no BTF, the process
// lacks CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN (or CAP_SYS_ADMIN), or
// the verifier refuses the program; the error says which.
func Open(opts Options) (*Counter, error) {
	if opts.Ifindex <= 0 || opts.NetNS == 0 || opts.NetNS > 1<<32-1 {
		return nil, fmt.Errorf("devqueue: need the device's ifindex and network namespace inode (got %d, %d)", opts.Ifindex, opts.NetNS)
	}
	if opts.MSS <= 0 {
		return nil, fmt.Errorf("devqueue: MSS must be positive (got %d)", opts.MSS)
	}
	off, err := kernelBTF()
	if err != nil {
		return nil, fmt.Errorf("devqueue: %w", err)
	}
	if opts.Ingress && opts.tracepoint {
		return nil, errors.New("devqueue: the tracepoint counts at egress only")
	}
	if opts.tracepoint {
		off.CastToKernCtx = 0
	}
	m, err := ebpf.NewMap(&ebpf.MapSpec{
		Name:       "tsl_units",
		Type:       ebpf.PerCPUArray,
		KeySize:    4,
		ValueSize:  valueWords * 8,
		MaxEntries: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("devqueue: create the counter map: %w", err)
	}
	var ring *recordRing
	var rec *recMaps
	if opts.Headers != nil {
		if ring, err = newRings(opts.Ingress); err != nil {
			m.Close()
			return nil, fmt.Errorf("devqueue: %w", err)
		}
		rec = ring.maps()
	}
	f := filter{Ifindex: uint32(opts.Ifindex), NetNS: uint32(opts.NetNS), Ports: opts.DstPorts, MSS: uint32(opts.MSS), Ingress: opts.Ingress}
	c := &Counter{m: m, mss: opts.MSS}
	if ring != nil {
		// Without the spool's memory (ENOMEM) the reader writes the
		// file as it reads, which takes more CPU time during the run
		// and captures the same.
		sp, _ := newSpool(SpoolBytes, spoolChunk)
		// The reader runs before the program can write.
		if c.rec, err = startRecorder(ring, opts.Headers, sp); err != nil {
			ring.close()
			m.Close()
			return nil, fmt.Errorf("devqueue: %w", err)
		}
	}
	c.hook, c.prog, c.lnk, err = attach(off, f, m.FD(), rec)
	if err != nil {
		if c.rec != nil {
			c.rec.stop()
		}
		m.Close()
		return nil, fmt.Errorf("devqueue: %w", err)
	}
	return c, nil
}

// attach loads the program and attaches it at TCX egress of the device
// (f.Ifindex in the calling thread's namespace, which must be f.NetNS);
// on a kernel without TCX or without the kfunc the TCX program needs, on
// the net_dev_queue tracepoint instead. With f.Ingress, at TCX ingress,
// with no fallback.
func attach(o offsets, f filter, mapFD int, rec *recMaps) (Hook, *ebpf.Program, link.Link, error) {
	// The namespace check and the attach on one thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var st unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &st); err != nil {
		return 0, nil, nil, fmt.Errorf("this thread's network namespace: %w", err)
	}
	if st.Ino != uint64(f.NetNS) {
		return 0, nil, nil, fmt.Errorf("Open runs in network namespace %d, want the device's %d: call it on a thread in that namespace", st.Ino, f.NetNS)
	}
	if f.Ingress {
		if o.CastToKernCtx == 0 {
			return 0, nil, nil, fmt.Errorf("TCX ingress: this kernel has no bpf_cast_to_kern_ctx kfunc: %w", ebpf.ErrNotSupported)
		}
		prog, lnk, err := load(HookTCXIngress, o, f, mapFD, rec, func(p *ebpf.Program) (link.Link, error) {
			return link.AttachTCX(link.TCXOptions{Interface: int(f.Ifindex), Program: p, Attach: ebpf.AttachTCXIngress})
		})
		return HookTCXIngress, prog, lnk, err
	}
	if o.CastToKernCtx != 0 {
		prog, lnk, err := load(HookTCX, o, f, mapFD, rec, func(p *ebpf.Program) (link.Link, error) {
			return link.AttachTCX(link.TCXOptions{Interface: int(f.Ifindex), Program: p, Attach: ebpf.AttachTCXEgress})
		})
		if !errors.Is(err, ebpf.ErrNotSupported) {
			return HookTCX, prog, lnk, err
		}
	}
	prog, lnk, err := load(HookTracepoint, o, f, mapFD, rec, func(p *ebpf.Program) (link.Link, error) {
		return link.AttachTracing(link.TracingOptions{Program: p, AttachType: ebpf.AttachTraceRawTp})
	})
	return HookTracepoint, prog, lnk, err
}

// progName is the program's name for hook h, as bpftool and the kernel's
// run-time statistics show it: the sender's program and a receiver's
// are told apart (bench/capture-cost/progstat).
func progName(h Hook) string {
	if h == HookTCXIngress {
		return "tsl_ingress"
	}
	return "tsl_dev_queue"
}

// load builds and loads the program for hook h and attaches it with at.
func load(h Hook, o offsets, f filter, mapFD int, rec *recMaps, at func(*ebpf.Program) (link.Link, error)) (*ebpf.Program, link.Link, error) {
	insns, err := program(h, o, f, mapFD, rec)
	if err != nil {
		return nil, nil, err
	}
	spec := &ebpf.ProgramSpec{
		Name:         progName(h),
		Instructions: insns,
		// bpf_probe_read_kernel is offered to GPL-compatible programs only.
		License: "Dual MIT/GPL",
	}
	switch h {
	case HookTCX:
		spec.Type, spec.AttachType = ebpf.SchedCLS, ebpf.AttachTCXEgress
	case HookTCXIngress:
		spec.Type, spec.AttachType = ebpf.SchedCLS, ebpf.AttachTCXIngress
	case HookTracepoint:
		spec.Type, spec.AttachType, spec.AttachTo = ebpf.Tracing, ebpf.AttachTraceRawTp, "net_dev_queue"
	}
	prog, err := ebpf.NewProgram(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("load the %v program: %w", h, err)
	}
	lnk, err := at(prog)
	if err != nil {
		prog.Close()
		return nil, nil, fmt.Errorf("attach the %v program: %w", h, err)
	}
	return prog, lnk, nil
}

// Hook says where the counter counts.
func (c *Counter) Hook() Hook { return c.hook }

// Totals is the running count of send units and their payload (the
// per-second series reads it while the program runs).
type Totals struct {
	SendUnits    int64
	PayloadBytes int64
}

// Totals reads the running counts.
func (c *Counter) Totals() (Totals, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		return Totals{}, errors.New("devqueue: counter stopped")
	}
	v, err := c.read()
	if err != nil {
		return Totals{}, err
	}
	return Totals{SendUnits: int64(v[slotUnits]), PayloadBytes: int64(v[slotBytes])}, nil
}

// read sums the per-CPU values.
func (c *Counter) read() ([]uint64, error) {
	var perCPU [][valueWords]uint64
	if err := c.m.Lookup(uint32(0), &perCPU); err != nil {
		return nil, fmt.Errorf("devqueue: read the counter map: %w", err)
	}
	sum := make([]uint64, valueWords)
	for _, v := range perCPU {
		for i := range v {
			sum[i] += v[i]
		}
	}
	return sum, nil
}

// Result is what a stopped counter counted.
type Result struct {
	Hook         Hook  // where it counted
	SendUnits    int64 // TCP data skbs to a watched port handed to the device layer
	PayloadBytes int64 // their summed TCP payload
	// WireSegments is the segments those units become on the wire: the
	// sum of gso_segs over GSO skbs plus one per non-GSO skb.
	WireSegments int64
	GSOUnits     int64 // units that were GSO skbs
	SingleMSS    int64 // units of exactly one MSS
	Other        int64 // other packets on the device: ACKs, other ports, not TCP
	Unread       int64 // packets whose headers could not be read (not counted)
	// Missed counts runs of the program the kernel skipped because it
	// was already running on that CPU (recursion_misses): packets not
	// looked at, on this device or any other.
	Missed int64
	// Clamped counts units larger than Buckets MSS, counted in the last
	// histogram bucket.
	Clamped int64
	// With Options.Headers: Recorded is the packets handed to the sink
	// without error, RecordedData those with TCP payload to a watched port
	// (the send units the sink got), RecordLost those lost on the way:
	// the rest of the packets the program set out to record (skipped by
	// a reader that fell a ring behind, its CPU's ring overwritten
	// before it read them, or written after Stop drained the rings:
	// only a tracepoint program can do that).
	Recorded, RecordedData, RecordLost int64
	// Histogram bucket i counts units of ceil(payload/MSS) == i+1
	// segments; trailing empty buckets are cut.
	Histogram []int64
}

// Stop detaches the program, reads the map and frees both.
func (c *Counter) Stop() (Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		return Result{}, errors.New("devqueue: counter already stopped")
	}
	// Detach first: nothing counts after this point.
	lerr := c.lnk.Close()
	var recErr error
	var recorded, recordedData int64
	if c.rec != nil {
		recorded, recordedData, recErr = c.rec.stop()
	}
	v, rerr := c.read()
	var missed int64
	if st, err := c.prog.Stats(); err == nil {
		missed = int64(st.RecursionMisses)
	}
	c.prog.Close()
	c.m.Close()
	c.m = nil
	if err := errors.Join(lerr, rerr); err != nil {
		return Result{}, err
	}
	r := resultOf(v)
	r.Hook = c.hook
	r.Missed = missed
	r.Recorded, r.RecordedData = recorded, recordedData
	if c.rec != nil {
		// Every packet the program set out to record is recorded or
		// lost: besides the ones it found no ring for, the records the
		// reader skipped (their ring overwritten before it read them)
		// and the ones written after the rings were drained (only a
		// tracepoint program can do that: detaching a TCX program waits
		// for the ones running, a tracepoint's detach does not).
		if unread := int64(v[slotRecTried]) - recorded - r.RecordLost; unread > 0 {
			r.RecordLost += unread
		}
	}
	return r, recErr
}

// resultOf turns the summed map value into a Result.
func resultOf(v []uint64) Result {
	r := Result{
		SendUnits:    int64(v[slotUnits]),
		PayloadBytes: int64(v[slotBytes]),
		WireSegments: int64(v[slotSegs]),
		GSOUnits:     int64(v[slotGSO]),
		SingleMSS:    int64(v[slotSingle]),
		Other:        int64(v[slotOther]),
		Unread:       int64(v[slotUnread]),
		Clamped:      int64(v[slotClamped]),
		RecordLost:   int64(v[slotRecLost]),
	}
	hist := v[headerSlots:]
	n := len(hist)
	for n > 0 && hist[n-1] == 0 {
		n--
	}
	for _, c := range hist[:n] {
		r.Histogram = append(r.Histogram, int64(c))
	}
	return r
}
