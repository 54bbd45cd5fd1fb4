// Command goloop runs tsolab's stream loops (engine/kernel/workload.go:
// streamSend and drain) as a bare Go program, the way cloop runs them in
// C: one process, a sending and a receiving goroutine, each locked to its
// thread, non-blocking sockets, 128 KiB reads, polls that time out after
// 8 ms; no engine, no sampler, no counters. run.sh -G runs it in every
// round beside iperf3, cloop and tsolab, so that the gap between tsolab
// and cloop (what the Go side adds) can be cut in steps: each variant
// adds one thing tsolab's workers do. A benchmark tool, not part of the
// product.
//
//	goloop [-v STEPS] TX_NETNS RX_NETNS RX_ADDR PORT SECONDS WRITE_SIZE
//
// STEPS is "bare" or a '+'-joined list of:
//
//	procs  GOMAXPROCS 3, as the engine holds it for one connection
//	       (holdProcs(2*connections+1)); without it the runtime's default
//	pass   the yielder: the monotonic clock read after every call, a
//	       runtime.Gosched every 8 ms (passEvery) on the locked thread,
//	       polls that time out at the next pass
//	upass  pass, with the goroutine unlocked from its thread for the
//	       Gosched (UnlockOSThread, Gosched, LockOSThread): the runtime
//	       reschedules it on the thread it was on when no other goroutine
//	       waits, instead of parking that thread and handing its P to
//	       another (stoplockedm, startlockedm); ahead only under prio.sh
//	       (nice -20): the engine's workers with it lost at normal
//	       priority (engine/kernel doc.go, "Against iperf3")
//	wpass  pass, and a pass due within half a period is made when the
//	       worker is about to poll (its socket not ready: a sender's
//	       buffer full, a receiver's queue empty), where the worker
//	       waits anyway, instead of between two calls of the data path
//	wpass1 wpass for the sender only
//	x8     pass every 1 ms instead of 8 (with pass or upass): eight times
//	       the passes, so that what a pass costs shows above the rounds'
//	       spread
//	pin    the sending thread pinned to CPU 0, the receiving one to CPU 1
//	       (a test of placement; cloop does the same with CLOOP_PIN=0,1)
//	meter  the cpuMeter: the thread's CPU clock read around every pass
//	raw    read, write and poll through syscall.RawSyscall, which skips
//	       the runtime's entersyscall/exitsyscall (the others go through
//	       golang.org/x/sys/unix, as tsolab's do)
//	off16  the send buffer starts 16 bytes into a page, as glibc's malloc
//	       places cloop's (Go's 128 KiB make is page-aligned)
//	mmap   both buffers are their own anonymous mapping, 16 bytes in, as
//	       glibc's malloc gives cloop's (a request of 128 KiB or more is
//	       an mmap), not memory of the Go heap
//
// The sender writes one reused WRITE_SIZE buffer: a write cut short
// writes the rest at once, a refused one (EAGAIN) writes again, and ten
// refused in a row since the last whole write poll for room (fullTries);
// the receiver polls after a read that found less than 128 KiB. The main
// goroutine shuts the sending side SECONDS after both start, as the
// engine's sampler does at the deadline. It prints, as cloop does,
// throughput_bps (everything read, over the start to the receiver's end)
// and CPU in % of one core: task_tx_pct is the sending thread's plus every
// other thread of the process (as the driver counts tsolab's), task_rx_pct
// the receiving thread's, task_other_pct the other threads' part of
// task_tx_pct; passes_tx and passes_rx are each worker's passes as
// N/W/MS/WMS: how many, how many of them before a poll (wpass), the wall
// time of all of them and of those before a poll, in ms.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	recvBuf   = 128 << 10            // what a read asks for, as tsolab's drain
	fullTries = 10                   // refused writes before a poll, as tsolab's
	passEvery = 8 * time.Millisecond // as tsolab's yielder
)

// steps is what a variant adds to the bare loops.
type steps struct {
	procs, pass, upass, wpass, wpass1, x8, pin, meter, raw, off16, mmap bool
}

func parseSteps(s string) (steps, error) {
	var st steps
	if s == "bare" {
		return st, nil
	}
	for _, name := range strings.Split(s, "+") {
		switch name {
		case "procs":
			st.procs = true
		case "pass":
			st.pass = true
		case "upass":
			st.pass, st.upass = true, true
		case "wpass":
			st.pass, st.wpass = true, true
		case "wpass1":
			st.pass, st.wpass, st.wpass1 = true, true, true
		case "x8":
			st.x8 = true
		case "pin":
			st.pin = true
		case "meter":
			st.meter = true
		case "raw":
			st.raw = true
		case "off16":
			st.off16 = true
		case "mmap":
			st.mmap = true
		default:
			return st, fmt.Errorf("unknown step %q: want bare or procs, pass, upass, wpass, wpass1, x8, pin, meter, raw, off16, mmap joined by +", name)
		}
	}
	return st, nil
}

// calls are the three system calls of the loops, through x/sys/unix or
// RawSyscall (raw).
type calls struct{ raw bool }

func (c calls) rw(nr uintptr, fd int, b []byte) (int, error) {
	if !c.raw {
		if nr == unix.SYS_WRITE {
			return unix.Write(fd, b)
		}
		return unix.Read(fd, b)
	}
	n, _, e := syscall.RawSyscall(nr, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

func (c calls) poll(fd int, ev int16, ms int) {
	p := []unix.PollFd{{Fd: int32(fd), Events: ev}}
	if !c.raw {
		unix.Poll(p, ms)
		return
	}
	syscall.RawSyscall(unix.SYS_POLL, uintptr(unsafe.Pointer(&p[0])), 1, uintptr(ms))
}

// loop is one worker's pacing: its polls and, with pass, its passes
// through the scheduler; cpu is its thread's CPU outside the passes.
type loop struct {
	st  steps
	c   calls
	due time.Time
	cpu time.Duration
	t0  time.Duration
	// passes, waitPasses and passWall count the passes, those made
	// before a poll (wpass) and their wall time.
	passes, waitPasses int
	passWall, waitWall time.Duration
	// sender: wpass applies (the receiver's only with wpass, not wpass1)
	sender bool
}

func threadCPU() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

// every is the time between passes.
func (l *loop) every() time.Duration {
	if l.st.x8 {
		return passEvery / 8
	}
	return passEvery
}

func (l *loop) start() {
	l.t0 = threadCPU()
	l.due = time.Now().Add(l.every())
}

func (l *loop) end() { l.cpu += threadCPU() - l.t0 }

// after passes when a pass is due (pass only).
func (l *loop) after() {
	if l.st.pass && time.Until(l.due) <= 0 {
		l.pass(false)
	}
}

// pass goes through the scheduler; waiting says it was made before a
// poll (wpass), which the counts tell apart.
func (l *loop) pass(waiting bool) {
	t := time.Now()
	l.due = t.Add(l.every())
	if l.st.meter {
		l.end()
	}
	if l.st.upass {
		runtime.UnlockOSThread()
		runtime.Gosched()
		runtime.LockOSThread()
	} else {
		runtime.Gosched()
	}
	if l.st.meter {
		l.t0 = threadCPU()
	}
	l.passes++
	if waiting {
		l.waitPasses++
		l.waitWall += time.Since(t)
	}
	l.passWall += time.Since(t)
}

// wait polls fd for ev for 8 ms, or (pass) until the next pass; with
// wpass, a pass due within half a period is made first, while the
// socket is not ready anyway.
func (l *loop) wait(fd int, ev int16) {
	ms := int(passEvery / time.Millisecond)
	if l.st.pass {
		left := time.Until(l.due)
		if l.st.wpass && (l.sender || !l.st.wpass1) && left < l.every()/2 {
			l.pass(true)
			left = time.Until(l.due)
		}
		if left <= 0 {
			l.after()
			return
		}
		ms = int((left + time.Millisecond - 1) / time.Millisecond)
	}
	l.c.poll(fd, ev, ms)
	l.after()
}

// counts is the loop's passes for the output line: all, those made
// before a poll, the wall time in ms of all and of those before a poll.
func (l *loop) counts() string {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return fmt.Sprintf("%d/%d/%.1f/%.1f", l.passes, l.waitPasses, ms(l.passWall), ms(l.waitWall))
}

func send(fd, ws int, l *loop) {
	mem := l.st.alloc(ws + 4096)
	buf := mem[:ws]
	if l.st.off16 || l.st.mmap {
		buf = mem[16 : 16+ws]
	}
	for i := range buf {
		buf[i] = byte(i)
	}
	l.start()
	off, refused := 0, 0
	for {
		n, err := l.c.rw(unix.SYS_WRITE, fd, buf[off:])
		if n > 0 {
			if off += n; off == len(buf) {
				off = 0
			}
		}
		if errors.Is(err, unix.EAGAIN) || (n > 0 && off != 0) {
			if n < 0 {
				if refused++; refused >= fullTries {
					refused = 0
					l.wait(fd, unix.POLLOUT)
				}
			}
			continue
		}
		refused = 0
		if err != nil && err != unix.EINTR {
			break // the deadline shut the sending side
		}
		l.after()
	}
	l.end()
}

func receive(fd int, l *loop) (got int64) {
	buf := l.st.alloc(recvBuf + 4096)[:recvBuf]
	if l.st.mmap {
		buf = buf[16 : 16+recvBuf : 16+recvBuf]
	}
	l.start()
	for {
		n, err := l.c.rw(unix.SYS_READ, fd, buf)
		if n == 0 && err == nil {
			break
		}
		if n > 0 {
			got += int64(n)
		}
		switch {
		case errors.Is(err, unix.EAGAIN) || (err == nil && n < len(buf)):
			l.wait(fd, unix.POLLIN)
		case err != nil && err != unix.EINTR:
			fail("read", err)
		default:
			l.after()
		}
	}
	l.end()
	return got
}

// alloc gives n bytes from the Go heap, or with the mmap step from an
// anonymous mapping of their own.
func (st steps) alloc(n int) []byte {
	if !st.mmap {
		return make([]byte, n)
	}
	b, err := unix.Mmap(-1, 0, n+4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		fail("mmap", err)
	}
	return b
}

// pinTo pins the calling thread (locked) to CPU cpu (pin only).
func (st steps) pinTo(cpu int) {
	if !st.pin {
		return
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		fail("sched_setaffinity", err)
	}
}

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "goloop: %s: %v\n", what, err)
	os.Exit(1)
}

// enter moves the calling thread into network namespace name.
func enter(name string) {
	f, err := unix.Open("/run/netns/"+name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err == nil {
		err = unix.Setns(f, unix.CLONE_NEWNET)
		unix.Close(f)
	}
	if err != nil {
		fail("enter "+name, err)
	}
}

// connect makes the pair of sockets on a thread of their own, which it
// leaves locked so that the runtime ends it (it is in a foreign
// namespace): the listener in the receiver's namespace, the client in the
// sender's.
func connect(txNS, rxNS string, sa *unix.SockaddrInet4) (cfd, sfd int) {
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(done)
		enter(rxNS)
		lfd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.SetsockoptInt(lfd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
			if err = unix.Bind(lfd, sa); err == nil {
				err = unix.Listen(lfd, 1)
			}
		}
		if err != nil {
			fail("listen", err)
		}
		enter(txNS)
		if cfd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err == nil {
			err = unix.Connect(cfd, sa)
		}
		if err != nil {
			fail("connect", err)
		}
		if sfd, _, err = unix.Accept4(lfd, unix.SOCK_CLOEXEC); err != nil {
			fail("accept", err)
		}
		unix.Close(lfd)
	}()
	<-done
	for _, fd := range []int{cfd, sfd} {
		if err := unix.SetNonblock(fd, true); err != nil {
			fail("set non-blocking", err)
		}
	}
	return cfd, sfd
}

func processCPU() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	variant := flag.String("v", "bare", "variant: bare, or steps procs, pass, upass, wpass, wpass1, x8, pin, meter, raw, off16, mmap joined by +")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: goloop [-v STEPS] TX_NETNS RX_NETNS RX_ADDR PORT SECONDS WRITE_SIZE")
		flag.PrintDefaults()
	}
	flag.Parse()
	st, err := parseSteps(*variant)
	a := flag.Args()
	if err != nil || len(a) != 6 {
		if err != nil {
			fmt.Fprintln(os.Stderr, "goloop:", err)
		}
		flag.Usage()
		os.Exit(2)
	}
	addr, err1 := netip.ParseAddr(a[2])
	port, err2 := strconv.Atoi(a[3])
	secs, err3 := strconv.ParseFloat(a[4], 64)
	ws, err4 := strconv.Atoi(a[5])
	if err := errors.Join(err1, err2, err3, err4); err != nil || !addr.Is4() || secs <= 0 || ws <= 0 {
		fmt.Fprintln(os.Stderr, "goloop: bad address, port, duration or write size")
		os.Exit(2)
	}
	if st.procs {
		runtime.GOMAXPROCS(3)
	}
	cfd, sfd := connect(a[0], a[1], &unix.SockaddrInet4{Port: port, Addr: addr.As4()})

	var wg, ready sync.WaitGroup
	startc := make(chan struct{})
	tx, rx := &loop{st: st, c: calls{st.raw}, sender: true}, &loop{st: st, c: calls{st.raw}}
	var got int64
	var rxEnd time.Time
	wg.Add(2)
	ready.Add(2)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		st.pinTo(0)
		ready.Done()
		<-startc
		send(cfd, ws, tx)
	}()
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		st.pinTo(1)
		ready.Done()
		<-startc
		got = receive(sfd, rx)
		rxEnd = time.Now()
	}()
	ready.Wait()
	p0, t0 := processCPU(), time.Now()
	close(startc)
	time.Sleep(time.Duration(secs * float64(time.Second)))
	unix.Shutdown(cfd, unix.SHUT_WR)
	wg.Wait()
	other := processCPU() - p0 - tx.cpu - rx.cpu
	el := rxEnd.Sub(t0)
	pct := func(d time.Duration) float64 { return 100 * float64(d) / float64(el) }
	fmt.Printf("throughput_bps=%.0f task_tx_pct=%.1f task_rx_pct=%.1f task_other_pct=%.1f passes_tx=%s passes_rx=%s\n",
		float64(got)*8/el.Seconds(), pct(tx.cpu+other), pct(rx.cpu), pct(other), tx.counts(), rx.counts())
}
