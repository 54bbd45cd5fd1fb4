package devqueue

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// The records go through one ring per CPU, not a BPF ring buffer: a ring
// buffer takes a spinlock with interrupts off for every record, which the
// CPUs of a TSO-off receiver (a million records a second) fought over
// (bpf_ringbuf_reserve and the lock's release were a fifth of the
// machine's CPU time in a profile). Each CPU's ring is a run of slots in
// an mmapable array map (recs) and a head counter in another (heads, one
// cache line a CPU): the program, which runs at most once at a time on a
// CPU (TCX in softirq or with bottom halves off, the tracepoint likewise),
// writes record i into slot i mod slots: first the slot's seq to 0,
// then the record, then seq to i+1, then head to i+1 (each of those
// stores ordered: a plain store on x86, whose stores are not reordered
// with other stores; elsewhere between two fully ordered atomics). The reader maps both
// arrays, keeps a tail per CPU and reads the records in place, seqlock
// style: it copies record i's used bytes only if the slot's seq is i+1
// before and after the copy, so a record a lapping producer overwrote,
// or was overwriting, is counted lost, never handed on torn.

// slotSize is a record's slot in the array: recordSize rounded up to 8
// bytes, as the kernel lays out array values.
const slotSize = (recordSize + 7) &^ 7

// headStride is the bytes between two CPUs' heads: a cache line.
const headStride = 64

// recMaps are the arrays the program records into.
type recMaps struct {
	Heads, Recs int  // map file descriptors
	Log2        uint // slots per CPU = 1 << Log2
}

// recordRing is the per-CPU record rings: the two maps, their memory as
// the reader maps it, and the reader's tails.
type recordRing struct {
	heads, recs     *ebpf.Map
	headMem, recMem []byte
	cpus            int
	log2            uint
	tail            []uint64
}

// newRecordRing makes rings of about bytes in all, a power of two slots
// per CPU (at least minSlots), and maps them into this process.
func newRecordRing(bytes int) (*recordRing, error) {
	cpus, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, fmt.Errorf("possible CPUs: %w", err)
	}
	per := max(bytes/slotSize/cpus, minSlots)
	log2 := uint(bits.Len(uint(per)) - 1)
	r := &recordRing{cpus: cpus, log2: log2, tail: make([]uint64, cpus)}
	if r.heads, err = ebpf.NewMap(&ebpf.MapSpec{Name: "tsl_rec_heads", Type: ebpf.Array, KeySize: 4, ValueSize: headStride,
		MaxEntries: uint32(cpus), Flags: unix.BPF_F_MMAPABLE}); err != nil {
		return nil, fmt.Errorf("create the record heads: %w", err)
	}
	if r.recs, err = ebpf.NewMap(&ebpf.MapSpec{Name: "tsl_unit_hdrs", Type: ebpf.Array, KeySize: 4, ValueSize: slotSize,
		MaxEntries: uint32(cpus << log2), Flags: unix.BPF_F_MMAPABLE}); err != nil {
		r.heads.Close()
		return nil, fmt.Errorf("create the record rings: %w", err)
	}
	if r.headMem, err = unix.Mmap(r.heads.FD(), 0, pageAlign(cpus*headStride), unix.PROT_READ, unix.MAP_SHARED); err == nil {
		r.recMem, err = unix.Mmap(r.recs.FD(), 0, pageAlign((cpus<<log2)*slotSize), unix.PROT_READ, unix.MAP_SHARED)
	}
	if err != nil {
		r.close()
		return nil, fmt.Errorf("map the record rings: %w", err)
	}
	return r, nil
}

// minSlots is the fewest slots a CPU's ring has.
const minSlots = 4096

func pageAlign(n int) int {
	p := unix.Getpagesize()
	return (n + p - 1) / p * p
}

func (r *recordRing) maps() *recMaps {
	return &recMaps{Heads: r.heads.FD(), Recs: r.recs.FD(), Log2: r.log2}
}

// head is CPU cpu's published head.
func (r *recordRing) head(cpu int) uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&r.headMem[cpu*headStride])).Load()
}

// pending returns CPU cpu's records not yet read, first .. end-1, and
// how many of those before first the producer overwrote (a reader that
// fell a whole ring behind), and moves the CPU's tail to end.
func (r *recordRing) pending(cpu int) (first, end uint64, lost int64) {
	slots := uint64(1) << r.log2
	t, h := r.tail[cpu], r.head(cpu)
	if h-t > slots {
		lost = int64(h - t - slots)
		t = h - slots
	}
	r.tail[cpu] = h
	return t, h, lost
}

// slot is the memory of CPU cpu's record i.
func (r *recordRing) slot(cpu int, i uint64) []byte {
	off := (uint64(cpu)<<r.log2 + i&(1<<r.log2-1)) * slotSize
	return r.recMem[off : off+slotSize : off+slotSize]
}

// seq is the seq field of a slot.
func seq(slot []byte) uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&slot[recSeq])).Load()
}

// readRecord copies record i from its slot into dst, recordSize bytes
// (its fields and captured headers, not the whole slot) and returns the
// copy; ok is false when
// the slot does not hold record i whole: not written yet, or written
// again (by a producer that lapped the reader) before or while it was
// copied.
func readRecord(slot []byte, i uint64, dst []byte) (rec []byte, ok bool) {
	if seq(slot) != i+1 {
		return nil, false
	}
	n := recHeader + min(int(binary.NativeEndian.Uint32(slot[recCapLen:])), HeaderMax)
	rec = dst[:copy(dst[:n], slot[:n])]
	if seq(slot) != i+1 {
		return nil, false
	}
	return rec, true
}

func (r *recordRing) close() {
	if r.headMem != nil {
		unix.Munmap(r.headMem)
	}
	if r.recMem != nil {
		unix.Munmap(r.recMem)
	}
	r.heads.Close()
	if r.recs != nil {
		r.recs.Close()
	}
}

// recorder reads the program's records from the rings (see nextPoll for
// how often) into its spool, and hands them to the sink in time order
// when it stops (or the spool is full), from startRecorder until stop.
type recorder struct {
	ring *recordRing
	// spool holds the records read and not yet handed to the sink; nil
	// when its memory could not be had, or once it was full and has
	// emptied: each drain then hands its records to the sink.
	spool *spool
	sink  Sink
	// wallOffset turns the program's CLOCK_MONOTONIC times into wall
	// clock times: wall = monotonic + wallOffset.
	wallOffset time.Duration
	stopc      chan struct{} // closed by stop: drain once more and end
	done       chan struct{}

	// Written by the reader goroutine only, read after done is closed.
	recorded, data, lost int64
	err                  error
}

// readerNice is the reader thread's nice value: about nine times the CPU
// weight of a nice 0 thread when both want to run.
const readerNice = -10

// The reader sleeps between drains for as long as the busiest CPU takes
// to fill 1/pollFill of its ring at the rate it wrote since the last
// drain, within minPoll and maxPoll(slots): every wake-up of the reader's
// locked thread is a hand-off between Go's threads that costs tens of
// microseconds of CPU here and preempts a data path thread. Waking every
// 2 ms, as it did, took more CPU than reading the sender's records
// (examples/tso-basics, TSO off, MTU 1500, 2 s runs, 4 each, loaded
// machine: the sender's reader 27-41 ms of CPU and 700-890 wake-ups a
// run for 30-47k records, 7-11 ms and ~50 wake-ups with this rule; the
// receiver's 111-124 CPU ns a record, 84-98; with TSO on both readers
// 30-50 ms a run, 10-15). A TSO-off receiver at MTU 1500 (~550k records
// a second a CPU) is drained about every 30 ms, a sender's
// software-GSO units every maxPoll.
const (
	pollFill = 8
	minPoll  = 2 * time.Millisecond
	// longestPoll bounds the sleep where the rings are large.
	longestPoll = 50 * time.Millisecond
	// peakRecordRate is more records a second than one CPU writes
	// (a TSO-off receiver writes ~1 M a second on two CPUs here): after
	// a quiet spell the reader wakes before a sudden burst at this rate
	// could fill a ring.
	peakRecordRate = 2_000_000
)

// maxPoll is the longest the reader sleeps with rings of slots records
// a CPU: what a ring holds at peakRecordRate, within minPoll and
// longestPoll.
func maxPoll(slots uint64) time.Duration {
	return min(max(time.Duration(slots)*time.Second/peakRecordRate, minPoll), longestPoll)
}

// nextPoll is how long the reader sleeps after a drain that found most
// records, n, on one CPU, written over elapsed, with rings of slots
// records a CPU.
func nextPoll(n, slots uint64, elapsed time.Duration) time.Duration {
	longest := maxPoll(slots)
	if n == 0 {
		return longest
	}
	d := time.Duration(float64(elapsed) * float64(slots/pollFill) / float64(n))
	return min(max(d, minPoll), longest)
}

// startRecorder starts the reader of ring, which keeps the records in
// sp (which it frees) until it stops, or, when sp is nil, hands them to
// the sink as it reads them.
func startRecorder(ring *recordRing, sink Sink, sp *spool) (*recorder, error) {
	var mono unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono); err != nil {
		if sp != nil {
			sp.close()
		}
		return nil, fmt.Errorf("clock_gettime(CLOCK_MONOTONIC): %w", err)
	}
	r := &recorder{
		ring: ring, sink: sink, spool: sp,
		wallOffset: time.Duration(time.Now().UnixNano() - mono.Nano()),
		stopc:      make(chan struct{}),
		done:       make(chan struct{}),
	}
	go r.read()
	return r, nil
}

// read drains the rings, sleeping nextPoll between drains, until a
// drain after stop. Its thread runs at readerNice: among the dozens of
// threads a run keeps busy on a few CPUs it would otherwise get its turn
// too late to drain the rings before the producers lap it (measured:
// 10-40% of a TSO-off receiver's records lost at nice 0 on two CPUs,
// with smaller rings then).
func (r *recorder) read() {
	defer close(r.done)
	// The thread ends with the goroutine (locked, never unlocked), so no
	// other goroutine runs at its priority.
	runtime.LockOSThread()
	// Without CAP_SYS_NICE the thread stays at its nice value; what that
	// costs shows in RecordLost.
	unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), readerNice)
	slots := uint64(1) << r.ring.log2
	timer := time.NewTimer(minPoll)
	defer timer.Stop()
	var st readState
	last := time.Now()
	for stopping := false; ; {
		n := r.drain(&st)
		if stopping {
			r.unspool()
			return
		}
		now := time.Now()
		timer.Reset(nextPoll(n, slots, now.Sub(last)))
		last = now
		select {
		case <-r.stopc:
			stopping = true
		case <-timer.C:
		}
	}
}

// readState is the reader's place in each CPU's records during a drain,
// kept from one drain to the next for its memory.
type readState struct {
	next, end []uint64
	rec       [recordSize]byte // the record being handed on, without a spool
}

// drain copies the records published since the last drain into the
// spool in time order (each CPU's records are in time order: they are
// merged), reading them in place (a full spool hands its oldest records
// to the sink), or, without a spool or once a full one has emptied,
// hands them to the sink; it returns the most records one CPU published
// since the last drain, those it overwrote included.
func (r *recorder) drain(st *readState) (most uint64) {
	ring := r.ring
	if r.spool != nil && r.spool.emptied() {
		r.unspool()
	}
	st.next, st.end = st.next[:0], st.end[:0]
	for cpu := range ring.cpus {
		first, end, lost := ring.pending(cpu)
		r.lost += lost
		most = max(most, end-first+uint64(lost))
		st.next, st.end = append(st.next, first), append(st.end, end)
	}
	for {
		best := -1
		var bestTS int64
		for cpu, i := range st.next {
			if i == st.end[cpu] {
				continue
			}
			// A torn time only misplaces a record that read then
			// refuses.
			if ts := recTS(ring.slot(cpu, i)); best < 0 || ts < bestTS {
				best, bestTS = cpu, ts
			}
		}
		if best < 0 {
			return most
		}
		i := st.next[best]
		st.next[best]++
		dst := st.rec[:]
		if r.spool != nil {
			dst = r.spool.room(r.hand)
		}
		rec, ok := readRecord(ring.slot(best, i), i, dst)
		if !ok {
			r.lost++
			continue
		}
		if r.spool != nil {
			r.spool.keep(len(rec))
		} else {
			r.hand(rec)
		}
	}
}

// unspool hands every spooled record to the sink and frees the spool.
func (r *recorder) unspool() {
	if r.spool == nil {
		return
	}
	for r.spool.each(r.hand) {
	}
	r.spool.close()
	r.spool = nil
}

// recTS is the time of the record in slot.
func recTS(slot []byte) int64 {
	return int64(binary.NativeEndian.Uint64(slot[recTime:]))
}

// hand gives one record to the sink, unless the sink failed before.
func (r *recorder) hand(rec []byte) {
	if r.err != nil {
		return
	}
	ts, data, wireLen, payload, toWatched, ok := parseRecord(rec)
	if !ok {
		r.err = fmt.Errorf("record of %d bytes, shorter than its fields and headers", len(rec))
		return
	}
	if err := r.sink.Frame(time.Unix(0, ts+int64(r.wallOffset)), data, wireLen); err != nil {
		r.err = err
		return
	}
	r.recorded++
	if payload > 0 && toWatched {
		r.data++
	}
}

// stop drains the records written before the call (the program is
// detached by then), hands the spooled ones to the sink, ends the
// reader and frees the rings.
func (r *recorder) stop() (recorded, data, lost int64, err error) {
	close(r.stopc)
	<-r.done
	r.ring.close()
	return r.recorded, r.data, r.lost, r.err
}

// parseRecord splits a record the program wrote (its fields and at
// least its captured headers); toWatched says the packet went to a
// watched port (counted), not from one.
func parseRecord(b []byte) (ts int64, header []byte, wireLen, payload int, toWatched, ok bool) {
	if len(b) < recHeader {
		return 0, nil, 0, 0, false, false
	}
	ne := binary.NativeEndian
	caplen := min(int(ne.Uint32(b[recCapLen:])), HeaderMax)
	if len(b) < recHeader+caplen {
		return 0, nil, 0, 0, false, false
	}
	return int64(ne.Uint64(b[recTime:])), b[recHeader : recHeader+caplen],
		int(ne.Uint32(b[recLen:])), int(int32(ne.Uint32(b[recPayload:]))), ne.Uint32(b[recFlag:]) != 0, true
}
