package kernel

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/engine/kernel/capture"
	"github.com/tsolab/tsolab/result"
)

// execution is one run of one workload, driven from this process: one
// Worker per machine its hosts live on (the client's machine first), the
// sampler, and the assembly of the result from what each Worker reports.
type execution struct {
	eng *Engine
	req engine.RunRequest
	w   *config.Workload
	job Job

	machines []string          // the client's first, then the servers' in order
	workers  map[string]Worker // by machine ("" = this one)
	mss      int
	taps     map[string][]TapSpec // sender NICs, by machine
	recv     map[string][]TapSpec // server NICs with capture files, by machine

	mu   sync.Mutex
	lost error // a Worker's call that failed while the run went, or the stall
}

// execute runs the workload once and measures it.
func (x *execution) execute(ctx context.Context) (*result.WorkloadResult, error) {
	defer x.closeAll()
	if err := x.open(ctx); err != nil {
		return nil, err
	}
	if err := x.connect(ctx); err != nil {
		return nil, err
	}
	t0, started, err := x.start(ctx)
	if err != nil {
		return nil, x.fail(ctx, err)
	}
	series, waits := x.sample(ctx, t0)
	if err := x.failure(ctx, waits); err != nil {
		return nil, x.fail(ctx, err)
	}
	var dur time.Duration
	for _, m := range x.machines {
		if d := started[m].Sub(t0) + waits[m].Elapsed; d > dur {
			dur = d
		}
	}
	reports := map[string]Report{}
	var errs []error
	for _, m := range x.machines {
		rep, err := x.workers[m].Finish(ctx, x.finishRequest(m))
		if err != nil {
			errs = append(errs, err)
		}
		reports[m] = rep
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return x.result(dur, reports, series), nil
}

// open makes the Worker of every machine the workload's hosts live on.
func (x *execution) open(ctx context.Context) error {
	x.workers = map[string]Worker{}
	add := func(m string) error {
		if _, ok := x.workers[m]; ok {
			return nil
		}
		var w Worker
		switch {
		case m == "":
			lw := NewLocalWorker(x.job, x.eng.opts.Capture, x.eng.opts.TempDir)
			w = lw.noBPFFor(x.eng.opts.noBPF)
		case x.eng.opts.Remote == nil:
			return fmt.Errorf("a host of the workload is on machine %s, and this kernel engine reaches no other machine (Options.Remote is nil)", m)
		default:
			var err error
			if w, err = x.eng.opts.Remote(ctx, m, x.job, x.eng.opts.Capture); err != nil {
				return err
			}
		}
		x.workers[m] = w
		x.machines = append(x.machines, m)
		return nil
	}
	if err := add(x.job.Endpoints[0].ClientMachine); err != nil {
		return err
	}
	for _, ep := range x.job.Endpoints {
		if err := add(ep.ServerMachine); err != nil {
			return err
		}
	}
	return nil
}

// connect opens every endpoint's listener on the server's machine, the
// connections from the client's, and accepts them.
func (x *execution) connect(ctx context.Context) error {
	n := perServer(x.w)
	for i, ep := range x.job.Endpoints {
		srv, cli := x.workers[ep.ServerMachine], x.workers[ep.ClientMachine]
		port, err := srv.Listen(ctx, i)
		if err != nil {
			return err
		}
		mss, err := cli.Dial(ctx, i, port, n)
		if err != nil {
			return err
		}
		if x.mss == 0 {
			x.mss = mss
		}
		if err := srv.Accept(ctx, i, n); err != nil {
			return err
		}
		x.addPort(ep, port)
		if x.job.Capture {
			x.addRecvPort(ep, port)
		}
	}
	return nil
}

// addPort records a server port on the tap of the endpoint's sender NIC,
// on the client's machine.
func (x *execution) addPort(ep Endpoint, port uint16) {
	if x.taps == nil {
		x.taps = map[string][]TapSpec{}
	}
	m := ep.ClientMachine
	for i, t := range x.taps[m] {
		if t.NS == ep.CaptureNS && t.Ifname == ep.CaptureIf {
			x.taps[m][i].Ports = append(t.Ports, port)
			return
		}
	}
	x.taps[m] = append(x.taps[m], TapSpec{NS: ep.CaptureNS, Ifname: ep.CaptureIf, Key: ep.SenderNIC, Dir: capture.Outgoing, Ports: []uint16{port}})
}

// addRecvPort records a server port on the receiving tap of the
// endpoint's server NIC, on the server's machine, unless that is
// loopback or a sender NIC (whose file holds the packets already).
func (x *execution) addRecvPort(ep Endpoint, port uint16) {
	if ep.RecvIf == "" {
		return
	}
	if x.recv == nil {
		x.recv = map[string][]TapSpec{}
	}
	m := ep.ServerMachine
	for _, t := range x.taps[m] {
		if t.NS == ep.ServerNS && t.Ifname == ep.RecvIf {
			return
		}
	}
	for i, t := range x.recv[m] {
		if t.NS == ep.ServerNS && t.Ifname == ep.RecvIf {
			x.recv[m][i].Ports = append(t.Ports, port)
			return
		}
	}
	x.recv[m] = append(x.recv[m], TapSpec{NS: ep.ServerNS, Ifname: ep.RecvIf, Key: ep.Server, Dir: capture.Incoming, Ports: []uint16{port}})
}

// start starts the servers' machines, then the client's, whose start is
// the run's t0; started is when each machine's Start returned.
func (x *execution) start(ctx context.Context) (t0 time.Time, started map[string]time.Time, err error) {
	started = map[string]time.Time{}
	order := append(append([]string(nil), x.machines[1:]...), x.machines[0])
	for _, m := range order {
		if err := x.workers[m].Start(ctx, StartRequest{MSS: x.mss, Taps: x.taps[m], Recv: x.recv[m]}); err != nil {
			return t0, nil, err
		}
		started[m] = time.Now()
	}
	return started[x.machines[0]], started, nil
}

// failure is why a run that ended failed: the context, a lost Worker
// or the stall, a worker's error; nil when it did not.
func (x *execution) failure(ctx context.Context, waits map[string]WaitReply) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	x.mu.Lock()
	lost := x.lost
	x.mu.Unlock()
	if lost != nil {
		return lost
	}
	for _, m := range x.machines {
		if e := waits[m].Err; e != "" {
			return errors.New(e)
		}
	}
	return nil
}

// fail ends a failed run on every machine: the capture files that hold
// packets are finished saying why and come back; err names them.
func (x *execution) fail(ctx context.Context, err error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var kept []string
	for _, m := range x.machines {
		rep, _ := x.workers[m].Finish(ctx, FinishRequest{Failed: err.Error()})
		for _, t := range append(append([]tapResult(nil), rep.Taps...), rep.Recv...) {
			if t.File != "" {
				kept = append(kept, t.File)
			}
		}
	}
	return keptFiles(err, kept)
}

func (x *execution) closeAll() {
	for _, m := range x.machines {
		x.workers[m].Close()
	}
}

// setLost records the first failure of a Worker's call while the run
// goes, and shuts every machine's sockets so that the others end.
func (x *execution) setLost(ctx context.Context, err error) {
	x.mu.Lock()
	first := x.lost == nil
	if first {
		x.lost = err
	}
	x.mu.Unlock()
	if first {
		x.abort(ctx)
	}
}

// abort shuts every machine's sockets down.
func (x *execution) abort(ctx context.Context) {
	for _, m := range x.machines {
		x.workers[m].Stop(ctx, Abort)
	}
}

// wait waits for every machine's workers; done closes when all have
// ended (or their Worker was lost).
func (x *execution) wait(ctx context.Context) (map[string]WaitReply, <-chan struct{}) {
	waits := map[string]WaitReply{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, m := range x.machines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep, err := x.workers[m].Wait(ctx)
			if err != nil {
				x.setLost(ctx, err)
			}
			mu.Lock()
			waits[m] = rep
			mu.Unlock()
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	return waits, done
}

// defaultStall is DefaultStallTimeout, or longer for a lab shaped or
// paced so slowly that ten full segments take more than that.
func (x *execution) defaultStall() time.Duration {
	slowest := x.w.Rate
	for _, n := range x.req.Scenario.NICs {
		if n.Rate > 0 && (slowest == 0 || n.Rate < slowest) {
			slowest = n.Rate
		}
	}
	d := DefaultStallTimeout
	if slowest > 0 {
		if t := time.Duration(10 * 65536 * 8 * float64(time.Second) / float64(slowest)); t > d {
			d = t
		}
	}
	return d
}

// progress sums every machine's progress; false when a Worker was lost.
func (x *execution) progress(ctx context.Context) (Progress, bool) {
	var sum Progress
	sum.Counting = true
	for i, m := range x.machines {
		p, err := x.workers[m].Progress(ctx)
		if err != nil {
			x.setLost(ctx, err)
			return sum, false
		}
		sum.Received += p.Received
		if i == 0 {
			sum.Cwnd, sum.HasCwnd = p.Cwnd, p.HasCwnd
		}
		if len(x.taps[m]) > 0 {
			sum.Units += p.Units
			sum.UnitBytes += p.UnitBytes
			sum.Counting = sum.Counting && p.Counting
		}
	}
	sum.Counting = sum.Counting && len(x.taps) > 0
	return sum, true
}

// sample records one Sample per second until every machine's workers
// have ended, reports progress and, for stream and sendfile, stops the
// senders at the deadline. A run that receives nothing for the stall
// timeout, or whose Worker is lost, is aborted on every machine.
func (x *execution) sample(ctx context.Context, t0 time.Time) ([]result.Sample, map[string]WaitReply) {
	waits, done := x.wait(ctx)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var deadline <-chan time.Time
	if x.w.Duration > 0 && (x.w.Kind == config.Stream || x.w.Kind == config.Sendfile) {
		t := time.NewTimer(time.Until(t0.Add(x.w.Duration)))
		defer t.Stop()
		deadline = t.C
	}
	var series []result.Sample
	first, _ := x.progress(ctx)
	last, lastUnits, lastUnitBytes := int64(0), first.Units, first.UnitBytes
	lastT := t0
	stall := x.eng.opts.StallTimeout
	if stall <= 0 {
		stall = x.defaultStall()
	}
	lastProgress := t0
	for {
		select {
		case <-done:
			return series, waits
		case <-ctx.Done():
			x.abort(context.WithoutCancel(ctx))
			<-done
			return series, waits
		case <-deadline:
			for _, m := range x.machines {
				if err := x.workers[m].Stop(ctx, StopSending); err != nil {
					x.setLost(ctx, err)
				}
			}
		case now := <-tick.C:
			p, ok := x.progress(ctx)
			if !ok {
				<-done
				return series, waits
			}
			if p.Received != last {
				lastProgress = now
			} else if now.Sub(lastProgress) >= stall {
				x.setLost(ctx, fmt.Errorf("nothing received for %s (the path between client and servers broke: a namespace, link or peer went away during the run?); stopped the run", now.Sub(lastProgress).Round(time.Second)))
				<-done
				return series, waits
			}
			dt := now.Sub(lastT).Seconds()
			s := result.Sample{T: now.Sub(t0).Seconds(), ThroughputBps: float64(p.Received-last) * 8 / dt}
			if p.HasCwnd {
				s.CwndSegments = p.Cwnd
			}
			if p.Counting {
				if p.Units > lastUnits {
					s.SendUnitBytes = float64(p.UnitBytes-lastUnitBytes) / float64(p.Units-lastUnits)
				}
				lastUnits, lastUnitBytes = p.Units, p.UnitBytes
			}
			series = append(series, s)
			last, lastT = p.Received, now
			if x.req.Progress != nil {
				x.req.Progress(engine.Progress{
					Scenario: x.req.Scenario.Name, Workload: x.w.Name,
					Elapsed: now.Sub(t0), Planned: x.w.Duration, ThroughputBps: s.ThroughputBps,
				})
			}
		}
	}
}

// finishRequest names what machine m reads back: its hosts' NICs and
// sysctls, and the loopback sender NICs no NIC block declares.
func (x *execution) finishRequest(m string) FinishRequest {
	var req FinishRequest
	sc := x.req.Scenario
	for _, n := range sc.NICs {
		if hostMachine(x.req, n.Host) == m {
			req.NICs = append(req.NICs, NICRef{Name: n.Name, Host: n.Host, NS: hostNS(x.req, n.Host), Ifname: ifName(n)})
		}
	}
	seen := map[string]bool{}
	for _, ep := range x.job.Endpoints {
		if ep.ClientMachine != m || seen[ep.SenderNIC] || sc.NIC(ep.SenderNIC) != nil {
			continue
		}
		seen[ep.SenderNIC] = true
		req.NICs = append(req.NICs, NICRef{Name: ep.SenderNIC, NS: ep.CaptureNS, Ifname: ep.CaptureIf})
	}
	for _, h := range sc.Hosts {
		if h.Machine == m {
			req.Hosts = append(req.Hosts, HostRef{Name: h.Name, NS: hostNS(x.req, h.Name)})
		}
	}
	return req
}

// result makes the run's result from what every machine reported.
func (x *execution) result(dur time.Duration, reports map[string]Report, series []result.Sample) *result.WorkloadResult {
	client := reports[x.machines[0]]
	m := measurement{
		Kind:      x.w.Kind,
		Duration:  dur,
		MSS:       x.mss,
		Captured:  !x.eng.opts.DisableCapture,
		Latencies: client.Latencies,
	}
	if client.BPFErr != "" {
		m.BPFErr = errors.New(client.BPFErr)
	}
	offloads := map[string]map[string]bool{}
	prov := &result.Run{Sysctls: map[string]map[string]string{}}
	var notes []string
	boots := map[string]int{} // index in m.Shares by boot ID
	for _, name := range x.machines {
		rep := reports[name]
		m.Bytes += rep.Received
		m.CPUThreads[sideTx] += rep.CPU[sideTx]
		m.CPUThreads[sideRx] += rep.CPU[sideRx]
		m.Process += rep.Process
		if name != "" {
			m.Agents++
		}
		m.TCP[sideTx].merge(rep.TCP[sideTx])
		m.TCP[sideRx].merge(rep.TCP[sideRx])
		i, ok := boots[rep.Boot]
		if !ok || rep.Boot == "" {
			// Another kernel: its softirq time is its own.
			i = len(m.Shares)
			boots[rep.Boot] = i
			m.Shares = append(m.Shares, softShare{Time: rep.Outside + rep.Softirqd})
			m.Outside += rep.Outside
			m.Softirqd += rep.Softirqd
			load := rep.Load
			load.Machine = name
			prov.Load = append(prov.Load, load)
		}
		for s := range m.Shares[i].Segs {
			m.Shares[i].Segs[s] += rep.TCP[s].SegsIn + rep.TCP[s].SegsOut
		}
		if rep.RecvBPFErr != "" && m.RecvBPFErr == nil {
			m.RecvBPFErr = errors.New(rep.RecvBPFErr)
		}
		m.Taps = append(m.Taps, rep.Taps...)
		m.Recv = append(m.Recv, rep.Recv...)
		for k, v := range rep.Offloads {
			offloads[k] = v
		}
		prov.NICs = append(prov.NICs, rep.NICs...)
		for k, v := range rep.Sysctls {
			prov.Sysctls[k] = v
		}
		for k, v := range rep.TCPMetricsDeleted {
			if prov.TCPMetricsDeleted == nil {
				prov.TCPMetricsDeleted = map[string][]string{}
			}
			prov.TCPMetricsDeleted[k] = append(prov.TCPMetricsDeleted[k], v...)
		}
		for _, n := range rep.Notes {
			if name != "" {
				n = "machine " + name + ": " + n
			}
			notes = append(notes, n)
		}
	}
	sortNICs(prov.NICs)
	res := m.result()
	res.Scenario = x.req.Scenario.Name
	res.Workload = x.w.Name
	res.Repetition = x.req.Repetition
	res.Engine = x.eng.Name()
	res.Kernel = client.Kernel
	res.CongestionControl = client.CC
	res.Series = fillSeries(series, m.Taps)
	res.Offloads = offloads
	res.Sides = x.sides(reports)
	res.Notes = append(res.Notes, m.cpuNote())
	res.Notes = append(res.Notes, notes...)
	res.Notes = append(res.Notes, gsoNotes(x.job, m.Taps, offloads)...)
	kernels := map[string]string{}
	for m, rep := range reports {
		kernels[m] = rep.Kernel
	}
	res.Notes = append(res.Notes, hostNotes(x.req, kernels)...)
	res.Provenance = prov
	return res
}

// sides says where each end of the workload ran: the client host, then
// every server host, with its machine and that machine's kernel.
func (x *execution) sides(reports map[string]Report) []result.Side {
	ep0 := x.job.Endpoints[0]
	out := []result.Side{{Side: "client", Host: x.w.Client, Machine: ep0.ClientMachine, Kernel: reports[ep0.ClientMachine].Kernel}}
	seen := map[string]bool{}
	for _, ep := range x.job.Endpoints {
		host := ep.Server
		if n := x.req.Scenario.NIC(ep.Server); n != nil && !x.w.Loopback {
			host = n.Host
		}
		if seen[host] {
			continue
		}
		seen[host] = true
		out = append(out, result.Side{Side: "server", Host: host, Machine: ep.ServerMachine, Kernel: reports[ep.ServerMachine].Kernel})
	}
	return out
}
