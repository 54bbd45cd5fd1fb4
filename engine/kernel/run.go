package kernel

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine/kernel/capture"
	"github.com/tsolab/tsolab/engine/kernel/devqueue"
	"github.com/tsolab/tsolab/result"
)

// side is which end of a workload a thread works for.
type side int

const (
	sideTx side = iota // the client: sends the stream, the requests, the file
	sideRx             // the server: receives them
)

func (s side) String() string {
	if s == sideTx {
		return "tx"
	}
	return "rx"
}

// conn is one TCP connection of a workload.
type conn struct {
	ep     *Endpoint
	client int // fd on the client host
	server int // fd on the server host
	// received counts payload bytes read by either end; the workers add
	// to it when they end (the sampler reads TCP_INFO meanwhile).
	received atomic.Int64
}

// tap is what counts send units on one sender NIC: the eBPF counter,
// the AF_PACKET ring, or both; or, with Options.Capture, what captures a
// server's NIC (dir Incoming, never counted): the eBPF program at its
// TCX ingress, or the ring when that cannot load.
type tap struct {
	ns, ifname, key string
	dir             capture.Direction
	ports           []uint16
	dq              *devqueue.Counter // nil when eBPF does not run
	units           *devqueue.Result  // what dq counted, after stop
	c               *capture.Capture  // nil when the ring does not run
	res             capture.Result
	ring            bool   // the ring ran
	txBefore        uint64 // tx_packets of the interface at the start
	txAfter         uint64
	// With Options.Capture: the capture file and what writes it, the
	// eBPF program's record (fileBPF: of the units on a sender NIC, of
	// the incoming TCP on a server NIC) or the ring's frames.
	pcap      *capture.Pcapng
	fileBPF   bool
	out       io.WriteCloser
	file      string
	target    CaptureTarget
	pcapStart time.Time
	cut       int64 // packets the file's size cap kept out
}

// Where a capture file's packets come from, as its interface block says.
const (
	sourceBPF   = "eBPF at the device layer's entry (__dev_queue_xmit): send units as TCP handed them to the device, before software GSO"
	sourceBPFIn = "eBPF at TCX ingress (__netif_receive_skb_core): TCP as the device handed it up, after GRO when it aggregates"
	sourceRing  = "AF_PACKET TPACKET_V3 ring"
)

// bpfSource is what a tap's file says of its eBPF source.
func (t *tap) bpfSource() string {
	if t.dir == capture.Incoming {
		return sourceBPFIn
	}
	return sourceBPF
}

// what names a tap's eBPF program in errors.
func (t *tap) what() string {
	if t.dir == capture.Incoming {
		return "eBPF receiver capture on " + t.key
	}
	return "eBPF send-unit counter on " + t.key
}

// run is one machine's part of one execution of one workload (the
// LocalWorker's state): the sockets of the hosts on the machine, the
// threads working on them, the taps of their NICs and the machine's CPU
// accounting. When client and servers share the machine, one run holds
// both ends of every connection.
type run struct {
	job     Job
	w       *config.Workload
	eps     []Endpoint
	open    CaptureFunc // capture files; nil = none
	tempDir string
	// noBPF (tests only) fails the eBPF programs of a direction.
	noBPF func(capture.Direction) error

	listeners map[int]int // by endpoint index
	conns     []*conn
	taps      []*tap   // the sender NICs
	recv      []*tap   // the server NICs, captured with capture files only
	file      *os.File // sendfile source

	startc  chan struct{}
	wg      sync.WaitGroup
	release func() // gives back what holdProcs raised
	// stopped is set at the deadline of a stream or sendfile workload,
	// just before the run shuts the clients' sending side: a sender's
	// write that then fails has finished, not failed.
	stopped atomic.Bool

	// bpfErr is why the eBPF counter did not load (CounterAuto fell
	// back to the ring); nil when it loaded or was not tried. recvBPFErr
	// is the same for the server NICs' capture programs.
	bpfErr, recvBPFErr error

	// t0 is when the workers were let go; cpu0, proc0 the CPU
	// accounting then, cpu1, proc1 when the last worker ended (done
	// closes then).
	t0           time.Time
	cpu0, cpu1   cpuSnapshot
	cpuErr       error
	proc0, proc1 time.Duration
	// sirq times the softirqs over the run, from before cpu0 to cpu1
	// (nil after, or when it did not load: sirqErr says why);
	// sirqMissed is the program runs the kernel skipped, sirqOwnerErr
	// why its owner programs did not run (nil: they did), sirqSampleErr
	// why its windows stopped early (nil: they did not).
	// worker is the name the workers' threads take (workerName).
	worker        threadName
	sirq          *softirqMeter
	sirqErr       error
	sirqMissed    uint64
	sirqOwnerErr  error
	sirqSampleErr error
	done          chan struct{}

	mu      sync.Mutex // guards the fields below, written by worker threads
	cpu     [2]time.Duration
	lastEnd time.Time
	lat     []time.Duration
	werr    error
	// forgot holds, by host, the addresses whose cached TCP metrics
	// forgetPeers deleted before the run.
	forgot map[string][]string
	// forgetNote says why forgetPeers could not delete them ("" = it could).
	forgetNote string
}

// result is what a stopped tap measured.
func (t *tap) result() tapResult {
	return tapResult{
		Interface: t.key + " (" + t.ifname + ")",
		NIC:       t.key,
		Ifname:    t.ifname,
		Dir:       t.dir,
		Units:     t.units,
		Ring:      t.ring,
		Result:    t.res,
		TxPackets: t.txAfter - t.txBefore,
		File:      t.file,
		Target:    t.target,
		FileBPF:   t.fileBPF,
		Cut:       t.cut,
	}
}

// options translates the workload into socket options.
func (r *run) options() sockOptions {
	return sockOptions{
		SndBuf: r.w.SndBuf, RcvBuf: r.w.RcvBuf,
		NoDelay: r.w.NoDelay, Cork: r.w.Cork, CC: r.w.CC,
		PacingBps: uint64(r.w.Rate),
	}
}

// perServer is how many connections each server gets.
func perServer(w *config.Workload) int {
	n := w.Connections
	if w.Kind == config.RR && w.Concurrency > 0 {
		n = w.Concurrency
	}
	if n <= 0 {
		n = 1
	}
	return n
}

// mss is the sender's MSS (tcpi_snd_mss of the first client socket).
func (r *run) mss() (int, error) {
	i := 0
	for i < len(r.conns)-1 && r.conns[i].client < 0 {
		i++
	}
	info, err := tcpInfo(r.conns[i].client)
	if err != nil {
		return 0, fmt.Errorf("TCP_INFO: %w", err)
	}
	if info.Snd_mss == 0 {
		return 0, errors.New("TCP_INFO reports an MSS of 0 on a connected socket")
	}
	return int(info.Snd_mss), nil
}

// startCaptures reads the interface counters and starts the send-unit
// counters on every sender NIC: the eBPF program (unless the counter is
// the ring), the AF_PACKET ring when asked for or when eBPF is
// unavailable under CounterAuto. Sources are never mixed: when one NIC's
// program fails to load, every NIC falls back.
func (r *run) startCaptures(t0 time.Time, mss int) error {
	for _, t := range r.taps {
		st, err := txPackets(t.ns, t.ifname)
		if err != nil {
			return err
		}
		t.txBefore = st
	}
	if r.job.DisableCapture {
		return nil
	}
	if r.open != nil {
		for _, t := range append(append([]*tap(nil), r.taps...), r.recv...) {
			if err := r.openFile(t); err != nil {
				return err
			}
		}
	}
	mode := r.job.Counter
	// The sender NICs' capture files come from the eBPF counter's record
	// when it runs, the servers' from the eBPF program at their TCX
	// ingress; each from the ring when its program cannot run.
	senderRing := mode == CounterRing || mode == CounterBoth
	if mode.bpf() {
		if err := r.startBPF(r.taps, mss); err != nil {
			if mode != CounterAuto {
				return err
			}
			r.bpfErr = err
			senderRing = true
		}
	}
	var rings []*tap
	if senderRing {
		rings = append(rings, r.taps...)
	}
	if r.open != nil && len(r.recv) > 0 {
		recvRing := !mode.bpf()
		switch {
		case recvRing:
		case r.bpfErr != nil:
			r.recvBPFErr, recvRing = r.bpfErr, true
		default:
			if err := r.startBPF(r.recv, mss); err != nil {
				if mode != CounterAuto {
					return err
				}
				r.recvBPFErr, recvRing = err, true
			}
		}
		if recvRing {
			rings = append(rings, r.recv...)
		}
	}
	for _, t := range rings {
		if err := r.openRing(t, t0); err != nil {
			return err
		}
	}
	return nil
}

// openFile opens a tap's capture file (Options.Capture); what writes it
// is chosen when its source starts.
func (r *run) openFile(t *tap) error {
	target := CaptureTarget{
		Scenario: r.job.Scenario, Workload: r.w.Name, Repetition: r.job.Repetition,
		NIC: t.key, Interface: t.ifname, Namespace: t.ns, Direction: t.dir,
	}
	w, name, err := r.open(target)
	if err != nil {
		return fmt.Errorf("capture file for %s (%s): %w", t.key, t.dir, err)
	}
	t.out, t.file, t.target = w, name, target
	return nil
}

// startFile starts the pcapng writer of a tap's capture file for a
// source. Nothing reaches the file before the writer is flushed, so a
// writer whose source then fails to start is dropped unwritten.
func (r *run) startFile(t *tap, source string) error {
	ns := t.ns
	if ns == "" {
		ns = "the host's namespace"
	}
	comment := fmt.Sprintf("tsolab: scenario %s, workload %s, run %d: NIC %s (%s) in %s, %s",
		r.job.Scenario, r.w.Name, r.job.Repetition+1, t.key, t.ifname, ns, t.dir)
	var err error
	if t.pcap, err = capture.NewPcapng(t.out, t.ifname, comment, t.dir, source); err != nil {
		return fmt.Errorf("capture file %s: %w", t.file, err)
	}
	t.pcap.SetLimit(r.job.CaptureMaxBytes)
	t.pcapStart = time.Now()
	return nil
}

// finishFile ends a tap's capture file with what its source saw and
// lost, and why it ends early when the run failed (failed != "").
func (t *tap) finishFile(seen, dropped int64, failed string) error {
	if t.pcap == nil {
		return nil
	}
	err := t.pcap.Finish(seen, dropped, t.pcapStart, time.Now(), failed)
	t.cut = t.pcap.Cut()
	t.pcap = nil
	if cerr := t.out.Close(); err == nil {
		err = cerr
	}
	t.out = nil
	if err != nil {
		return fmt.Errorf("capture file %s: %w", t.file, err)
	}
	return nil
}

// openRing opens the AF_PACKET ring of a tap; with a capture file not
// written by the eBPF counter, the ring's frames go to it.
func (r *run) openRing(t *tap, t0 time.Time) error {
	t.ring = true
	opts := capture.Options{
		Interface: t.ifname, DstPorts: t.ports, Start: t0, RingBytes: r.job.CaptureRingBytes,
		Direction: t.dir,
	}
	if t.out != nil && !t.fileBPF {
		if err := r.startFile(t, sourceRing); err != nil {
			return err
		}
		opts.Sink = t.pcap
	}
	return inNamespace(t.ns, func() error {
		var err error
		t.c, err = capture.Open(opts)
		return err
	})
}

// stopRing stops a tap's ring and finishes its capture file.
func (t *tap) stopRing(failed string) error {
	res, err := t.c.Stop()
	t.c = nil
	t.res = res
	if !t.fileBPF {
		if ferr := t.finishFile(res.Seen, res.Dropped, failed); ferr != nil && err == nil {
			err = ferr
		}
	}
	return err
}

// startBPF attaches an eBPF program to every tap of taps, or to none: a
// counter at TCX egress of the sender NICs, a capture at TCX ingress of
// the server NICs (dir Incoming), each writing its tap's capture file
// when it has one.
func (r *run) startBPF(taps []*tap, mss int) error {
	for _, t := range taps {
		var ifindex int
		var inode uint64
		err := inNamespace(t.ns, func() error {
			var err error
			ifindex, inode, err = deviceID(t.ifname)
			return err
		})
		opts := devqueue.Options{Ifindex: ifindex, NetNS: inode, DstPorts: t.ports, MSS: mss, Ingress: t.dir == capture.Incoming}
		if err == nil && r.noBPF != nil {
			err = r.noBPF(t.dir)
		}
		if err == nil && t.out != nil {
			if err = r.startFile(t, t.bpfSource()); err == nil {
				t.fileBPF = true
				opts.Headers = t.pcap
			}
		}
		if err == nil {
			// Open attaches at the device's TCX hook, which it names by
			// its index in the calling thread's namespace.
			err = inNamespace(t.ns, func() error {
				var err error
				t.dq, err = devqueue.Open(opts)
				return err
			})
		}
		if err != nil {
			for _, t := range taps {
				if t.dq != nil {
					t.dq.Stop()
					t.dq = nil
				}
				t.pcap, t.fileBPF = nil, false
			}
			return fmt.Errorf("%s: %w", t.what(), err)
		}
	}
	return nil
}

// sendTotals sums the running eBPF counts over the taps; ok is false
// when eBPF is not counting.
func (r *run) sendTotals() (units, bytes int64, ok bool) {
	for _, t := range r.taps {
		if t.dq == nil {
			return 0, 0, false
		}
		tot, err := t.dq.Totals()
		if err != nil {
			return 0, 0, false
		}
		units += tot.SendUnits
		bytes += tot.PayloadBytes
	}
	return units, bytes, len(r.taps) > 0
}

// stopCaptures stops every counter and ring and reads the interface
// counters again; failed, when not "", says why the run ended early and
// goes into its capture files.
func (r *run) stopCaptures(failed string) error {
	var first error
	for _, t := range r.taps {
		if n, err := txPackets(t.ns, t.ifname); err == nil {
			t.txAfter = n
		} else if first == nil {
			first = err
		}
	}
	for _, t := range append(append([]*tap(nil), r.taps...), r.recv...) {
		if err := t.stop(failed); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// stop stops a tap's eBPF program and ring and finishes its capture
// file.
func (t *tap) stop(failed string) error {
	var first error
	if t.dq != nil {
		res, err := t.dq.Stop()
		t.dq = nil
		if err == nil {
			t.units = &res
		} else {
			first = fmt.Errorf("%s: %w", t.what(), err)
		}
		if t.fileBPF {
			if err := t.finishFile(res.Recorded+res.RecordLost, res.RecordLost, failed); err != nil && first == nil {
				first = err
			}
		}
	}
	if t.c != nil {
		if err := t.stopRing(failed); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// fail ends a run that failed (failed says why): it stops the counters
// and rings, finishes the capture files that hold packets (their
// statistics block says the run failed, and why) and discards the ones
// never started.
func (r *run) fail(failed string) {
	r.stopCaptures(failed)
	for _, t := range append(append([]*tap(nil), r.taps...), r.recv...) {
		if t.out != nil {
			t.discardFile()
		}
	}
}

// keptFiles names the capture files a failed run kept, in err.
func keptFiles(err error, files []string) error {
	if len(files) == 0 {
		return err
	}
	return fmt.Errorf("%w (the capture files hold what was seen up to the failure: %s)", err, strings.Join(files, ", "))
}

// discardFile closes a capture file no source wrote, and removes it when
// its writer can (CaptureDiscarder).
func (t *tap) discardFile() {
	if d, ok := t.out.(CaptureDiscarder); ok {
		d.Discard()
	} else {
		t.out.Close()
	}
	t.out, t.file, t.pcap = nil, "", nil
}

// procs is what holdProcs keeps: the runs holding GOMAXPROCS raised and
// its value before the first.
var procs struct {
	sync.Mutex
	runs  int
	saved int
}

// holdProcs raises GOMAXPROCS to at least n for a run and returns what
// puts it back when the last run holding it ends.
func holdProcs(n int) (release func()) {
	procs.Lock()
	defer procs.Unlock()
	if procs.runs == 0 {
		procs.saved = runtime.GOMAXPROCS(0)
	}
	procs.runs++
	if runtime.GOMAXPROCS(0) < n {
		runtime.GOMAXPROCS(n)
	}
	return func() {
		procs.Lock()
		defer procs.Unlock()
		if procs.runs--; procs.runs == 0 && runtime.GOMAXPROCS(0) != procs.saved {
			runtime.GOMAXPROCS(procs.saved)
		}
	}
}

// spawn starts a worker on a locked thread. It waits for startc, then
// measures its own CPU time around fn with m, which a worker that passes
// through the scheduler (yielder) stops and starts around each pass.
func (r *run) spawn(s side, fn func(m *cpuMeter) error) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		runtime.LockOSThread()
		// The thread never left the process's namespace.
		defer runtime.UnlockOSThread()
		<-r.startc
		m := cpuMeter{name: r.worker}
		m.start()
		err := fn(&m)
		m.stop()
		end := time.Now()
		r.mu.Lock()
		defer r.mu.Unlock()
		r.cpu[s] += m.used
		if end.After(r.lastEnd) {
			r.lastEnd = end
		}
		if err != nil && r.werr == nil {
			r.werr = fmt.Errorf("%s worker: %w", s, err)
			go r.abort()
		}
	}()
}

// cpuMeter sums the CPU time of a worker's thread over the spans it
// runs: one span from start to end for a worker that never passes, one
// per stretch between scheduler passes for one that does.
type cpuMeter struct {
	used time.Duration // the ended spans' thread CPU
	t0   time.Duration // the thread's CPU clock at the open span's start
	// name is what the thread is called while a span is open (the
	// run's workerName, by which the softirq meter knows the softirqs
	// in the thread's time), saved its name before.
	name, saved threadName
}

// start opens a span. Precondition: the goroutine is locked to its
// thread until stop.
func (m *cpuMeter) start() {
	m.saved = getThreadName()
	setThreadName(m.name)
	m.t0 = threadCPU()
}

// stop ends the open span, on the thread that started it.
func (m *cpuMeter) stop() {
	m.used += threadCPU() - m.t0
	setThreadName(m.saved)
}

// stopSending ends stream and sendfile senders at the deadline: it shuts
// the sending side of every client socket, which sends the FIN after
// what is queued, wakes a sender polling on a full send buffer and fails
// its next write.
func (r *run) stopSending() {
	r.stopped.Store(true)
	for _, c := range r.conns {
		if c.client >= 0 {
			unix.Shutdown(c.client, unix.SHUT_WR)
		}
	}
}

// abort shuts every connection down so that blocked workers return.
func (r *run) abort() {
	for _, c := range r.conns {
		if c.client >= 0 {
			unix.Shutdown(c.client, unix.SHUT_RDWR)
		}
		if c.server >= 0 {
			unix.Shutdown(c.server, unix.SHUT_RDWR)
		}
	}
}

func (r *run) closeAll() {
	for _, t := range append(append([]*tap(nil), r.taps...), r.recv...) {
		if t.dq != nil {
			t.dq.Stop()
		}
		if t.c != nil {
			t.stopRing("the run was abandoned")
		}
		if t.out != nil {
			t.discardFile()
		}
	}
	for _, c := range r.conns {
		if c.client >= 0 {
			unix.Close(c.client)
		}
		if c.server >= 0 {
			unix.Close(c.server)
		}
	}
	for _, l := range r.listeners {
		unix.Close(l)
	}
	if r.file != nil {
		r.file.Close() // unlinked when made (makeFile)
	}
}

// sideInfo is TCP_INFO of one socket and the side it belongs to.
type sideInfo struct {
	side side
	info *unix.TCPInfo
}

func (r *run) tcpInfos() ([]sideInfo, error) {
	var out []sideInfo
	for _, c := range r.conns {
		if c.client >= 0 {
			ci, err := tcpInfo(c.client)
			if err != nil {
				return nil, fmt.Errorf("TCP_INFO of client socket: %w", err)
			}
			out = append(out, sideInfo{sideTx, ci})
		}
		if c.server >= 0 {
			si, err := tcpInfo(c.server)
			if err != nil {
				return nil, fmt.Errorf("TCP_INFO of server socket: %w", err)
			}
			out = append(out, sideInfo{sideRx, si})
		}
	}
	return out, nil
}

// bytesReceived is the payload the kernel has received so far on every
// socket of the run (tcpi_bytes_received, both directions for rr; a FIN
// counts one more), read or not yet read by the workers.
func (r *run) bytesReceived() int64 {
	var total int64
	for _, c := range r.conns {
		for _, fd := range []int{c.client, c.server} {
			if info, err := tcpInfo(fd); fd >= 0 && err == nil {
				total += int64(info.Bytes_received)
			}
		}
	}
	return total
}

// fillSeries adds the mean send-unit size of each second from the
// rings, when they counted the send units (the sampler reads the eBPF
// counters itself).
func fillSeries(series []result.Sample, taps []tapResult) []result.Sample {
	for _, t := range taps {
		if t.Units != nil {
			return series
		}
	}
	for i := range series {
		var units, bytes int64
		for _, t := range taps {
			if i < len(t.Result.PerSecond) {
				units += t.Result.PerSecond[i].SendUnits
				bytes += t.Result.PerSecond[i].PayloadBytes
			}
		}
		if units > 0 {
			series[i].SendUnitBytes = float64(bytes) / float64(units)
		}
	}
	return series
}

// percentile returns the q-quantile (0..1) of sorted durations by the
// nearest-rank method.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999999) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

func sortDurations(d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
}
