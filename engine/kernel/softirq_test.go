package kernel

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
)

func TestParseProcSoftirqs(t *testing.T) {
	in := "                    CPU0       CPU1\n" +
		"          HI:          1          2\n" +
		"       TIMER:         10         20\n" +
		"      NET_TX:        100        200\n" +
		"      NET_RX:       1000       2000\n" +
		"     TASKLET:          5          6\n"
	got := parseProcSoftirqs(in)
	want := map[softirqVec]uint64{vecHI: 3, vecTimer: 30, vecNetTx: 300, vecNetRx: 3000, vecTasklet: 11}
	for v := range nrSoftirqs {
		if got[v] != want[v] {
			t.Errorf("%v: got %d, want %d", v, got[v], want[v])
		}
	}
	if got := parseSoftnetProcessed("0000000a 00000000 00000001\nffffffff 00000002 00000000\n"); len(got) != 2 || got[0] != 10 || got[1] != 0xffffffff {
		t.Errorf("parseSoftnetProcessed = %v, want [10 4294967295]", got)
	}
}

// metered is a pair of snapshots one second apart whose meter saw
// spans of the given vector and class, of d each.
func metered(spans map[softirqVec]map[softirqClass]time.Duration) (a, b cpuSnapshot) {
	t0 := time.Unix(1000, 0)
	a = cpuSnapshot{Wall: t0, Metered: true, MeterOn: time.Hour}
	b = cpuSnapshot{Wall: t0.Add(time.Second), Metered: true, MeterOn: time.Hour + time.Second}
	for v := range nrSoftirqs {
		for c := range nrClasses {
			// A total that was not zero at the start: only the
			// difference counts.
			a.Softirq[v][c] = softirqSpan{Time: time.Second, Count: 7}
			b.Softirq[v][c] = softirqSpan{Time: time.Second + spans[v][c], Count: 8}
			a.Kstat[v], b.Kstat[v] = 100, 100+uint64(nrClasses)
		}
	}
	return a, b
}

// With the meter, the lab's softirq time outside its workers is that of
// the lab's vectors on idle CPUs and other tasks, times the lab's share
// of the machine's packets, plus, whole, that of the softirqs that
// handled only the lab's packets or timers; softirqs on the workers'
// threads (in their thread time already), those that handled only
// other namespaces' packets or timers, and other vectors, are not
// counted.
func TestOutsideWorkers(t *testing.T) {
	ms := time.Millisecond
	spans := map[softirqVec]map[softirqClass]time.Duration{
		vecNetTx:   {classWorker: 1 * ms, classIdle: 10 * ms, classOther: 20 * ms},
		vecNetRx:   {classWorker: 2 * ms, classIdle: 30 * ms, classOther: 40 * ms, classLab: 7 * ms, classForeign: 90 * ms},
		vecTasklet: {classOther: 5 * ms},
		vecTimer:   {classIdle: 50 * ms, classOther: 60 * ms},
		vecHRTimer: {classWorker: 3 * ms, classOther: 4 * ms, classLab: 8 * ms, classForeign: 100 * ms},
		vecRCU:     {classOther: 70 * ms, classForeign: 110 * ms},
		vecSched:   {classIdle: 80 * ms},
	}
	const shared, lab = 219 * time.Millisecond, 15 * time.Millisecond
	tests := []struct {
		name              string
		labRx             [2]uint64
		processed0, proc1 []uint32
		want              time.Duration
		note              string
	}{
		{"only the lab's packets", [2]uint64{10, 1010}, []uint32{0, 0}, []uint32{600, 400}, shared + lab, "all of that time"},
		{"a quarter other traffic", [2]uint64{10, 760}, []uint32{5, 5}, []uint32{505, 505}, shared*3/4 + lab, "75.0% of that time"},
		{"a counter wrapped", [2]uint64{0, 500}, []uint32{0xffffff00, 0}, []uint32{0xf4, 500}, shared/2 + lab, "50.0% of that time"},
		{"no packets", [2]uint64{0, 0}, []uint32{1}, []uint32{1}, shared + lab, "all of that time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := metered(spans)
			a.LabRx, b.LabRx, a.LabRxOK, b.LabRxOK = tt.labRx[0], tt.labRx[1], true, true
			a.Processed, b.Processed = tt.processed0, tt.proc1
			outside, softirqd, note := outsideWorkers(a, b, 0)
			if d := outside - tt.want; d < -time.Microsecond || d > time.Microsecond || softirqd != 0 {
				t.Errorf("outsideWorkers = %v, %v; want %v, 0", outside, softirqd, tt.want)
			}
			for _, want := range []string{"NET_TX 0.1/1.0/2.0, NET_RX 0.2/3.0/4.0, TASKLET 0.0/0.0/0.5, TIMER 0.0/5.0/6.0, HRTIMER 0.3/0.0/0.4",
				"only the lab's/only other namespaces' packets or network timers: NET_RX 0.7/9.0, HRTIMER 0.8/10.0", "it timed 50 softirqs in its windows, /proc/softirqs counted 50", "windows (100.0% of the run", tt.note} {
				if !strings.Contains(note, want) {
					t.Errorf("note %q\nlacks %q", note, want)
				}
			}
		})
	}
	t.Run("share not read", func(t *testing.T) {
		a, b := metered(spans)
		if outside, _, note := outsideWorkers(a, b, 0); outside != shared+lab || !strings.Contains(note, "was not read") {
			t.Errorf("outsideWorkers = %v, %q; want %v and a note that the share was not read", outside, note, shared+lab)
		}
	})
	// The meter attached for an eighth of the run timed an eighth of its
	// softirqs: the run's are eight times what it timed, and the note's
	// shares are of the windows' time.
	t.Run("windows", func(t *testing.T) {
		a, b := metered(spans)
		b.MeterOn = a.MeterOn + time.Second/8
		outside, _, note := outsideWorkers(a, b, 0)
		if want := 8 * (shared + lab); outside < want-time.Microsecond || outside > want+time.Microsecond {
			t.Errorf("outsideWorkers with windows of an eighth = %v, want %v", outside, want)
		}
		for _, want := range []string{"windows (12.5% of the run", "NET_TX 0.8/8.0/16.0", "NET_RX 5.6/72.0"} {
			if !strings.Contains(note, want) {
				t.Errorf("note %q\nlacks %q", note, want)
			}
		}
	})
	t.Run("no window", func(t *testing.T) {
		a, b := metered(spans)
		b.MeterOn = a.MeterOn
		a.CPUs, b.CPUs, b.Idle = 2, 2, time.Second
		outside, softirqd, note := outsideWorkers(a, b, 200*ms)
		wo, ws := outsideTasks(a, b, 200*ms)
		if outside != wo || softirqd != ws || note != "" {
			t.Errorf("outsideWorkers with no time attached = %v, %v, %q; want outsideTasks' %v, %v and no note", outside, softirqd, note, wo, ws)
		}
	})
	t.Run("no meter", func(t *testing.T) {
		a, b := metered(spans)
		a.Metered = false
		a.CPUs, b.CPUs, b.Idle = 2, 2, time.Second
		a.Softirqd, b.Softirqd = time.Second, time.Second+3*ms
		outside, softirqd, note := outsideWorkers(a, b, 200*ms)
		wo, ws := outsideTasks(a, b, 200*ms)
		if outside != wo || softirqd != ws || note != "" {
			t.Errorf("outsideWorkers without the meter = %v, %v, %q; want outsideTasks' %v, %v and no note", outside, softirqd, note, wo, ws)
		}
	})
}

// testWorker is the thread name the tests' metered threads take.
var testWorker = threadName{'t', 's', 'l', 't', 'e', 's', 't'}

// openMeter opens the softirq meter for threads named testWorker,
// skipping t when the kernel refuses BPF to this process (failing it
// under TSOLAB_REQUIRE_NETNS=1).
func openMeter(t testing.TB, labNS ...uint64) *softirqMeter {
	t.Helper()
	m, err := openSoftirqMeter(testWorker, labNS)
	if errors.Is(err, unix.EPERM) {
		reason := fmt.Sprintf("BPF refused: %v", err)
		if os.Getenv(netnstest.RequireEnv) == "1" {
			t.Fatalf("%s=1 but %s", netnstest.RequireEnv, reason)
		}
		t.Skip(reason)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if m != nil {
			m.close()
		}
	})
	return m
}

// The owner programs' namespaces are those that exist here, each once:
// another machine's endpoint names none on this one.
func TestNsInodes(t *testing.T) {
	got, err := nsInodes([]string{"", "tsolab-no-such-namespace", ""})
	if err != nil || len(got) != 1 || got[0] == 0 {
		t.Errorf("nsInodes = %v, %v; want this process's namespace once", got, err)
	}
}

// The owner programs tell a softirq's packets by their namespace: a
// loopback stream in this process's namespace is the lab's when the lab
// map holds that namespace (its NET_RX softirqs on this unnamed thread
// then count whole) and another's when it does not (they count not at
// all). Other jobs' traffic on the machine can add softirqs of other
// namespaces to the first case, never the lab's to the second.
func TestSoftirqOwners(t *testing.T) {
	own, err := nsInodes([]string{""})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		labNS      uint64
		class, not softirqClass
		strict     bool // none of not
	}{{"lab's", own[0], classLab, classForeign, false}, {"another's", own[0] + 1, classForeign, classLab, true}} {
		t.Run(tc.name, func(t *testing.T) {
			m := openMeter(t, tc.labNS)
			if m.ownerErr != nil {
				t.Fatalf("owner programs: %v", m.ownerErr)
			}
			t0, _, err := m.read()
			if err != nil {
				t.Fatal(err)
			}
			loopbackBytes(t, 64<<20)
			t1, _, err := m.read()
			if err != nil {
				t.Fatal(err)
			}
			d := t1.sub(t0)[vecNetRx]
			if d[tc.class].Count == 0 || (tc.strict && d[tc.not].Count != 0) {
				t.Errorf("NET_RX softirqs %v %d, %v %d (other tasks %d); want some of the first (none of the second: %v)", tc.class, d[tc.class].Count, tc.not, d[tc.not].Count, d[classOther].Count, tc.strict)
			}
		})
	}
}

// The meter times the NET_RX softirqs that carry a loopback stream; the
// receive runs in the sending thread's softirq, which counts as a
// worker's while the thread is named as the meter's workers are, and as
// another task's when it is not. It counts every softirq /proc/softirqs
// counts while it runs.
func TestSoftirqMeter(t *testing.T) {
	m := openMeter(t)
	kstat := func() [nrSoftirqs]uint64 {
		b, err := os.ReadFile("/proc/softirqs")
		if err != nil {
			t.Fatal(err)
		}
		return parseProcSoftirqs(string(b))
	}
	var seen, counted uint64
	for _, tc := range []struct {
		name  string
		named bool
		class softirqClass
	}{{"named", true, classWorker}, {"unnamed", false, classOther}} {
		// The kernel's counts around the meter's: the meter's window
		// lies inside theirs.
		k0 := kstat()
		t0, _, err := m.read()
		if err != nil {
			t.Fatal(err)
		}
		func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if tc.named {
				saved := getThreadName()
				setThreadName(testWorker)
				defer setThreadName(saved)
			}
			loopbackBytes(t, 256<<20)
		}()
		t1, _, err := m.read()
		if err != nil {
			t.Fatal(err)
		}
		k1 := kstat()
		d := t1.sub(t0)
		if rx := d[vecNetRx][tc.class]; rx.Time <= 0 || rx.Count == 0 {
			t.Errorf("%s sender: NET_RX in class %v: %v in %d softirqs, want some (by class: %+v)", tc.name, tc.class, rx.Time, rx.Count, d[vecNetRx])
		}
		if !tc.named && d[vecNetRx][classWorker].Count > 0 {
			t.Errorf("unnamed sender: NET_RX on the workers' threads %+v, want none", d[vecNetRx][classWorker])
		}
		for v := range nrSoftirqs {
			seen += d.count(v)
			counted += k1[v] - k0[v]
		}
		t.Logf("%s sender: NET_RX by class (workers, idle, other): %+v", tc.name, d[vecNetRx])
	}
	// The kernel counts a softirq just before its entry tracepoint:
	// those between the kernel's reads and the meter's (a preempted
	// test on a loaded machine), and any the tracing machinery did not
	// run for, the meter does not see.
	if float64(seen) < 0.97*float64(counted) || seen > counted {
		t.Errorf("the meter timed %d softirqs, /proc/softirqs counted %d", seen, counted)
	}
	if missed := m.close(); missed > 0 {
		t.Logf("recursion misses: %d", missed)
	}
	m = nil
	t.Logf("%d of %d softirqs timed", seen, counted)
}

// The meter in windows times what the meter attached throughout does,
// once scaled by the time over the windows': two meters on the same
// tracepoints, one in windows, over three seconds of loopback traffic.
// The windows attach for an eighth of the time, so the scaled NET_RX
// time carries a sample's error; the band is wider than any run's seen
// (docs/status.md, session 19).
func TestSoftirqMeterWindows(t *testing.T) {
	whole := openMeter(t)
	windows := openMeter(t)
	w0, _ := readMeter(t, whole)
	p0, on0 := readMeter(t, windows)
	start := time.Now()
	windows.sample()
	for time.Since(start) < 3*time.Second {
		loopbackBytes(t, 64<<20)
	}
	if err := windows.stopSampling(); err != nil {
		t.Fatal(err)
	}
	w1, _ := readMeter(t, whole)
	p1, on1 := readMeter(t, windows)
	span := time.Since(start)
	on := on1 - on0
	if share := on.Seconds() / span.Seconds(); share < 0.05 || share > 0.3 {
		t.Errorf("the windows were attached %v of %v (%.1f%%), want about an eighth", on, span, 100*share)
	}
	sum := func(d softirqTimes) time.Duration {
		return d.sum([]softirqVec{vecNetRx}, classWorker, classIdle, classOther)
	}
	all, sampled := sum(w1.sub(w0)), sum(p1.sub(p0))
	scaled := time.Duration(float64(sampled) * span.Seconds() / on.Seconds())
	if all <= 0 {
		t.Fatalf("the whole meter timed no NET_RX over %v of loopback traffic", span)
	}
	if r := scaled.Seconds() / all.Seconds(); r < 0.6 || r > 1.6 {
		t.Errorf("NET_RX: the windows' %v scaled by %v/%v is %v, %.2f of the whole meter's %v; want 0.6-1.6", sampled, span, on, scaled, r, all)
	}
	t.Logf("NET_RX: whole %v, windows %v over %v of %v, scaled %v (%.2f)", all, sampled, on, span, scaled, scaled.Seconds()/all.Seconds())
}

// readMeter reads m's totals and attached time, failing t if it cannot.
func readMeter(t testing.TB, m *softirqMeter) (softirqTimes, time.Duration) {
	t.Helper()
	d, on, err := m.read()
	if err != nil {
		t.Fatal(err)
	}
	return d, on
}

// BenchmarkSoftirqMeterWindow measures a window's edges: detaching
// the meter's programs and attaching them again (the meter runs ~1.4
// windows a second), in time and in this process's CPU:
//
//	go test -run - -bench SoftirqMeterWindow ./engine/kernel
func BenchmarkSoftirqMeterWindow(b *testing.B) {
	m := openMeter(b)
	c0 := processCPU()
	for b.Loop() {
		m.detach()
		if err := m.reattach(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
}

// A run's workers take a name of 15 bytes that every Worker of the run
// computes alike and another lab's run does not share; the thread gets
// its own name back.
func TestWorkerName(t *testing.T) {
	job := func(ns string) Job {
		return Job{Scenario: "tso=false", Workload: &config.Workload{Name: "bulk"},
			Endpoints: []Endpoint{{Server: "rx0", ClientNS: ns + ".tx", ServerNS: ns + ".rx"}}}
	}
	a, b, c := workerName(job("tsl.a")), workerName(job("tsl.a")), workerName(job("tsl.b"))
	if a != b || a == c {
		t.Errorf("workerName: %q, %q for one run, %q for another; want the first two equal and the third apart", a, b, c)
	}
	if a[15] != 0 || a[14] == 0 || !strings.HasPrefix(string(a[:]), "tsl") {
		t.Errorf("workerName = %q, want tsl and 12 hex digits", a)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := getThreadName()
	m := cpuMeter{name: a}
	m.start()
	if got := getThreadName(); got != a {
		t.Errorf("thread name while metered = %q, want %q", got, a)
	}
	m.stop()
	if got := getThreadName(); got != before {
		t.Errorf("thread name after = %q, want %q back", got, before)
	}
}

// loopbackBytes sends n bytes to itself over 127.0.0.1.
func loopbackBytes(t testing.TB, n int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- -1
			return
		}
		defer c.Close()
		k, _ := io.Copy(io.Discard, c)
		got <- k
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for sent := int64(0); sent < n; sent += int64(len(buf)) {
		if _, err := c.Write(buf); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	if k := <-got; k < n {
		t.Fatalf("received %d of %d bytes", k, n)
	}
}

// BenchmarkSoftirqMeter measures what the meter's programs cost a
// softirq (the kernel's run-time statistics, BPF_ENABLE_STATS, while a
// loopback stream of 64 MB an iteration runs):
//
//	go test -run - -bench SoftirqMeter -benchtime 4x ./engine/kernel
//
// entry_ns and exit_ns are a program run's mean time; skb_ns and
// hrtimer_ns the owner programs', with this process's namespace as the
// lab's (a packet received, a timer expired) from a sender that is not
// a worker, skb_worker_ns the skb program's from a sender named as the
// workers are (it returns at once), skb_runs_per_softirq how many
// packets it saw per softirq exit.
func BenchmarkSoftirqMeter(b *testing.B) {
	st, err := ebpf.EnableStats(unix.BPF_STATS_RUN_TIME)
	if err != nil {
		b.Skipf("BPF run-time statistics: %v", err)
	}
	defer st.Close()
	own, err := nsInodes([]string{""})
	if err != nil {
		b.Fatal(err)
	}
	m, err := openSoftirqMeter(testWorker, own)
	if err != nil {
		b.Skipf("softirq meter: %v", err)
	}
	defer m.close()
	if m.ownerErr != nil {
		b.Fatalf("owner programs: %v", m.ownerErr)
	}
	stats := func() (out [4]ebpf.ProgramStats) {
		for i := range out {
			s, err := m.progs[i].Stats()
			if err != nil {
				b.Fatal(err)
			}
			out[i] = *s
		}
		return out
	}
	mean := func(a, z ebpf.ProgramStats) float64 {
		return float64((z.Runtime - a.Runtime).Nanoseconds()) / float64(max(z.RunCount-a.RunCount, 1))
	}
	s0 := stats()
	for range b.N {
		loopbackBytes(b, 64<<20)
	}
	s1 := stats()
	runtime.LockOSThread()
	saved := getThreadName()
	setThreadName(testWorker)
	for range b.N {
		loopbackBytes(b, 64<<20)
	}
	setThreadName(saved)
	runtime.UnlockOSThread()
	s2 := stats()
	for i, unit := range []string{"skb_ns", "hrtimer_ns", "entry_ns", "exit_ns"} {
		b.ReportMetric(mean(s0[i], s1[i]), unit)
	}
	b.ReportMetric(mean(s1[0], s2[0]), "skb_worker_ns")
	b.ReportMetric(float64(s1[0].RunCount-s0[0].RunCount)/float64(max(s1[3].RunCount-s0[3].RunCount, 1)), "skb_runs_per_softirq")
}

// Without the meter the notes say why and what the figures count
// instead; with it, its note and the program runs the kernel skipped.
func TestSoftirqNotes(t *testing.T) {
	r := &run{sirqErr: errors.New("load the softirq_exit program: operation not permitted")}
	got := r.softirqNotes("")
	if len(got) != 1 || !strings.Contains(got[0], "operation not permitted") || !strings.Contains(got[0], "softirq time no thread ran") {
		t.Errorf("notes without the meter = %q, want one naming why and what is counted instead", got)
	}
	r = &run{sirqMissed: 3}
	got = r.softirqNotes("softirq time timed by eBPF ...")
	if len(got) != 2 || got[0] != "softirq time timed by eBPF ..." || !strings.Contains(got[1], "skipped its programs 3 times") {
		t.Errorf("notes with the meter = %q, want its note and the 3 skipped runs", got)
	}
}
