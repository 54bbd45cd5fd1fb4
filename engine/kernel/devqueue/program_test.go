package devqueue

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/engine/kernel/capture"
)

// loaded is the program for one hook, loaded but attached nowhere, with
// its counter map and record ring, to run with BPF_PROG_TEST_RUN (the
// kernel hands the packet up from the calling thread's namespace's lo,
// index 1, which the filter watches).
type loaded struct {
	prog *ebpf.Program
	m    *ebpf.Map
	ring *recordRing
}

const testPort, testMSS = 5201, 1448

// loadForTest loads the program for h; it locks the calling goroutine to
// its thread (the namespace the filter names is the thread's) until the
// test ends.
func loadForTest(tb testing.TB, h Hook) *loaded {
	tb.Helper()
	return loadForTestRing(tb, h, RingBytes)
}

// counted is what the test program's counter map holds, summed over
// the CPUs as Counter.read sums it.
func (l *loaded) counted(tb testing.TB) Result {
	tb.Helper()
	v, err := (&Counter{m: l.m}).read()
	if err != nil {
		tb.Fatal(err)
	}
	return resultOf(v)
}

func loadForTestRing(tb testing.TB, h Hook, ringBytes int) *loaded {
	tb.Helper()
	off, err := kernelBTF()
	if err != nil {
		skipUnlessRequired(tb, "no kernel BTF: "+err.Error())
	}
	runtime.LockOSThread()
	tb.Cleanup(runtime.UnlockOSThread)
	var st unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &st); err != nil {
		tb.Fatal(err)
	}
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: valueWords * 8, MaxEntries: 1})
	if errors.Is(err, unix.EPERM) {
		skipUnlessRequired(tb, "BPF refused: "+err.Error())
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	ring, err := newRecordRing(ringBytes)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(ring.close)
	f := filter{Ifindex: 1, NetNS: uint32(st.Ino), Ports: []uint16{testPort}, MSS: testMSS, Ingress: h == HookTCXIngress}
	insns, err := program(h, off, f, m.FD(), ring.maps())
	if err != nil {
		tb.Fatal(err)
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.SchedCLS, Instructions: insns, License: "Dual MIT/GPL"})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { prog.Close() })
	return &loaded{prog: prog, m: m, ring: ring}
}

// packet is an Ethernet frame of one TCP segment from port 40000 to dport
// with payload bytes: IPv4 with ipOpts bytes of options, or IPv6; a TCP
// header of 32 bytes (as long as with the timestamp option; 12 NOPs).
func packet(ipv6 bool, ipOpts int, dport uint16, payload int) (frame []byte, headers int) {
	return packetTCP(ipv6, ipOpts, 32, dport, payload)
}

// packetTCP is packet with a TCP header of tcpLen bytes (options NOPs).
func packetTCP(ipv6 bool, ipOpts, tcpLen int, dport uint16, payload int) (frame []byte, headers int) {
	ipLen := 20 + ipOpts
	if ipv6 {
		ipLen = 40
	}
	p := make([]byte, 14+ipLen+tcpLen+payload)
	ip := p[14:]
	if ipv6 {
		binary.BigEndian.PutUint16(p[12:], 0x86dd)
		ip[0], ip[6], ip[7] = 0x60, unix.IPPROTO_TCP, 64
		binary.BigEndian.PutUint16(ip[4:], uint16(32+payload))
		ip[23], ip[39] = 1, 2 // ::1 -> ::2
	} else {
		binary.BigEndian.PutUint16(p[12:], 0x0800)
		ip[0], ip[8], ip[9] = 0x40|byte(ipLen/4), 64, unix.IPPROTO_TCP
		binary.BigEndian.PutUint16(ip[2:], uint16(len(p)-14))
		copy(ip[12:], []byte{10, 77, 1, 1, 10, 77, 1, 2})
		for i := 20; i < ipLen; i++ {
			ip[i] = 1 // IPOPT_NOOP
		}
	}
	tcp := ip[ipLen:]
	binary.BigEndian.PutUint16(tcp[0:], 40000)
	binary.BigEndian.PutUint16(tcp[2:], dport)
	tcp[12], tcp[13] = byte(tcpLen/4)<<4, 0x10 // ACK
	for i := 20; i < tcpLen; i++ {
		tcp[i] = 1 // TCPOPT_NOP: no header byte is 0 by chance
	}
	return p, 14 + ipLen + tcpLen
}

// vary gives an IPv4 frame's fields that change from one segment of a
// connection to the next (IPv4 ID and checksum; TCP sequence and
// acknowledgment numbers, window, checksum, urgent pointer) values of
// its own, n, n+1, ..., none 0.
func vary(p []byte, n byte) {
	ip := p[14:]
	tcp := ip[int(ip[0]&0x0f)*4:]
	for k, i := range []int{4, 5, 10, 11} {
		ip[i] = n + byte(k)
	}
	for k, i := range []int{4, 5, 6, 7, 8, 9, 10, 11, 14, 15, 16, 17, 18, 19} {
		tcp[i] = n + 4 + byte(k)
	}
}

// TestProgramParses runs the program at both TCX hooks on segments of
// every header layout it parses (IPv4 with and without options, IPv6)
// and on ones it must pass over (another port, not TCP): a segment to
// the watched port is recorded with exactly its headers, its length and
// payload, and at egress counted as a unit of its payload; the others
// are "other", unrecorded.
func TestProgramParses(t *testing.T) {
	for _, h := range []Hook{HookTCX, HookTCXIngress} {
		t.Run(h.String(), func(t *testing.T) { programParses(t, h) })
	}
	// The fully ordered stores of a CPU that reorders stores load and
	// record as well (the kernel's verifier and JIT of this machine).
	defer func(a string) { storeArch = a }(storeArch)
	storeArch = "arm64"
	t.Run("ordered-stores", func(t *testing.T) { programParses(t, HookTCXIngress) })
}

func programParses(t *testing.T, h Hook) {
	l := loadForTest(t, h)
	pinThread(t)
	type rec struct {
		Header           []byte
		WireLen, Payload int
		ToWatched        bool
	}
	var want []rec
	var wantShort []bool // each record short
	var units, bytes, other int64
	// Packets of one connection, in both directions, at either hook: a
	// packet whose template bytes (Ethernet, IPv4 but its length, ID and
	// checksum, TCP ports) are the last template's is recorded short
	// when its headers are Ethernet, IPv4 without options and TCP of 20
	// or 32 bytes (short); other packets of those headers set a template.
	fromPort := func(p []byte) {
		tcp := p[14+20:]
		binary.BigEndian.PutUint16(tcp[0:], testPort)
		binary.BigEndian.PutUint16(tcp[2:], 40000)
	}
	otherMAC := func(p []byte) { p[6] = 0x42 }
	for i, tt := range []struct {
		ipv6           bool
		ipOpts, tcpLen int
		dport          uint16
		proto          byte
		payload        int
		mut            func(p []byte)
		short          bool
	}{
		{false, 0, 32, testPort, unix.IPPROTO_TCP, 1000, nil, false},
		// The packet ends 2 bytes past its 66 header bytes: the
		// receiver's last word of them ends at the packet's end.
		{false, 0, 32, testPort, unix.IPPROTO_TCP, 2, nil, true},
		{false, 12, 32, testPort, unix.IPPROTO_TCP, 1000, nil, false},
		// 106 header bytes: more than reserve reads (headerRead).
		{false, 40, 32, testPort, unix.IPPROTO_TCP, 1000, nil, false},
		{true, 0, 32, testPort, unix.IPPROTO_TCP, 1000, nil, false},
		{false, 0, 32, testPort + 1, unix.IPPROTO_TCP, 1000, nil, false},
		{false, 0, 32, testPort, unix.IPPROTO_UDP, 1000, nil, false},
		{true, 0, 32, testPort, unix.IPPROTO_UDP, 1000, nil, false},
		{false, 0, 32, testPort, unix.IPPROTO_TCP, 1448, nil, true},
		{false, 0, 20, testPort, unix.IPPROTO_TCP, 1448, nil, true},
		{false, 0, 20, testPort, unix.IPPROTO_TCP, 0, nil, true},
		{false, 0, 24, testPort, unix.IPPROTO_TCP, 1448, nil, false},
		{false, 0, 32, testPort, unix.IPPROTO_TCP, 1448, otherMAC, false},
		{false, 0, 32, testPort, unix.IPPROTO_TCP, 1448, otherMAC, true},
		{false, 0, 32, testPort, unix.IPPROTO_TCP, 1448, nil, false},
		{false, 0, 32, testPort, unix.IPPROTO_TCP, 0, fromPort, false},
		{false, 0, 32, testPort, unix.IPPROTO_TCP, 0, fromPort, true},
		{false, 0, 32, testPort, unix.IPPROTO_TCP, 1448, nil, false},
	} {
		pkt, hdrs := packetTCP(tt.ipv6, tt.ipOpts, tt.tcpLen, tt.dport, tt.payload)
		if tt.ipv6 {
			pkt[14+6] = tt.proto
		} else {
			vary(pkt, byte(16*i+1))
			pkt[14+9] = tt.proto
		}
		if tt.mut != nil {
			tt.mut(pkt)
		}
		ret, err := l.prog.Run(&ebpf.RunOptions{Data: pkt})
		if err != nil {
			t.Fatal(err)
		}
		if int32(ret) != tcxNext {
			t.Fatalf("program returned %d, want TCX_NEXT", int32(ret))
		}
		if tt.dport != testPort || tt.proto != unix.IPPROTO_TCP {
			other++
			continue
		}
		toWatched := binary.BigEndian.Uint16(pkt[hdrs-tt.tcpLen+2:]) == testPort
		want = append(want, rec{pkt[:hdrs], len(pkt), tt.payload, toWatched})
		wantShort = append(wantShort, tt.short)
		switch {
		case toWatched && tt.payload > 0:
			units++
			bytes += int64(tt.payload)
		case h != HookTCXIngress:
			other++ // recorded, and at egress counted as other
		}
	}
	var got []rec
	var short []bool
	for cpu := range l.ring.cpus {
		for pos, end := l.ring.tail[cpu], l.ring.head(cpu); pos != end; {
			var buf [recordSize]byte
			short = append(short, l.ring.at(cpu, pos)[recCapLen]&shortKind == shortKind)
			b, next, ok := l.ring.readRecord(cpu, pos, buf[:])
			if !ok {
				t.Fatalf("CPU %d record at %d: the ring does not hold it whole (head %d)", cpu, pos, end)
			}
			_, hdr, wireLen, payload, toWatched, ok := parseRecord(b)
			if !ok {
				t.Fatalf("CPU %d record at %d does not parse", cpu, pos)
			}
			got = append(got, rec{append([]byte(nil), hdr...), wireLen, payload, toWatched})
			pos = next
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantShort, short); diff != "" {
		t.Errorf("records short (-want +got):\n%s", diff)
	}
	res := l.counted(t)
	if h == HookTCXIngress {
		units, bytes = 0, 0 // at ingress with a record it only records
	}
	if res.SendUnits != units || res.PayloadBytes != bytes || res.Other != other || res.Unread != 0 {
		t.Errorf("counted %d units of %d bytes, %d other, %d unread; want %d units of %d bytes, %d other, none unread",
			res.SendUnits, res.PayloadBytes, res.Other, res.Unread, units, bytes, other)
	}
}

// The fetch-adds that order a record's stores on CPUs other than x86
// are assembled as BPF_ADD | BPF_FETCH (0x01 in the immediate), which the
// kernel runs fully ordered, not as a relaxed BPF_ADD (0).
func TestOrderedStoreFetches(t *testing.T) {
	var atomics int
	for _, ins := range orderedStore("arm64", asm.R1, 0, asm.R2) {
		if ins.OpCode.AtomicOp() == asm.InvalidAtomic {
			continue
		}
		atomics++
		var b bytes.Buffer
		if _, err := ins.Marshal(&b, binary.LittleEndian); err != nil {
			t.Fatal(err)
		}
		if imm := binary.LittleEndian.Uint32(b.Bytes()[4:8]); imm != 0x01 {
			t.Errorf("%v assembles with immediate %#x, want BPF_ADD | BPF_FETCH (0x01)", ins, imm)
		}
	}
	if atomics != 2 {
		t.Errorf("%d atomic instructions, want 2 (before and after the store)", atomics)
	}
}

// BenchmarkProgram is what the program costs a packet, run by the kernel
// on one TCP segment of an MSS (BPF_PROG_TEST_RUN: nothing attached, no
// device touched) with the record ring on, at each TCX hook: a TSO-off
// receiver's capture runs it for every wire segment. The record ring is
// not read, so it wraps as it would under a reader that keeps up.
func BenchmarkProgram(b *testing.B) {
	for _, h := range []Hook{HookTCX, HookTCXIngress} {
		b.Run(h.String(), func(b *testing.B) {
			l := loadForTest(b, h)
			pkt, _ := packet(false, 0, testPort, testMSS)
			b.ResetTimer()
			ret, per, err := l.prog.Benchmark(pkt, b.N, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if int32(ret) != tcxNext {
				b.Fatalf("program returned %d, want TCX_NEXT", int32(ret))
			}
			var heads uint64
			for cpu := range l.ring.cpus {
				heads += l.ring.head(cpu)
			}
			if heads == 0 {
				b.Fatal("the program recorded nothing: the test packet did not pass its filter")
			}
			b.ReportMetric(float64(per.Nanoseconds()), "ns/packet")
		})
	}
}

// BenchmarkReader is what the reader costs a record: the rings filled by
// the program (BPF_PROG_TEST_RUN on one CPU, an MSS segment each time)
// are drained and merged as a receiver's capture does at every drain,
// the records handed to a pcapng file as they are read ("file",
// cpu-ns/record) or copied into a spool ("spool": cpu-ns/record is what
// the reader does while a run is measured, unspool-cpu-ns/record what
// it does after, handing the spooled records to the file). The file is
// in /dev/shm (tmpfs, where bench/capture-cost writes its captures) when
// there is one, emptied before each round, so that its writes take
// fresh pages as a capture's do.
func BenchmarkReader(b *testing.B) {
	for _, spooled := range []bool{false, true} {
		name := map[bool]string{false: "file", true: "spool"}[spooled]
		b.Run(name, func(b *testing.B) { benchmarkReader(b, spooled) })
	}
}

func benchmarkReader(b *testing.B, spooled bool) {
	// threadCPU reads this thread's time.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	l := loadForTest(b, HookTCXIngress)
	pkt, _ := packet(false, 0, testPort, testMSS)
	// Half a ring of records a round.
	per := int(l.ring.size) / 2 / recordBytes(len(pkt)-testMSS)
	dir := "/dev/shm"
	if _, err := os.Stat(dir); err != nil {
		dir = b.TempDir()
	}
	file, err := os.CreateTemp(dir, "tsolab-bench-reader-*.pcapng")
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(file.Name())
	defer file.Close()
	sink, err := capture.NewPcapng(file, "rx0", "bench", capture.Incoming, "eBPF")
	if err != nil {
		b.Fatal(err)
	}
	r := &recorder{ring: l.ring, sink: sink}
	if spooled {
		// Room for one round of records.
		if r.spool, err = newSpool(per*recordSize, spoolChunk); err != nil {
			b.Fatal(err)
		}
		defer r.spool.close()
	}
	var st readState
	var cpu, after time.Duration
	b.ResetTimer()
	written := 0
	for ; written < b.N; written += per {
		b.StopTimer()
		if _, _, err := l.prog.Benchmark(pkt, per, nil); err != nil {
			b.Fatal(err)
		}
		if err := file.Truncate(0); err != nil {
			b.Fatal(err)
		}
		if _, err := file.Seek(0, io.SeekStart); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cpu0 := threadCPU(b)
		r.drain(&st, 0)
		cpu1 := threadCPU(b)
		cpu += cpu1 - cpu0
		if spooled {
			for r.spool.each(r.hand) {
			}
			after += threadCPU(b) - cpu1
		}
	}

	b.StopTimer()
	if r.err != nil || r.recorded != int64(written) {
		b.Fatalf("recorded %d of %d, error %v", r.recorded, written, r.err)
	}
	// The thread's CPU time: steadier than the wall clock on a shared
	// machine.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(r.recorded), "cpu-ns/record")
	if spooled {
		b.ReportMetric(float64(after.Nanoseconds())/float64(r.recorded), "unspool-cpu-ns/record")
	}
}

// threadCPU is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
func threadCPU(tb testing.TB) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

// pinThread keeps the calling goroutine's thread (locked to it) on one
// CPU until the test ends, so that the program runs it starts record
// into one CPU's ring, with one template.
func pinThread(t *testing.T) {
	var was, one unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		t.Fatal(err)
	}
	for cpu := 0; ; cpu++ {
		if was.IsSet(cpu) {
			one.Set(cpu)
			break
		}
	}
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.SchedSetaffinity(0, &was) })
}

// TestRecordTimeNotRealtime runs the program at both TCX hooks on a
// segment whose __sk_buff carries a stamp of no monotonic type
// (tstamp_type 0, CLOCK_REALTIME, as a device's receive time or netstamp
// gives) and on one without a stamp: both records take the time the
// program ran (bpf_ktime_get_ns), never the realtime stamp nor 0.
// BPF_PROG_TEST_RUN refuses a context with tstamp_type set (EINVAL), so
// the monotonic stamp's path is checked end to end: TestRecordsHeaders's
// times lie within the stream and never go backwards.
func TestRecordTimeNotRealtime(t *testing.T) {
	for _, h := range []Hook{HookTCX, HookTCXIngress} {
		t.Run(h.String(), func(t *testing.T) {
			l := loadForTest(t, h)
			pinThread(t)
			const stamp = 123456789
			before := time.Duration(unixMonotonic(t))
			for _, stamped := range []bool{true, false} {
				pkt, _ := packet(false, 0, testPort, 1000)
				ctx := make([]byte, 192) // struct __sk_buff
				if stamped {
					binary.NativeEndian.PutUint64(ctx[ctxTstamp:], stamp)
				}
				if _, err := l.prog.Run(&ebpf.RunOptions{Data: pkt, Context: ctx}); err != nil {
					t.Fatalf("stamped=%v: %v", stamped, err)
				}
			}
			after := time.Duration(unixMonotonic(t))
			var times []time.Duration
			for cpu := range l.ring.cpus {
				for pos, end := l.ring.tail[cpu], l.ring.head(cpu); pos != end; {
					var buf [recordSize]byte
					b, next, ok := l.ring.readRecord(cpu, pos, buf[:])
					if !ok {
						t.Fatalf("CPU %d record at %d not whole", cpu, pos)
					}
					times = append(times, time.Duration(recTS(b)))
					pos = next
				}
			}
			if len(times) != 2 || times[0] < before || times[1] < times[0] || times[1] > after {
				t.Errorf("record times %v: want 2, in order, within the runs' %v..%v", times, before, after)
			}
		})
	}
}

// unixMonotonic is CLOCK_MONOTONIC now, in ns.
func unixMonotonic(t *testing.T) int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatal(err)
	}
	return ts.Nano()
}

// TestRecordCountsGSO runs the sender's program with a record (TCX
// egress) on send units whose skb carries GSO fields, as a TSO or GSO
// sender's do (BPF_PROG_TEST_RUN sets skb_shinfo's gso_size and gso_segs
// from the __sk_buff it is handed), and checks it counts their wire
// segments, GSO units, single-MSS units and histogram buckets from them.
func TestRecordCountsGSO(t *testing.T) {
	l := loadForTest(t, HookTCX)
	// __sk_buff (192 bytes), in 32-bit words.
	type skbCtx [192 / 4]uint32
	// Payloads fit in a page, as BPF_PROG_TEST_RUN takes them.
	for _, u := range []struct{ payload, gsoSize, gsoSegs int }{
		{2 * testMSS, testMSS, 2}, // TSO: two segments
		{testMSS + 1, testMSS, 0}, // GSO without gso_segs: ceil(payload/gso_size)
		{testMSS, 0, 0},           // one MSS, no GSO
		{2 * testMSS, 600, 5},     // gso_segs as given
	} {
		pkt, _ := packet(false, 0, testPort, u.payload)
		var ctx skbCtx
		// wire_len (at 160): the kernel takes none shorter than the packet.
		ctx[160/4] = uint32(len(pkt))
		ctx[ctxGSOSegs/4], ctx[ctxGSOSize/4] = uint32(u.gsoSegs), uint32(u.gsoSize)
		ret, err := l.prog.Run(&ebpf.RunOptions{Data: pkt, Context: ctx})
		if err != nil {
			t.Fatalf("%+v: %v", u, err)
		}
		if int32(ret) != tcxNext {
			t.Fatalf("program returned %d, want TCX_NEXT", int32(ret))
		}
	}
	got := l.counted(t)
	want := Result{
		SendUnits: 4, PayloadBytes: 6*testMSS + 1, WireSegments: 2 + 2 + 1 + 5,
		GSOUnits: 3, SingleMSS: 1, Histogram: []int64{1, 3},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

// BenchmarkRingMemory is what the receiver's program costs a packet
// writing into ring memory it has not written before, against the same
// ring again: for each ring size (all CPUs), a new ring takes
// ringPass records on one CPU (BPF_PROG_TEST_RUN, an MSS segment each
// time, 192 MB of 48-byte short records, which wraps the smaller rings),
// "first-ns/packet", then ringPass more, "again-ns/packet". A run's
// receiver writes its records into fresh memory of its 256 MB ring a
// CPU the whole run (IngressRingBytes).
func BenchmarkRingMemory(b *testing.B) {
	const ringPass = 4 << 20
	for _, c := range []struct {
		mb     int
		warmed bool
	}{{IngressRingBytes >> 20, false}, {IngressRingBytes >> 20, true}, {RingBytes >> 20, false}, {8, false}} {
		name := fmt.Sprintf("%dMB", c.mb)
		if c.warmed {
			name += "/warmed"
		}
		b.Run(name, func(b *testing.B) {
			pkt, _ := packet(false, 0, testPort, testMSS)
			var first, again, warming time.Duration
			for range b.N {
				l := loadForTestRing(b, HookTCXIngress, c.mb<<20)
				if c.warmed {
					t0 := time.Now()
					if err := l.ring.warm(); err != nil {
						b.Fatal(err)
					}
					warming += time.Since(t0)
				}
				for pass, d := range []*time.Duration{&first, &again} {
					ret, per, err := l.prog.Benchmark(pkt, ringPass, nil)
					if err != nil {
						b.Fatal(err)
					}
					var heads uint64
					for cpu := range l.ring.cpus {
						heads += l.ring.head(cpu)
					}
					if int32(ret) != tcxNext || heads == 0 {
						b.Fatalf("pass %d: program returned %d, recorded %d bytes", pass+1, int32(ret), heads)
					}
					*d += per
				}
				// Freed now, not at the benchmark's end; the cleanups
				// find them closed.
				l.prog.Close()
				l.m.Close()
				l.ring.close()
				l.ring.headMem, l.ring.recMem, l.ring.recs = nil, nil, nil
			}
			b.ReportMetric(float64(first.Nanoseconds())/float64(b.N), "first-ns/packet")
			b.ReportMetric(float64(again.Nanoseconds())/float64(b.N), "again-ns/packet")
			if c.warmed {
				b.ReportMetric(float64(warming.Milliseconds())/float64(b.N), "warm-ms")
			}
		})
	}
}
