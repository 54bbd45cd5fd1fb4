package kernel

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine/kernel/capture"
	"github.com/tsolab/tsolab/provenance"
	"github.com/tsolab/tsolab/result"
)

// LocalWorker is the Worker of the machine this process runs on: its
// part of a run in this process, as the engine ran every workload before
// labs spanned machines. An agent runs one per run on its machine.
type LocalWorker struct {
	r    *run
	once sync.Once
}

var _ Worker = (*LocalWorker)(nil)

// NewLocalWorker returns this machine's Worker for one run of job;
// capture opens its capture files (nil: none), tempDir holds the file a
// sendfile workload sends ("" = os.TempDir()).
func NewLocalWorker(job Job, capture CaptureFunc, tempDir string) *LocalWorker {
	if tempDir == "" {
		tempDir = os.TempDir()
	}
	if !job.Capture {
		capture = nil
	}
	return &LocalWorker{r: &run{job: job, w: job.Workload, eps: job.Endpoints, open: capture, tempDir: tempDir, listeners: map[int]int{}, worker: workerName(job)}}
}

// Listen opens endpoint ep's listener in its server host's namespace.
func (l *LocalWorker) Listen(_ context.Context, ep int) (uint16, error) {
	r := l.r
	e := &r.eps[ep]
	o := r.options()
	if err := r.forgetPeers(e.ServerHost, e.ServerNS, e.ClientAddr); err != nil {
		return 0, fmt.Errorf("server %s: %w", e.Server, err)
	}
	var lfd int
	var port uint16
	err := inNamespace(e.ServerNS, func() error {
		var err error
		lfd, port, err = listenTCP(e.Addr, sockOptions{SndBuf: o.SndBuf, RcvBuf: o.RcvBuf, NoDelay: o.NoDelay, CC: o.CC}, perServer(r.w)+16)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("server %s: %w", e.Server, err)
	}
	r.listeners[ep] = lfd
	return port, nil
}

// Dial opens n connections to endpoint ep from the client host's
// namespace.
func (l *LocalWorker) Dial(_ context.Context, ep int, port uint16, n int) (int, error) {
	r := l.r
	e := &r.eps[ep]
	ap := netip.AddrPortFrom(e.Addr, port)
	o := r.options()
	if err := r.forgetPeers(r.w.Client, e.ClientNS, e.Addr); err != nil {
		return 0, fmt.Errorf("client %s to server %s: %w", r.w.Client, e.Server, err)
	}
	for range n {
		c := &conn{ep: e, client: -1, server: -1}
		r.conns = append(r.conns, c)
		err := inNamespace(e.ClientNS, func() error {
			var err error
			c.client, err = dialTCP(ap, o)
			return err
		})
		if err != nil {
			return 0, fmt.Errorf("client %s to server %s: %w", r.w.Client, e.Server, err)
		}
	}
	return r.mss()
}

// Accept takes n connections on endpoint ep's listener; a connection
// this Worker dialed gets its server end here (one Worker holds both).
func (l *LocalWorker) Accept(_ context.Context, ep int, n int) error {
	r := l.r
	e := &r.eps[ep]
	lfd, ok := r.listeners[ep]
	if !ok {
		return fmt.Errorf("server %s: accept before listen", e.Server)
	}
	for range n {
		fd, err := acceptTCP(lfd)
		if err != nil {
			return fmt.Errorf("server %s: %w", e.Server, err)
		}
		c := r.halfOpen(e)
		if c == nil {
			c = &conn{ep: e, client: -1, server: -1}
			r.conns = append(r.conns, c)
		}
		c.server = fd
	}
	return nil
}

// halfOpen is a connection to e this Worker dialed and has not accepted.
func (r *run) halfOpen(e *Endpoint) *conn {
	for _, c := range r.conns {
		if c.ep == e && c.client >= 0 && c.server < 0 {
			return c
		}
	}
	return nil
}

// Start opens the taps, snapshots the CPU accounting and lets the
// workers go. A failure finishes the capture files that hold packets.
func (l *LocalWorker) Start(_ context.Context, req StartRequest) error {
	r := l.r
	if r.w.Kind == config.Sendfile && r.hasClients() {
		if err := r.makeFile(); err != nil {
			return err
		}
	}
	// An idle P beside every worker, so that the runtime does not take
	// a P back from a worker in a system call (see yielder).
	r.release = holdProcs(2*len(r.conns) + 1)
	r.startc = make(chan struct{})
	if err := r.spawnWorkers(); err != nil {
		return err
	}
	for _, t := range req.Taps {
		r.taps = append(r.taps, &tap{ns: t.NS, ifname: t.Ifname, key: t.Key, dir: t.Dir, ports: t.Ports})
	}
	for _, t := range req.Recv {
		r.recv = append(r.recv, &tap{ns: t.NS, ifname: t.Ifname, key: t.Key, dir: t.Dir, ports: t.Ports})
	}
	t0 := time.Now()
	err := r.startCaptures(t0, req.MSS)
	if err == nil {
		r.openSoftirqMeter()
		r.cpu0, err = takeCPUSnapshot(r.sirq, r.labNamespaces())
		if err != nil {
			err = fmt.Errorf("CPU accounting: %w", err)
		}
	}
	if err != nil {
		r.closeSoftirqMeter()
		close(r.startc)
		r.abort()
		r.wg.Wait()
		r.fail(err.Error())
		return keptFiles(err, r.files())
	}
	r.proc0 = processCPU()
	r.done = make(chan struct{})
	r.t0 = time.Now()
	close(r.startc)
	go func() {
		r.wg.Wait()
		r.proc1 = processCPU()
		r.cpu1, r.cpuErr = takeCPUSnapshot(r.sirq, r.labNamespaces())
		r.closeSoftirqMeter()
		close(r.done)
	}()
	return nil
}

func (r *run) hasClients() bool {
	for _, c := range r.conns {
		if c.client >= 0 {
			return true
		}
	}
	return false
}

// files names the capture files of the taps.
func (r *run) files() []string {
	var out []string
	for _, t := range append(append([]*tap(nil), r.taps...), r.recv...) {
		if t.file != "" {
			out = append(out, t.file)
		}
	}
	return out
}

// spawnFor starts a worker for side s of c when this Worker holds that
// end of the connection.
func (r *run) spawnFor(c *conn, s side, fn func(*cpuMeter) error) {
	if (s == sideTx && c.client < 0) || (s == sideRx && c.server < 0) {
		return
	}
	r.spawn(s, fn)
}

// Progress reads the bytes received so far, the first client socket's
// window and the eBPF counters' totals.
func (l *LocalWorker) Progress(context.Context) (Progress, error) {
	r := l.r
	p := Progress{Received: r.bytesReceived()}
	for _, c := range r.conns {
		if c.client < 0 {
			continue
		}
		if info, err := tcpInfo(c.client); err == nil {
			p.Cwnd, p.HasCwnd = float64(info.Snd_cwnd), true
		}
		break
	}
	p.Units, p.UnitBytes, p.Counting = r.sendTotals()
	return p, nil
}

// Stop shuts the clients' sending side, or every socket.
func (l *LocalWorker) Stop(_ context.Context, how Stop) error {
	if how == Abort {
		l.r.abort()
	} else {
		l.r.stopSending()
	}
	return nil
}

// Wait waits for the workers.
func (l *LocalWorker) Wait(ctx context.Context) (WaitReply, error) {
	r := l.r
	if r.done == nil {
		return WaitReply{}, errors.New("wait before start")
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return WaitReply{}, ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	end := r.lastEnd
	if end.Before(r.t0) {
		end = time.Now()
	}
	rep := WaitReply{Elapsed: end.Sub(r.t0)}
	if r.werr != nil {
		rep.Err = r.werr.Error()
	}
	return rep, nil
}

// Finish stops the taps and reports what this machine measured.
func (l *LocalWorker) Finish(_ context.Context, req FinishRequest) (Report, error) {
	r := l.r
	rep := Report{Kernel: kernelRelease(), Boot: bootID()}
	var err error
	if req.Failed == "" {
		var infos []sideInfo
		if infos, err = r.tcpInfos(); err == nil {
			for _, in := range infos {
				rep.TCP[in.side].add(in.info)
			}
			err = r.stopCaptures("")
		}
		if err == nil {
			rep.CC, err = clientCongestion(r.conns)
		}
		if err != nil {
			req.Failed = err.Error()
		}
	}
	if req.Failed != "" {
		r.fail(req.Failed)
	}
	for _, c := range r.conns {
		rep.Received += c.received.Load()
	}
	for _, t := range r.taps {
		rep.Taps = append(rep.Taps, t.result())
	}
	for _, t := range r.recv {
		rep.Recv = append(rep.Recv, t.result())
	}
	if err != nil {
		return rep, keptFiles(err, r.files())
	}
	if req.Failed != "" {
		return rep, nil
	}
	if r.done != nil {
		<-r.done
		if r.cpuErr != nil {
			return rep, fmt.Errorf("CPU accounting: %w", r.cpuErr)
		}
		rep.Process = r.proc1 - r.proc0
		var note string
		rep.Outside, rep.Softirqd, note = outsideWorkers(r.cpu0, r.cpu1, rep.Process)
		rep.Load = machineLoad(r.cpu0, r.cpu1, rep.Process)
		rep.Notes = append(rep.Notes, r.softirqNotes(note)...)
	}
	r.mu.Lock()
	rep.CPU, rep.Latencies = r.cpu, r.lat
	rep.TCPMetricsDeleted = r.forgot
	if r.forgetNote != "" {
		rep.Notes = append(rep.Notes, r.forgetNote)
	}
	r.mu.Unlock()
	rep.BPFErr, rep.RecvBPFErr = errString(r.bpfErr), errString(r.recvBPFErr)
	rep.readBack(req)
	return rep, nil
}

// readBack reads the offloads and provenance of the NICs and hosts req
// names, each in its namespace; what it cannot read it names in a note.
func (rep *Report) readBack(req FinishRequest) {
	rep.Offloads = map[string]map[string]bool{}
	rep.Sysctls = map[string]map[string]string{}
	for _, n := range req.NICs {
		got, err := offloadsOf(n.NS, n.Ifname)
		if err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %v", n.label(), err))
			continue
		}
		rep.Offloads[n.Name] = got
	}
	for _, n := range req.NICs {
		if n.Host == "" {
			continue // an undeclared loopback: offloads only
		}
		nic, err := nicProvenance(n.NS, n.Ifname)
		if err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("nic.%s: provenance: %v", n.Name, err))
			continue
		}
		nic.Name, nic.Host = n.Name, n.Host
		rep.NICs = append(rep.NICs, nic)
	}
	for _, h := range req.Hosts {
		var vals map[string]string
		err := inNamespace(h.NS, func() error {
			vals = provenance.ReadTCPSysctls()
			return nil
		})
		if err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("host.%s: provenance: %v", h.Name, err))
			continue
		}
		rep.Sysctls[h.Name] = vals
	}
}

// label names a NIC in notes: nic.NAME for the lab's, the key of an
// undeclared loopback (lo@HOST) as it is.
func (n NICRef) label() string {
	if n.Host == "" {
		return n.Name
	}
	return "nic." + n.Name
}

// Close frees the sockets, taps and the sendfile source; the workers,
// shut down, end.
func (l *LocalWorker) Close() error {
	l.once.Do(func() {
		r := l.r
		if r.done != nil {
			r.abort()
			<-r.done
		}
		r.closeAll()
		if r.release != nil {
			r.release()
		}
	})
	return nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// bootID is the kernel's boot ID (/proc/sys/kernel/random/boot_id): two
// Workers that read the same one run on the same kernel.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// sortNICs orders provenance NICs by name.
func sortNICs(nics []result.NIC) {
	sort.Slice(nics, func(i, j int) bool { return nics[i].Name < nics[j].Name })
}

// noBPFFor is the test hook of Options, for the in-process Worker.
func (l *LocalWorker) noBPFFor(f func(capture.Direction) error) *LocalWorker {
	l.r.noBPF = f
	return l
}
