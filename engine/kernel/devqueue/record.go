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
// machine's CPU time in a profile). Each CPU's ring is one value of an
// mmapable array map (recs, keyed by the CPU): size bytes, and room past
// them for one more record, so that a record is never cut in two; its
// head, a byte position, is in another (heads, one cache line a CPU).
// The program, which runs at most once at a time on a CPU (TCX in
// softirq or with bottom halves off, the tracepoint likewise), writes a
// record at head mod size, as long as its headers (recordBytes: 88
// bytes for Ethernet, IPv4 and TCP with timestamps, where a slot for
// the longest record took 192), then adds its length to head (that
// store ordered after the record's: a plain store on x86, whose stores
// are not reordered with other stores; elsewhere between two fully
// ordered atomics). The reader maps both arrays, keeps a tail per CPU
// and reads the records in place: a record it copied is handed on only
// if the head, read after the copy, is still less than a ring, less the
// longest record, past it (the producer has not started writing over
// it). A reader that fell a ring behind skips that CPU's records up to
// its head: Stop counts them lost (the program counts the records it
// set out to write), none is handed on torn.

// ringSlack is the room past the end of a CPU's ring for the record
// that starts just before it (a multiple of 8, as the kernel lays out
// array values).
const ringSlack = (recordSize + 7) &^ 7

// headStride is the bytes between two CPUs' heads: a cache line.
const headStride = 64

// recMaps are the arrays the program records into.
type recMaps struct {
	Heads, Recs int    // map file descriptors
	Size        uint64 // bytes of a CPU's ring, a power of two
}

// recordRing is the per-CPU record rings: the two maps, their memory as
// the reader maps it, and the reader's tails.
type recordRing struct {
	heads, recs     *ebpf.Map
	headMem, recMem []byte
	cpus            int
	size            uint64   // bytes of a CPU's ring, a power of two
	tail            []uint64 // the reader's position in each CPU's ring, bytes
	// tmpl is each CPU's template, as the reader knows it, for its
	// short records.
	tmpl []template
	// rebuilt counts the short records read and rebuilt.
	rebuilt int64
	free    func() // when not nil, close calls it (newRings)
}

// template is what the reader knows of a CPU's template (see
// shortKind): the header bytes of the full record that set it last and
// that record's flagToWatched.
type template struct {
	hdr  [tmplBytes]byte
	flag byte
	// ok: the record that set it was read since the reader began, or
	// last skipped records of the CPU (which may have set another).
	ok bool
}

// newRecordRing makes rings of about bytes in all, a power of two bytes
// per CPU (at least minRingBytes), and maps them into this process.
func newRecordRing(bytes int) (*recordRing, error) {
	cpus, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, fmt.Errorf("possible CPUs: %w", err)
	}
	per := max(bytes/cpus, minRingBytes)
	size := uint64(1) << (bits.Len(uint(per)) - 1)
	r := &recordRing{cpus: cpus, size: size, tail: make([]uint64, cpus), tmpl: make([]template, cpus)}
	if r.heads, err = ebpf.NewMap(&ebpf.MapSpec{Name: "tsl_rec_heads", Type: ebpf.Array, KeySize: 4, ValueSize: headStride,
		MaxEntries: uint32(cpus), Flags: unix.BPF_F_MMAPABLE}); err != nil {
		return nil, fmt.Errorf("create the record heads: %w", err)
	}
	if r.recs, err = ebpf.NewMap(&ebpf.MapSpec{Name: "tsl_unit_hdrs", Type: ebpf.Array, KeySize: 4, ValueSize: uint32(r.stride()),
		MaxEntries: uint32(cpus), Flags: unix.BPF_F_MMAPABLE}); err != nil {
		r.heads.Close()
		return nil, fmt.Errorf("create the record rings: %w", err)
	}
	if r.headMem, err = unix.Mmap(r.heads.FD(), 0, pageAlign(cpus*headStride), unix.PROT_READ, unix.MAP_SHARED); err == nil {
		r.recMem, err = unix.Mmap(r.recs.FD(), 0, pageAlign(cpus*int(r.stride())), unix.PROT_READ, unix.MAP_SHARED)
	}
	if err != nil {
		r.close()
		return nil, fmt.Errorf("map the record rings: %w", err)
	}
	return r, nil
}

// minRingBytes is the smallest ring of a CPU.
const minRingBytes = 1 << 20

// stride is the bytes of a CPU's value in the recs array: its ring and
// the slack past it (a multiple of 8, as the kernel lays out values).
func (r *recordRing) stride() uint64 { return r.size + ringSlack }

func pageAlign(n int) int {
	p := unix.Getpagesize()
	return (n + p - 1) / p * p
}

func (r *recordRing) maps() *recMaps {
	return &recMaps{Heads: r.heads.FD(), Recs: r.recs.FD(), Size: r.size}
}

// head is CPU cpu's published head.
func (r *recordRing) head(cpu int) uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&r.headMem[cpu*headStride])).Load()
}

// at is CPU cpu's ring from position pos on, as long as the longest
// record.
func (r *recordRing) at(cpu int, pos uint64) []byte {
	off := uint64(cpu)*r.stride() + pos&(r.size-1)
	return r.recMem[off : off+recordSize : off+recordSize]
}

// intact says the producer of CPU cpu has not started writing over the
// record at pos: the record it writes at its head takes at most
// recordSize bytes, a ring on from pos.
func (r *recordRing) intact(cpu int, pos uint64) bool {
	return r.head(cpu)+recordSize <= pos+r.size
}

// readRecord copies the record at position pos of CPU cpu into dst
// (recordSize bytes: its fields and captured headers) as a full record,
// a short one rebuilt with its CPU's template, and returns the copy and
// the next record's position; ok is false when the ring no longer holds
// the record whole (the producer lapped the reader, or was lapping it
// while it copied: see skip). A short record whose template the reader
// does not know (it skipped records of the CPU since the template was
// last written) is passed over: rec is nil, ok true.
func (r *recordRing) readRecord(cpu int, pos uint64, dst []byte) (rec []byte, next uint64, ok bool) {
	src := r.at(cpu, pos)
	kind := int(src[recCapLen])
	if kind&shortKind == shortKind {
		return r.readShort(cpu, pos, kind&^shortKind, dst)
	}
	caplen := kind
	if caplen > HeaderMax {
		return nil, 0, false
	}
	rec = dst[:copy(dst[:recHeader+caplen], src)]
	if !r.intact(cpu, pos) {
		return nil, 0, false
	}
	if rec[recFlag]&flagTemplate != 0 && caplen >= tmplBytes {
		t := &r.tmpl[cpu]
		copy(t.hdr[:], rec[recHeader:])
		t.flag, t.ok = rec[recFlag]&flagToWatched, true
	}
	return rec, pos + uint64(recordBytes(caplen)), true
}

// readShort is readRecord of a short record of a TCP header of doff
// words: the headers rebuilt from its CPU's template and the record's
// bytes, its payload from its length.
func (r *recordRing) readShort(cpu int, pos uint64, doff int, dst []byte) (rec []byte, next uint64, ok bool) {
	if doff != shortDoff5 && doff != shortDoff8 {
		return nil, 0, false
	}
	n := shortBytes(doff)
	var b [shortTCP4 + shortDoff8*4]byte
	copy(b[:n], r.at(cpu, pos))
	if !r.intact(cpu, pos) {
		return nil, 0, false
	}
	next = pos + uint64(n)
	t := &r.tmpl[cpu]
	if !t.ok {
		return nil, next, true
	}
	r.rebuilt++
	caplen := tmplEth + 20 + doff*4
	copy(dst[recTime:recLen+4], b[recTime:recLen+4])
	binary.NativeEndian.PutUint32(dst[recPayload:], binary.NativeEndian.Uint32(b[recLen:])-uint32(caplen))
	dst[recCapLen], dst[recFlag] = byte(caplen), t.flag
	h := dst[recHeader : recHeader+caplen]
	copy(h, t.hdr[:])
	copy(h[tmplEth+2:tmplEth+6], b[shortIP2:])
	copy(h[tmplEth+10:tmplEth+12], b[shortIP10:])
	copy(h[tmplEth+20+4:], b[shortTCP4:])
	return dst[:recHeader+caplen], next, true
}

// skip moves the reader of CPU cpu to its head, past the records it can
// no longer read, and returns the head. The CPU's template may have
// been written in those: its short records are passed over until its
// next template.
func (r *recordRing) skip(cpu int) uint64 {
	h := r.head(cpu)
	r.tail[cpu] = h
	r.tmpl[cpu].ok = false
	return h
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
	if r.free != nil {
		r.free()
	}
}

// recorder reads the program's records from the rings and hands them to
// the sink in time order, from startRecorder until stop. It leaves them
// in the rings while they have room (see drainAt), so that a run whose
// records fit is read after its measurements, at stop; a ring that
// fills past drainAt has its oldest records, and the other CPUs' records
// as old, moved to the spool (or, without one, handed to the sink)
// while the run goes on.
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
	recorded, data int64
	err            error
}

// readerNice is the reader thread's nice value: about nine times the CPU
// weight of a nice 0 thread when both want to run.
const readerNice = -10

// A ring is drained while a run goes on only once its unread records
// fill drainAt of it, down to drainTo, oldest first: reading a record
// costs the reader 27-45 ns of CPU into the spool (BenchmarkReader), so
// a TSO-off receiver's 1-1.8 M records a second cost 1.4-4% of this
// 2-core machine while measured; left in the rings they are read after
// the measurements, at stop. What is left above drainAt is the reader's
// margin: ~27 MB of a receiver's 256 MB ring a CPU, 0.3-0.9 s of a
// TSO-off receiver's records at MTU 1500 here under CUBIC (short
// records, 31-43 MB a second a CPU, up to 86 on one), six or more of
// its longest sleeps.
const (
	drainAt = 0.9
	drainTo = 0.5
)

// The reader looks at the heads every so long (as long as the busiest
// CPU takes to fill 1/pollFill of its ring at the rate it wrote since
// the last look, within minPoll and maxPoll), to drain a ring before
// its producer laps the reader: every wake-up of the reader's locked
// thread is a hand-off between Go's threads that costs tens of
// microseconds of CPU here and preempts a data path thread. Waking every
// 2 ms, as it did, took more CPU than reading the sender's records
// (examples/tso-basics, TSO off, MTU 1500, 2 s runs, 4 each, loaded
// machine: the sender's reader 27-41 ms of CPU and 700-890 wake-ups a
// run for 30-47k records, 7-11 ms and ~50 wake-ups with this rule).
// A TSO-off receiver at MTU 1500 (0.65-0.9 M records a second a CPU
// under CUBIC, 31-43 MB) is looked at every longestPoll.
const (
	pollFill = 8
	minPoll  = 2 * time.Millisecond
	// longestPoll bounds the sleep where the rings are large.
	longestPoll = 50 * time.Millisecond
	// peakRecordRate is more records a second than one CPU writes
	// (a TSO-off receiver writes 1.3-1.8 M a second on two CPUs here
	// under CUBIC): after
	// a quiet spell the reader wakes before a sudden burst at this rate
	// of the longest records could fill a ring.
	peakRecordRate = 2_000_000
)

// maxPoll is the longest the reader sleeps with rings of size bytes a
// CPU: what a ring holds at peakRecordRate of the longest records,
// within minPoll and longestPoll.
func maxPoll(size uint64) time.Duration {
	return min(max(time.Duration(size)*time.Second/(peakRecordRate*recordSize), minPoll), longestPoll)
}

// nextPoll is how long the reader sleeps after a look that found the
// busiest CPU had written n bytes over elapsed, with rings of size bytes
// a CPU.
func nextPoll(n, size uint64, elapsed time.Duration) time.Duration {
	longest := maxPoll(size)
	if n == 0 {
		return longest
	}
	d := time.Duration(float64(elapsed) * float64(size/pollFill) / float64(n))
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

// read looks at the rings every nextPoll and drains the ones past
// drainAt, until stop; then it drains them all and hands the spooled
// records to the sink. Its thread runs at readerNice: among the dozens
// of threads a run keeps busy on a few CPUs it would otherwise get its
// turn too late to drain the rings before the producers lap it
// (measured: 10-40% of a TSO-off receiver's records lost at nice 0 on
// two CPUs, with smaller rings then).
func (r *recorder) read() {
	defer close(r.done)
	// The thread ends with the goroutine (locked, never unlocked), so no
	// other goroutine runs at its priority.
	runtime.LockOSThread()
	// Without CAP_SYS_NICE the thread stays at its nice value; what that
	// costs shows in RecordLost.
	unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), readerNice)
	ring := r.ring
	timer := time.NewTimer(minPoll)
	defer timer.Stop()
	var st readState
	seen := make([]uint64, ring.cpus) // each CPU's head at the last look
	last := time.Now()
	for {
		var written, most uint64
		for cpu := range ring.cpus {
			h := ring.head(cpu)
			written, most = max(written, h-seen[cpu]), max(most, h-ring.tail[cpu])
			seen[cpu] = h
		}
		if float64(most) > drainAt*float64(ring.size) {
			r.drain(&st, uint64(drainTo*float64(ring.size)))
		}
		now := time.Now()
		timer.Reset(nextPoll(written, ring.size, now.Sub(last)))
		last = now
		select {
		case <-r.stopc:
			r.drain(&st, 0)
			r.unspool()
			return
		case <-timer.C:
		}
	}
}

// readState is the reader's place in each CPU's records during a drain,
// kept from one drain to the next for its memory.
type readState struct {
	end []uint64
	rec [recordSize]byte // the record being handed on, without a spool
}

// drain moves the records in the rings to the spool in time order (each
// CPU's records are in time order: they are merged), reading them in
// place (a full spool hands its oldest records to the sink), or, without
// a spool or once a full one has emptied, hands them to the sink, until
// no CPU's ring holds more than keep bytes of them (keep 0: all the
// records written when the drain began). A CPU's records that its
// producer overwrote, or was overwriting, before they were read (the
// reader fell a ring behind) are skipped up to its head.
func (r *recorder) drain(st *readState, keep uint64) {
	ring := r.ring
	if r.spool != nil && r.spool.emptied() {
		r.unspool()
	}
	st.end = st.end[:0]
	for cpu := range ring.cpus {
		st.end = append(st.end, ring.head(cpu))
	}
	for {
		best, over := -1, false
		var bestTS int64
		for cpu, end := range st.end {
			t := ring.tail[cpu]
			if t == end {
				continue
			}
			over = over || end-t > keep
			// A torn time only misplaces a record that readRecord
			// then refuses.
			if ts := recTS(ring.at(cpu, t)); best < 0 || ts < bestTS {
				best, bestTS = cpu, ts
			}
		}
		if !over {
			return
		}
		dst := st.rec[:]
		if r.spool != nil {
			dst = r.spool.room(r.hand)
		}
		rec, next, ok := ring.readRecord(best, ring.tail[best], dst)
		if !ok {
			st.end[best] = ring.skip(best)
			continue
		}
		ring.tail[best] = next
		if rec == nil {
			// A short record without its template: lost.
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

// recTS is the time of the record rec starts.
func recTS(rec []byte) int64 {
	return int64(binary.NativeEndian.Uint64(rec[recTime:]))
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
// detached by then), hands them and the spooled ones to the sink, ends
// the reader and frees the rings. The records the reader skipped are
// not counted here: Stop counts them against the program's.
func (r *recorder) stop() (recorded, data int64, err error) {
	close(r.stopc)
	<-r.done
	r.ring.close()
	return r.recorded, r.data, r.err
}

// parseRecord splits a record the program wrote (its fields and at
// least its captured headers); toWatched says the packet went to a
// watched port (counted), not from one.
func parseRecord(b []byte) (ts int64, header []byte, wireLen, payload int, toWatched, ok bool) {
	if len(b) < recHeader {
		return 0, nil, 0, 0, false, false
	}
	ne := binary.NativeEndian
	caplen := min(int(b[recCapLen]), HeaderMax)
	if len(b) < recHeader+caplen {
		return 0, nil, 0, 0, false, false
	}
	return int64(ne.Uint64(b[recTime:])), b[recHeader : recHeader+caplen],
		int(ne.Uint32(b[recLen:])), int(int32(ne.Uint32(b[recPayload:]))), b[recFlag]&flagToWatched != 0, true
}
