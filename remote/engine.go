package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tsolab/tsolab/engine/kernel"
)

// The kernel engine's calls of the protocol: the agent runs a machine's
// part of a workload's run with the same kernel.LocalWorker tsolab runs
// in-process, and Worker is the kernel.Worker that reaches it, so the
// engine does not know which machine it drives.

// WorkerOpenCall opens a Worker on the agent's machine for one run.
type WorkerOpenCall struct {
	Job kernel.Job
}

// WorkerCall is every other call to an open Worker: ID names it, and
// each call reads the fields its kernel.Worker method takes.
type WorkerCall struct {
	ID     int
	Ep     int    // Listen, Dial, Accept
	Port   uint16 // Dial
	N      int    // Dial, Accept
	Start  kernel.StartRequest
	Stop   kernel.Stop
	Finish kernel.FinishRequest
}

// WorkerReply answers a WorkerCall with its method's result.
type WorkerReply struct {
	ID       int // WorkerOpen
	Port     uint16
	MSS      int
	Progress kernel.Progress
	Wait     kernel.WaitReply
	Report   kernel.Report
	// Err is Finish's error, which comes with a report (of the capture
	// files a failed run kept): net/rpc drops the reply of a call that
	// fails.
	Err string
}

// FetchCall reads a chunk of a capture file a Worker wrote on the
// agent's machine, to bring it back to the controller.
type FetchCall struct {
	ID     int
	File   string
	Offset int64
}

// FetchReply is the chunk; EOF says the file ends with it.
type FetchReply struct {
	Data []byte
	EOF  bool
}

// fetchChunk is the most a FetchReply carries.
const fetchChunk = 1 << 20

// agentWorkers are the Workers an agent runs, by ID.
type agentWorkers struct {
	mu   sync.Mutex
	next int
	byID map[int]*agentWorker
}

// agentWorker is one open Worker and the directory of its capture files.
type agentWorker struct {
	w   *kernel.LocalWorker
	dir string
}

func (a *Agent) worker(id int) (*agentWorker, error) {
	a.workers.mu.Lock()
	defer a.workers.mu.Unlock()
	w := a.workers.byID[id]
	if w == nil {
		return nil, fmt.Errorf("no open kernel engine worker %d on this machine", id)
	}
	return w, nil
}

// WorkerOpen opens a Worker for a run; its capture files go to a
// directory of their own until the controller fetches them.
func (a *Agent) WorkerOpen(c WorkerOpenCall, r *WorkerReply) error {
	aw := &agentWorker{}
	var open kernel.CaptureFunc
	if c.Job.Capture {
		dir, err := makeCaptureDir()
		if err != nil {
			return err
		}
		aw.dir = dir
		n := 0
		open = func(t kernel.CaptureTarget) (io.WriteCloser, string, error) {
			n++
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%d.pcapng", n)))
			if err != nil {
				return nil, "", err
			}
			return discardable{f}, f.Name(), nil
		}
	}
	aw.w = kernel.NewLocalWorker(c.Job, open, "")
	a.workers.mu.Lock()
	defer a.workers.mu.Unlock()
	if a.workers.byID == nil {
		a.workers.byID = map[int]*agentWorker{}
	}
	a.workers.next++
	a.workers.byID[a.workers.next] = aw
	r.ID = a.workers.next
	return nil
}

// discardable is a capture file the Worker can take back.
type discardable struct{ *os.File }

func (f discardable) Discard() error {
	f.Close()
	return os.Remove(f.Name())
}

// with calls fn with Worker c.ID.
func (a *Agent) withWorker(c WorkerCall, fn func(w *kernel.LocalWorker, ctx context.Context) error) error {
	aw, err := a.worker(c.ID)
	if err != nil {
		return err
	}
	return fn(aw.w, context.Background())
}

func (a *Agent) WorkerListen(c WorkerCall, r *WorkerReply) error {
	return a.withWorker(c, func(w *kernel.LocalWorker, ctx context.Context) (err error) {
		r.Port, err = w.Listen(ctx, c.Ep)
		return err
	})
}

func (a *Agent) WorkerDial(c WorkerCall, r *WorkerReply) error {
	return a.withWorker(c, func(w *kernel.LocalWorker, ctx context.Context) (err error) {
		r.MSS, err = w.Dial(ctx, c.Ep, c.Port, c.N)
		return err
	})
}

func (a *Agent) WorkerAccept(c WorkerCall, r *WorkerReply) error {
	return a.withWorker(c, func(w *kernel.LocalWorker, ctx context.Context) error {
		return w.Accept(ctx, c.Ep, c.N)
	})
}

func (a *Agent) WorkerStart(c WorkerCall, r *WorkerReply) error {
	return a.withWorker(c, func(w *kernel.LocalWorker, ctx context.Context) error {
		return w.Start(ctx, c.Start)
	})
}

func (a *Agent) WorkerProgress(c WorkerCall, r *WorkerReply) error {
	return a.withWorker(c, func(w *kernel.LocalWorker, ctx context.Context) (err error) {
		r.Progress, err = w.Progress(ctx)
		return err
	})
}

func (a *Agent) WorkerStop(c WorkerCall, r *WorkerReply) error {
	return a.withWorker(c, func(w *kernel.LocalWorker, ctx context.Context) error {
		return w.Stop(ctx, c.Stop)
	})
}

func (a *Agent) WorkerWait(c WorkerCall, r *WorkerReply) error {
	return a.withWorker(c, func(w *kernel.LocalWorker, ctx context.Context) (err error) {
		r.Wait, err = w.Wait(ctx)
		return err
	})
}

// WorkerFinish answers Finish; its error travels in the reply (Err),
// beside the report.
func (a *Agent) WorkerFinish(c WorkerCall, r *WorkerReply) error {
	return a.withWorker(c, func(w *kernel.LocalWorker, ctx context.Context) error {
		var err error
		r.Report, err = w.Finish(ctx, c.Finish)
		r.Err = errString(err)
		return nil
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// WorkerFetch reads a chunk of one of the Worker's capture files.
func (a *Agent) WorkerFetch(c FetchCall, r *FetchReply) error {
	aw, err := a.worker(c.ID)
	if err != nil {
		return err
	}
	if aw.dir == "" || filepath.Dir(c.File) != aw.dir {
		return fmt.Errorf("%s is not a capture file of worker %d", c.File, c.ID)
	}
	f, err := os.Open(c.File)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, fetchChunk)
	n, err := f.ReadAt(buf, c.Offset)
	r.Data = buf[:n]
	switch {
	case errors.Is(err, io.EOF):
		r.EOF = true
	case err != nil:
		return err
	}
	return nil
}

// WorkerClose closes a Worker and removes its capture files.
func (a *Agent) WorkerClose(c WorkerCall, r *WorkerReply) error {
	a.workers.mu.Lock()
	aw := a.workers.byID[c.ID]
	delete(a.workers.byID, c.ID)
	a.workers.mu.Unlock()
	if aw != nil {
		aw.close()
	}
	return nil
}

func (aw *agentWorker) close() {
	aw.w.Close()
	if aw.dir != "" {
		os.RemoveAll(aw.dir)
	}
}

// closeWorkers closes what a controller that went away left open.
func (a *Agent) closeWorkers() {
	a.workers.mu.Lock()
	all := a.workers.byID
	a.workers.byID = nil
	a.workers.mu.Unlock()
	for _, aw := range all {
		aw.close()
	}
}

// Worker is the kernel.Worker of another machine: every call goes to its
// agent's LocalWorker. Errors name the machine; a connection lost
// mid-run is a *LostError.
type Worker struct {
	c    *Client
	id   int
	open kernel.CaptureFunc
	once sync.Once

	mu   sync.Mutex
	lost error // the connection's loss, returned by every later call
}

var _ kernel.Worker = (*Worker)(nil)

// OpenWorker opens a Worker on c's machine for one run of job; capture
// opens the controller's files the machine's capture files are copied to.
func OpenWorker(ctx context.Context, c *Client, job kernel.Job, capture kernel.CaptureFunc) (*Worker, error) {
	var r WorkerReply
	if err := c.call(ctx, "WorkerOpen", WorkerOpenCall{Job: job}, &r); err != nil {
		return nil, err
	}
	return &Worker{c: c, id: r.ID, open: capture}, nil
}

// KernelWorkers is the kernel engine's Options.Remote for the machines
// m reaches.
func KernelWorkers(m *Machines) kernel.WorkerFactory {
	return func(ctx context.Context, machine string, job kernel.Job, capture kernel.CaptureFunc) (kernel.Worker, error) {
		c, err := m.Client(ctx, machine)
		if err != nil {
			return nil, err
		}
		return OpenWorker(ctx, c, job, capture)
	}
}

// do makes one call; once the connection is lost, every call fails at
// once with that loss (a lost connection does not come back).
func (w *Worker) do(ctx context.Context, method string, c WorkerCall) (WorkerReply, error) {
	c.ID = w.id
	var r WorkerReply
	w.mu.Lock()
	lost := w.lost
	w.mu.Unlock()
	if lost != nil {
		return r, lost
	}
	err := w.c.call(ctx, method, c, &r)
	var le *LostError
	if errors.As(err, &le) {
		w.mu.Lock()
		w.lost = err
		w.mu.Unlock()
	}
	return r, err
}

func (w *Worker) Listen(ctx context.Context, ep int) (uint16, error) {
	r, err := w.do(ctx, "WorkerListen", WorkerCall{Ep: ep})
	return r.Port, err
}

func (w *Worker) Dial(ctx context.Context, ep int, port uint16, n int) (int, error) {
	r, err := w.do(ctx, "WorkerDial", WorkerCall{Ep: ep, Port: port, N: n})
	return r.MSS, err
}

func (w *Worker) Accept(ctx context.Context, ep int, n int) error {
	_, err := w.do(ctx, "WorkerAccept", WorkerCall{Ep: ep, N: n})
	return err
}

func (w *Worker) Start(ctx context.Context, req kernel.StartRequest) error {
	_, err := w.do(ctx, "WorkerStart", WorkerCall{Start: req})
	return err
}

func (w *Worker) Progress(ctx context.Context) (kernel.Progress, error) {
	r, err := w.do(ctx, "WorkerProgress", WorkerCall{})
	return r.Progress, err
}

func (w *Worker) Stop(ctx context.Context, how kernel.Stop) error {
	_, err := w.do(ctx, "WorkerStop", WorkerCall{Stop: how})
	return err
}

// Wait names the machine in a worker's error.
func (w *Worker) Wait(ctx context.Context) (kernel.WaitReply, error) {
	r, err := w.do(ctx, "WorkerWait", WorkerCall{})
	if r.Wait.Err != "" {
		r.Wait.Err = fmt.Sprintf("machine %s: %s", w.c.Machine, r.Wait.Err)
	}
	return r.Wait, err
}

// Finish brings the machine's capture files back to the controller's
// (Options.Capture), under the names it gives them.
func (w *Worker) Finish(ctx context.Context, req kernel.FinishRequest) (kernel.Report, error) {
	r, err := w.do(ctx, "WorkerFinish", WorkerCall{Finish: req})
	if err != nil {
		return kernel.Report{}, err
	}
	rep := r.Report
	var finish error
	if r.Err != "" {
		finish = fmt.Errorf("machine %s: %s", w.c.Machine, r.Err)
	}
	for _, taps := range [][]kernel.TapReport{rep.Taps, rep.Recv} {
		for i := range taps {
			if err := w.fetch(ctx, &taps[i]); err != nil && finish == nil {
				finish = err
			}
		}
	}
	return rep, finish
}

// fetch copies a tap's capture file from the machine into the file
// Options.Capture opens for its target, and names it so.
func (w *Worker) fetch(ctx context.Context, t *kernel.TapReport) error {
	if t.File == "" || w.open == nil {
		return nil
	}
	out, name, err := w.open(t.Target)
	if err != nil {
		return err
	}
	for off := int64(0); ; {
		var r FetchReply
		if err := w.c.call(ctx, "WorkerFetch", FetchCall{ID: w.id, File: t.File, Offset: off}, &r); err != nil {
			out.Close()
			return fmt.Errorf("bring capture file %s back: %w", name, err)
		}
		if _, err := out.Write(r.Data); err != nil {
			out.Close()
			return fmt.Errorf("capture file %s: %w", name, err)
		}
		off += int64(len(r.Data))
		if r.EOF {
			break
		}
	}
	t.File = name
	return out.Close()
}

// Close closes the Worker on the machine; a lost machine has closed it.
func (w *Worker) Close() error {
	w.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		w.do(ctx, "WorkerClose", WorkerCall{})
	})
	return nil
}
