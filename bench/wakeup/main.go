// Command wakeup measures this machine's thread wake-up latency and
// context-switch cost, the two figures a CPU profile's scheduler gives
// the model (engine/sim sched.go, Scheduler). Two OS threads of this
// process ping-pong one byte over a pair of pipes (or a TCP connection
// on loopback), each blocked in read(2) until the other writes, and
// every round trip is timed (clock_gettime through the vDSO):
//
//   - self: one thread writes and reads both pipes itself: the four
//     syscalls of a round trip, no wake-up, no switch;
//   - same: both threads pinned to one CPU: the four syscalls and two
//     context switches (the woken thread runs when the waker blocks);
//   - cross: the threads pinned to two CPUs: the four syscalls and two
//     wake-ups of a thread whose CPU went idle (try_to_wake_up, the
//     IPI, the idle CPU's exit and switch).
//
// Half a round trip less half of self's is, for same, one context switch
// (lmbench's lat_ctx), and for cross, one wake-up of a thread on an idle
// CPU until it runs its read's return. With -perf the cross case runs
// again under `perf record -a -e sched:sched_waking,sched:sched_switch`
// and the kernel's own wake-to-run delay of each wake-up (sched_waking of
// a thread, where try_to_wake_up starts, to the sched_switch onto it, ns)
// is printed: what the model's
// WakeLatency is. -parse FILE -comm NAME reads a `perf script --ns`
// output instead (e.g. of a kernel-engine run) and prints the
// wake-to-run delays of the threads of that name.
//
//	go build -o /tmp/wakeup ./bench/wakeup && /tmp/wakeup -rounds 50000 -perf
//
// It is a benchmark driver, not part of the product; run.sh runs it in
// alternating rounds and prints the machine's load with each. Session 10
// on the 2-vCPU development VM (load 5.5-13, docs/engine.md, Scheduler):
// a context switch 581-640 ns (same - self), a wake-up across vCPUs
// 16.4-21.1 us wake-to-run (perf, medians of the rounds), the waking
// write 10.1-11.9 us; engine/sim's `vm-halt` scheduler is made of them.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	rounds := flag.Int("rounds", 20000, "round trips per case")
	cases := flag.String("cases", "self,same,cross", "cases to run, in order: self, same, cross")
	transport := flag.String("transport", "pipe", "pipe, or tcp (a connection on 127.0.0.1)")
	perf := flag.Bool("perf", false, "also run cross under perf record and print the kernel's wake-to-run delays")
	only := flag.String("only", "", "run this one case and print nothing (perf's child)")
	parse := flag.String("parse", "", "read this `perf script --ns` output and print wake-to-run delays of -comm's threads")
	comm := flag.String("comm", "wakeup", "thread name whose wake-ups -parse counts")
	flag.Parse()
	runtime.GOMAXPROCS(runtime.NumCPU() + 2)
	if *parse != "" {
		report(*parse, *comm)
		return
	}
	if *only != "" {
		pingPong(*only, *transport, *rounds)
		return
	}
	for _, c := range strings.Split(*cases, ",") {
		half, write := pingPong(c, *transport, *rounds)
		fmt.Printf("%-5s %-4s half round trip ns: %s\n", c, *transport, summary(half))
		if write != nil {
			fmt.Printf("%-5s %-4s waking write ns:    %s\n", c, *transport, summary(write))
		}
	}
	if *perf {
		traced(*transport, *rounds)
	}
}

// pingPong runs one case and returns every round trip's half and every
// waking write, ns.
func pingPong(c, transport string, rounds int) (half, write []float64) {
	a, b := endpoints(transport)
	cpuA, cpuB := -1, -1
	switch c {
	case "self":
		return selfRounds(a, b, rounds)
	case "same":
		cpuA, cpuB = 0, 0
	case "cross":
		cpuA, cpuB = 0, 1
	default:
		fail(fmt.Errorf("case %q: want self, same or cross", c))
	}
	done := make(chan error, 1)
	go func() { done <- echo(b, cpuB, rounds) }()
	half, write = timed(a, cpuA, rounds)
	if err := <-done; err != nil {
		fail(err)
	}
	a.close()
	b.close()
	return half, write
}

// end is one thread's side: the descriptor it reads and the one it
// writes, both blocking.
type end struct{ r, w int }

func (e end) close() {
	unix.Close(e.r)
	if e.w != e.r {
		unix.Close(e.w)
	}
}

// endpoints makes the two sides: two pipes, or a TCP connection on
// loopback (each side reads and writes its socket; TCP_NODELAY).
func endpoints(transport string) (end, end) {
	switch transport {
	case "pipe":
		var p, q [2]int
		must(unix.Pipe(p[:]))
		must(unix.Pipe(q[:]))
		return end{r: q[0], w: p[1]}, end{r: p[0], w: q[1]}
	case "tcp":
		return tcpPair()
	}
	fail(fmt.Errorf("transport %q: want pipe or tcp", transport))
	return end{}, end{}
}

func tcpPair() (end, end) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		must(err)
		accepted <- c
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	must(err)
	s := <-accepted
	fd := func(c net.Conn) int {
		f, err := c.(*net.TCPConn).File() // a blocking duplicate
		must(err)
		c.Close()
		n, err := unix.Dup(int(f.Fd()))
		must(err)
		f.Close()
		must(unix.SetNonblock(n, false))
		must(unix.SetsockoptInt(n, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1))
		return n
	}
	x, y := fd(c), fd(s)
	return end{r: x, w: x}, end{r: y, w: y}
}

// lockTo locks the calling goroutine to its OS thread and, for cpu >= 0,
// that thread to the CPU.
func lockTo(cpu int) {
	runtime.LockOSThread()
	if cpu < 0 {
		return
	}
	var set unix.CPUSet
	set.Set(cpu)
	must(unix.SchedSetaffinity(0, &set))
}

// timed is the side that starts each round trip and times it: the
// round trip's half, and the write that wakes the other side (the
// waker's part of a wake-up: try_to_wake_up and, across CPUs, the IPI).
func timed(e end, cpu, rounds int) (half, write []float64) {
	lockTo(cpu)
	defer runtime.UnlockOSThread()
	buf := []byte{1}
	half, write = make([]float64, 0, rounds), make([]float64, 0, rounds)
	for i := 0; i < rounds+rounds/10; i++ { // the first tenth warms up
		t := time.Now()
		writeFull(e.w, buf)
		w := time.Now()
		readFull(e.r, buf)
		if i >= rounds/10 {
			half = append(half, float64(time.Since(t).Nanoseconds())/2)
			write = append(write, float64(w.Sub(t).Nanoseconds()))
		}
	}
	return half, write
}

// echo is the other side: it returns each byte it reads.
func echo(e end, cpu, rounds int) error {
	lockTo(cpu)
	defer runtime.UnlockOSThread()
	buf := []byte{0}
	for i := 0; i < rounds+rounds/10; i++ {
		readFull(e.r, buf)
		writeFull(e.w, buf)
	}
	return nil
}

// selfRounds does a round trip's four syscalls on one thread.
func selfRounds(a, b end, rounds int) (half, write []float64) {
	lockTo(0)
	defer runtime.UnlockOSThread()
	buf := []byte{1}
	d := make([]float64, 0, rounds)
	for i := 0; i < rounds+rounds/10; i++ {
		t := time.Now()
		writeFull(a.w, buf)
		readFull(b.r, buf)
		writeFull(b.w, buf)
		readFull(a.r, buf)
		if i >= rounds/10 {
			d = append(d, float64(time.Since(t).Nanoseconds())/2)
		}
	}
	a.close()
	b.close()
	return d, nil
}

// writeFull and readFull make the raw system call: the Go runtime does
// not see the thread block (no entersyscall, no P handed off by sysmon
// and taken back on return, which doubled the cross case's median), so
// what is timed is the kernel's. Nothing else of the process runs
// meanwhile; main raises GOMAXPROCS so that the two locked threads
// leave a P for the runtime.
func writeFull(fd int, b []byte) {
	n, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 || int(n) != len(b) {
		fail(fmt.Errorf("write: %d, %v", n, errno))
	}
}

func readFull(fd int, b []byte) {
	n, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 || int(n) != len(b) {
		fail(fmt.Errorf("read: %d, %v", n, errno))
	}
}

// traced runs the cross case in a child under perf record and reports
// the kernel's wake-to-run delays of the child's threads.
func traced(transport string, rounds int) {
	dir, err := os.MkdirTemp("", "wakeup")
	must(err)
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	must(err)
	data, script := dir+"/perf.data", dir+"/perf.txt"
	rec := exec.Command("perf", "record", "-q", "-a", "-o", data, "-e", "sched:sched_waking,sched:sched_switch", "--",
		self, "-only", "cross", "-transport", transport, "-rounds", strconv.Itoa(rounds))
	rec.Stderr = os.Stderr
	must(rec.Run())
	out, err := os.Create(script)
	must(err)
	scr := exec.Command("perf", "script", "--ns", "-i", data, "-F", "tid,cpu,time,event,trace")
	scr.Stdout, scr.Stderr = out, os.Stderr
	must(scr.Run())
	must(out.Close())
	report(script, "wakeup")
}

// report prints the wake-to-run delays of comm's threads in a perf
// script output, and a count of wake-ups onto a CPU that was idle.
func report(path, comm string) {
	f, err := os.Open(path)
	must(err)
	defer f.Close()
	d, idle := wakeToRun(f, comm)
	fmt.Printf("perf  wake-to-run ns (%s, all wake-ups):        %s\n", comm, summary(d))
	fmt.Printf("perf  wake-to-run ns (%s, onto an idle CPU):    %s\n", comm, summary(idle))
}

// wakeToRun pairs each sched_waking of a thread named comm (the start of
// try_to_wake_up, on the waker's CPU) with the next sched_switch onto it
// and returns the delays, ns: all, and those whose target CPU was
// running its idle task when the wake-up came.
func wakeToRun(r io.Reader, comm string) (all, idle []float64) {
	woke := map[string]int64{}     // tid -> wake-up time
	wokeIdle := map[string]bool{}  // tid -> its target CPU was idle
	running := map[string]string{} // cpu -> next_comm of its last switch
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		ev, t, cpu, kv := parseLine(sc.Text())
		switch ev {
		case "sched:sched_waking":
			if _, ok := woke[kv["pid"]]; !ok && strings.HasPrefix(kv["comm"], comm) {
				woke[kv["pid"]] = t
				target := strings.TrimLeft(kv["target_cpu"], "0")
				wokeIdle[kv["pid"]] = strings.HasPrefix(running[target], "swapper")
			}
		case "sched:sched_switch":
			running[strings.TrimLeft(cpu, "0")] = kv["next_comm"]
			if w, ok := woke[kv["next_pid"]]; ok {
				all = append(all, float64(t-w))
				if wokeIdle[kv["next_pid"]] {
					idle = append(idle, float64(t-w))
				}
				delete(woke, kv["next_pid"])
			}
		}
	}
	must(sc.Err())
	return all, idle
}

// parseLine splits a `perf script --ns -F tid,cpu,time,event,trace` line
// ("  1234 [001] 58938.856701123: sched:sched_switch: prev_comm=a ...")
// into its event, time (ns), CPU and key=value fields.
func parseLine(s string) (ev string, t int64, cpu string, kv map[string]string) {
	f := strings.Fields(s)
	if len(f) < 4 {
		return "", 0, "", nil
	}
	cpu = strings.Trim(f[1], "[]")
	sec, ns, _ := strings.Cut(strings.TrimSuffix(f[2], ":"), ".")
	s1, err1 := strconv.ParseInt(sec, 10, 64)
	n1, err2 := strconv.ParseInt(ns, 10, 64)
	if err1 != nil || err2 != nil {
		return "", 0, "", nil
	}
	kv = map[string]string{}
	for _, x := range f[4:] {
		if k, v, ok := strings.Cut(x, "="); ok {
			kv[k] = v
		}
	}
	return strings.TrimSuffix(f[3], ":"), s1*1e9 + n1, cpu, kv
}

// summary is a distribution's count, median, spread and tail.
func summary(d []float64) string {
	if len(d) == 0 {
		return "n=0"
	}
	slices.Sort(d)
	q := func(p float64) float64 { return d[min(int(p*float64(len(d))), len(d)-1)] }
	return fmt.Sprintf("n=%d p5 %.0f p25 %.0f median %.0f p75 %.0f p95 %.0f p99 %.0f max %.0f",
		len(d), q(0.05), q(0.25), q(0.5), q(0.75), q(0.95), q(0.99), d[len(d)-1])
}

func must(err error) {
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "wakeup:", err)
	os.Exit(1)
}
