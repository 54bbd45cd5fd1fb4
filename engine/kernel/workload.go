package kernel

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/config"
)

// limits says when an rr client ends: at a deadline, after a byte count,
// or both (whichever comes first). It checks the clock once per
// transaction, which times itself anyway. Stream and sendfile loops never
// read the clock: the run shuts their sockets' sending side at the
// deadline (run.stopSending).
type limits struct {
	deadline time.Time // zero = none
	bytes    int64     // per connection; 0 = none
}

func (l limits) done(sent int64) bool {
	if l.bytes > 0 && sent >= l.bytes {
		return true
	}
	return !l.deadline.IsZero() && !time.Now().Before(l.deadline)
}

func (r *run) limits() limits {
	var l limits
	if r.w.Duration > 0 {
		l.deadline = time.Now().Add(r.w.Duration)
	}
	l.bytes = r.w.Bytes
	return l
}

// byteLimit is what a stream or sendfile connection sends at most:
// bytes, else (sendfile with neither duration nor bytes) the file once,
// else no limit.
func (r *run) byteLimit() int64 {
	switch {
	case r.w.Bytes > 0:
		return r.w.Bytes
	case r.w.Kind == config.Sendfile && r.w.Duration <= 0:
		return r.w.FileSize
	}
	return math.MaxInt64
}

// spawnWorkers starts a sending and a receiving thread per connection;
// they wait for r.startc.
func (r *run) spawnWorkers() error {
	ws := r.w.WriteCall()
	if r.w.Duration <= 0 && r.w.Bytes <= 0 && !(r.w.Kind == config.Sendfile && r.w.FileSize > 0) {
		return errors.New("neither duration nor bytes is set: give one")
	}
	// Check everything before the first worker starts waiting.
	switch r.w.Kind {
	case config.Stream, config.Sendfile:
	case config.RR:
		if r.w.RequestSize <= 0 || r.w.ResponseSize <= 0 {
			return fmt.Errorf("rr needs request_size and response_size > 0 (got %d and %d)", r.w.RequestSize, r.w.ResponseSize)
		}
	default:
		return fmt.Errorf("unknown workload kind %q: use stream, rr or sendfile", r.w.Kind)
	}
	for _, c := range r.conns {
		c := c
		switch r.w.Kind {
		case config.Stream:
			r.spawnFor(c, sideTx, func(m *cpuMeter) error { return streamSend(c.client, ws, r.byteLimit(), &r.stopped, m) })
			r.spawnFor(c, sideRx, func(m *cpuMeter) error { return drain(c.server, r.w.ReadCall(), c, m) })
		case config.Sendfile:
			size := r.w.FileSize
			r.spawnFor(c, sideTx, func(m *cpuMeter) error { return sendFile(c.client, r.file, size, r.byteLimit(), &r.stopped, m) })
			r.spawnFor(c, sideRx, func(m *cpuMeter) error { return drain(c.server, r.w.ReadCall(), c, m) })
		case config.RR:
			req, resp := r.w.RequestSize, r.w.ResponseSize
			r.spawnFor(c, sideTx, func(*cpuMeter) error {
				lat, err := rrClient(c.client, req, resp, r.limits(), c)
				r.mu.Lock()
				r.lat = append(r.lat, lat...)
				r.mu.Unlock()
				return err
			})
			r.spawnFor(c, sideRx, func(*cpuMeter) error { return rrServer(c.server, req, resp, c) })
		}
	}
	return nil
}

// passEvery is how often a stream or sendfile worker passes through the
// Go scheduler (runtime.Gosched): less than sysmon's longest sleep (10
// ms), so that each of sysmon's looks finds the worker's P has scheduled
// since the last.
const passEvery = 8 * time.Millisecond

// yielder makes a worker pass through the Go scheduler every passEvery.
// A goroutine that only ever makes system calls never does, and the
// runtime's sysmon thread then takes its P back at every look once it
// has run one goroutine for 10 ms: sysmon polls every 20 us after each
// time it took a P, and the worker reacquires a P after every call,
// thousands of wake-ups a second on the data path's cores (13-15% of a
// core at 10 Gbit/s here). With a pass every few milliseconds and an
// idle P (holdProcs), sysmon finds nothing to take and sleeps 10 ms.
//
// The worker passes locked to its thread (pass). A locked goroutine's
// pass parks its thread until two others have run (the runtime's
// stoplockedm hands the P to another M, whose scheduler finds the
// goroutine and hands the P back through startlockedm): BenchmarkYielderPass
// (two workers making system calls, a pass every 8 ms, autogroup nice
// -20, load 12-17, 2 December) measured a pass stopping the worker
// 73-214 us on average locked and 23-29 us unlocked. Unlocked passes were
// tried (session 8) and taken back: on the quiet machine they changed
// nothing (bench/iperf-compare -d 3 -r 9 -B with locked passes, load
// 0.1-4: throughput unlocked/locked 102.9% and 99.8% with one connection,
// TSO on and off, 99.4% and 101.2% with four), and under load at normal
// priority they lost the data path: tso-basics' TSO-off MTU 1500 cell (8
// streams) fell from 3.0-5.1 to 1.5-2.8 Gb/s in 4 of 4 alternating pairs
// (load 16-22), four connections to 75% and 93% of locked (load 9-17).
// Tried again in session 11 with the data path's calls made through
// RawSyscall (the P never left in a system call) and no idle P, as
// goloop's upass+meter+raw: ahead of locked passes only with tsolab's
// threads at autogroup nice -20, behind at normal priority (one
// connection, TSO off: 0.85-0.92 of locked, median of 8-10 alternating
// pairs, load 5-9; the 8-stream cell again halved at load 18-41); see
// doc.go "Against iperf3".
// A locked worker keeps its own thread, which the kernel schedules as
// one task among the machine's; an unlocked one waits in the Go run
// queue behind the process's other goroutines, for a thread the kernel
// must run first. A worker passes as seldom
// as sysmon allows:
// it reads the monotonic clock after each call and passes when passEvery
// has gone by, whatever its rate, and its sockets are non-blocking so
// that no call blocks past a pass (wait). A worker blocked in a system
// call for 10 ms (a paused flow: the peer waiting for a CPU) would
// otherwise lose its P and put sysmon back to its 20 us polls.
type yielder struct {
	due time.Time // when to pass next; zero before the first pass
	// meter is the worker's CPU: the stretches between passes; the
	// passes themselves are the runtime's.
	meter *cpuMeter
	// refused counts a sender's calls into a full send buffer (EAGAIN)
	// since its last whole one (full).
	refused int
}

// after passes if a pass is due; called after every system call. It
// reads the monotonic clock only (~30 ns through the vDSO).
func (y *yielder) after() {
	if time.Until(y.due) <= 0 {
		y.pass()
	}
}

// pass goes through the Go scheduler, the goroutine locked to its
// thread (spawn); the pass itself is the runtime's CPU, not the
// worker's.
func (y *yielder) pass() {
	y.due = time.Now().Add(passEvery)
	y.meter.stop()
	runtime.Gosched()
	y.meter.start()
}

// wait polls fd for ev until it is ready or the next pass is due, then
// passes if due: the call never blocks past a pass.
func (y *yielder) wait(fd int, ev int16) error {
	if left := time.Until(y.due); left > 0 {
		p := []unix.PollFd{{Fd: int32(fd), Events: ev}}
		ms := int((left + time.Millisecond - 1) / time.Millisecond)
		if _, err := unix.Poll(p, ms); err != nil && !retryable(err) {
			return fmt.Errorf("poll: %w", err)
		}
	}
	y.after()
	return nil
}

// fullTries is how many calls a sender makes into a full send buffer
// before it waits for room in poll, as iperf3's client does: its
// multisend loop makes up to ten writes for each select, and a write
// into a full buffer is refused at once (EAGAIN). Each call takes the
// socket and releases it, and release_sock processes the ACKs that came
// in meanwhile: they free room, and the next segments go out from the
// sender's own call, where a sender asleep in poll leaves them to the
// context the ACKs arrive in (on veth, the receiver's). Measured (notes
// of issue 16, session 8: one connection, TSO off, the namespace lock
// held and the runs in a session at autogroup nice -20, load 9-11; the
// change against the tree before it in the same rounds): 94.2% of
// iperf3's throughput against 90.6% (5 rounds) and 95.6% against 92.9%
// (8 rounds), TSO on 107.5% against 107.0%; 1000-2000 more write calls
// per GB, no more CPU per Gbit/s.
const fullTries = 10

// full follows a send call that the full send buffer cut short (sent)
// or refused: the sender calls again at once, and waits for room (wait)
// when fullTries calls since its last whole one were refused.
func (y *yielder) full(fd int, sent bool) error {
	if !sent {
		y.refused++
	}
	if y.refused < fullTries {
		return nil
	}
	y.refused = 0
	return y.wait(fd, unix.POLLOUT)
}

// streamSend writes ws-byte buffers until it has sent limit bytes, then
// half-closes, or until the run shuts the socket's sending side at the
// deadline (stopped is set first). Each turn of the loop is the write, a
// byte count and the yielder's clock read: no shared counter. A write
// the full buffer cut short goes on with the rest of the same buffer
// (full: at once, then after a poll, as a blocking write would have
// slept and gone on), so the byte stream is the same.
func streamSend(fd, ws int, limit int64, stopped *atomic.Bool, m *cpuMeter) error {
	buf := make([]byte, ws)
	for i := range buf {
		buf[i] = byte(i)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return fmt.Errorf("set non-blocking: %w", err)
	}
	y := yielder{meter: m}
	off := 0 // where in buf the current write goes on
	for sent := int64(0); sent < limit; {
		b := buf[off:]
		if left := limit - sent; left < int64(len(b)) {
			b = b[:left]
		}
		n, err := unix.Write(fd, b)
		if n > 0 {
			sent += int64(n)
			if off += n; off == len(buf) {
				off = 0
			}
		}
		if errors.Is(err, unix.EAGAIN) || (n > 0 && n < len(b)) {
			if err := y.full(fd, n > 0); err != nil {
				return err
			}
			continue
		}
		y.refused = 0
		if end, err := sendEnd("write", err, stopped); end {
			return err
		}
		y.after()
	}
	return shutdownWrite(fd, stopped)
}

// sendFile sends the file with sendfile(2), from the start again each
// time it ends, until it has sent limit bytes, then half-closes, or until
// the run shuts the socket's sending side at the deadline; a full buffer
// is met as streamSend meets it (full).
func sendFile(fd int, f *os.File, size, limit int64, stopped *atomic.Bool, m *cpuMeter) error {
	in := int(f.Fd())
	var off int64
	y := yielder{meter: m}
	if err := unix.SetNonblock(fd, true); err != nil {
		return fmt.Errorf("set non-blocking: %w", err)
	}
	for sent := int64(0); sent < limit; {
		if off >= size {
			off = 0
		}
		count := min(size-off, limit-sent, 1<<30)
		n, err := unix.Sendfile(fd, in, &off, int(count))
		if n > 0 {
			sent += int64(n)
		}
		if errors.Is(err, unix.EAGAIN) || (n > 0 && int64(n) < count) {
			if err := y.full(fd, n > 0); err != nil {
				return err
			}
			continue
		}
		y.refused = 0
		if end, err := sendEnd("sendfile", err, stopped); end {
			return err
		}
		y.after()
	}
	return shutdownWrite(fd, stopped)
}

// sendEnd says whether a send error ends a sending loop, and with what:
// nil (no error) goes on, so does a retryable one; after the deadline shut
// the socket (stopped) the loop ends without an error, else with err.
func sendEnd(what string, err error, stopped *atomic.Bool) (bool, error) {
	switch {
	case err == nil || retryable(err):
		return false, nil
	case stopped.Load():
		return true, nil
	}
	return true, fmt.Errorf("%s: %w", what, err)
}

// shutdownWrite half-closes a connection whose sender reached its limit;
// an error is none when the run's deadline (stopped, nil for rr) shut it
// already.
func shutdownWrite(fd int, stopped *atomic.Bool) error {
	if err := unix.Shutdown(fd, unix.SHUT_WR); err != nil && (stopped == nil || !stopped.Load()) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// drain reads until the peer half-closes, then adds what it read to c.
// Each turn of the loop is the read, a local sum and the yielder's clock
// read: the sampler reads the progress from TCP_INFO instead. A short
// read is followed by another, and only a read that finds the socket
// empty (EAGAIN) by a poll, where a blocking read would have slept: as
// iperf3's server reads until its buffer is full or EAGAIN before it
// selects again (segments that came in meanwhile are read at once).
func drain(fd, size int, c *conn, m *cpuMeter) error {
	buf := make([]byte, size)
	var got int64
	y := yielder{meter: m}
	defer func() { c.received.Add(got) }()
	if err := unix.SetNonblock(fd, true); err != nil {
		return fmt.Errorf("set non-blocking: %w", err)
	}
	for {
		n, err := unix.Read(fd, buf)
		if n > 0 {
			got += int64(n)
		}
		switch {
		case err == nil && n == 0:
			return nil
		case errors.Is(err, unix.EAGAIN):
			if err := y.wait(fd, unix.POLLIN); err != nil {
				return err
			}
		case err == nil || retryable(err):
			y.after()
		default:
			return fmt.Errorf("read: %w", err)
		}
	}
}

// readFull reads exactly len(b) bytes; io.EOF when the peer closed before
// the first byte.
func readFull(fd int, b []byte, c *conn) error {
	got := 0
	for got < len(b) {
		n, err := unix.Read(fd, b[got:])
		if n > 0 {
			got += n
			c.received.Add(int64(n))
		}
		switch {
		case err != nil && retryable(err):
			continue
		case err != nil:
			return fmt.Errorf("read: %w", err)
		case n == 0 && got == 0:
			return io.EOF
		case n == 0:
			return fmt.Errorf("read: connection closed after %d of %d bytes", got, len(b))
		}
	}
	return nil
}

func writeFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if n > 0 {
			b = b[n:]
		}
		if err != nil && !retryable(err) {
			return fmt.Errorf("write: %w", err)
		}
	}
	return nil
}

// rrClient runs transactions (a request out, the whole response back)
// until the limits, and returns each transaction's latency. bytes limits
// count request and response payload.
func rrClient(fd, reqSize, respSize int, l limits, c *conn) ([]time.Duration, error) {
	req := make([]byte, reqSize)
	resp := make([]byte, respSize)
	lat := make([]time.Duration, 0, 1<<14)
	var moved int64
	for !l.done(moved) {
		t := time.Now()
		if err := writeFull(fd, req); err != nil {
			return lat, err
		}
		if err := readFull(fd, resp, c); err != nil {
			if errors.Is(err, io.EOF) {
				return lat, errors.New("server closed the connection mid-transaction")
			}
			return lat, err
		}
		lat = append(lat, time.Since(t))
		moved += int64(reqSize + respSize)
	}
	return lat, shutdownWrite(fd, nil)
}

// rrServer answers every request with a response until the client
// half-closes.
func rrServer(fd, reqSize, respSize int, c *conn) error {
	req := make([]byte, reqSize)
	resp := make([]byte, respSize)
	for {
		if err := readFull(fd, req, c); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := writeFull(fd, resp); err != nil {
			return err
		}
	}
}

// makeFile writes the sendfile source: file_size bytes of a pattern, so
// the page cache holds real pages.
func (r *run) makeFile() error {
	size := r.w.FileSize
	if size <= 0 {
		return errors.New("sendfile needs file_size > 0")
	}
	f, err := os.CreateTemp(r.tempDir, "tsolab-sendfile-*")
	if err != nil {
		return fmt.Errorf("sendfile source: %w", err)
	}
	// Unlinked at once: sendfile reads the open file, and a tsolab
	// killed outright (SIGKILL) leaves no file_size bytes behind.
	os.Remove(f.Name())
	r.file = f
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i * 7)
	}
	for left := size; left > 0; {
		b := chunk
		if left < int64(len(b)) {
			b = b[:left]
		}
		n, err := f.Write(b)
		if err != nil {
			return fmt.Errorf("sendfile source %s: %w", f.Name(), err)
		}
		left -= int64(n)
	}
	return nil
}
