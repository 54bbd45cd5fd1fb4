package main

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/result"
)

// The model's runs share nothing and their results depend on their
// request only, so the runs of one round go on all of the machine's cores
// at once; the round's loop then takes their results in its own order,
// as if it had run them one by one: the results, the messages and the
// -json - stream are those of a serial run.

// aheadRun is one run started ahead of the loop that reports it.
type aheadRun struct {
	done     chan struct{}
	res      *result.WorkloadResult
	err      error
	wall     time.Duration     // what the run took, not the wait for it
	progress []engine.Progress // what the run reported, in order
}

// runsAhead are the runs of one round, started on up to workers
// goroutines. Precondition: eng runs concurrent requests independently
// (the model does; the kernel engine's runs share the lab and must not).
type runsAhead struct {
	runs   map[aheadKey]*aheadRun
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type aheadKey struct {
	sc *config.Scenario
	w  *config.Workload
}

// startRound starts the runs of one round ahead when the engine is the
// model and more than one core may run them: the runs of every workload
// of scenarios that todo keeps, req making each one's request. It returns
// nil (every run goes when the loop calls it) otherwise.
func (c *cli) startRound(ctx context.Context, eng engine.Engine, kind config.EngineKind, scenarios []*config.Scenario,
	req func(*config.Scenario, *config.Workload) engine.RunRequest, todo func(*config.Scenario, *config.Workload) bool) *runsAhead {
	workers := c.simWorkers()
	if kind != config.EngineSim || workers < 2 {
		return nil
	}
	var reqs []engine.RunRequest
	for _, sc := range scenarios {
		for _, w := range sc.Workloads {
			if todo(sc, w) {
				reqs = append(reqs, req(sc, w))
			}
		}
	}
	if len(reqs) < 2 {
		return nil
	}
	return startAhead(ctx, eng, reqs, workers)
}

// startAhead starts every run of reqs on up to workers goroutines, in the
// order given (the loop waits for the first one first).
func startAhead(ctx context.Context, eng engine.Engine, reqs []engine.RunRequest, workers int) *runsAhead {
	ctx, cancel := context.WithCancel(ctx)
	ra := &runsAhead{runs: map[aheadKey]*aheadRun{}, cancel: cancel}
	queue := make(chan int, len(reqs))
	runs := make([]*aheadRun, len(reqs))
	for i, req := range reqs {
		runs[i] = &aheadRun{done: make(chan struct{})}
		ra.runs[aheadKey{req.Scenario, req.Workload}] = runs[i]
		queue <- i
	}
	close(queue)
	for range min(workers, len(reqs)) {
		ra.wg.Add(1)
		go func() {
			defer ra.wg.Done()
			for i := range queue {
				r, req := runs[i], reqs[i]
				req.Progress = func(p engine.Progress) { r.progress = append(r.progress, p) }
				start := time.Now()
				r.res, r.err = eng.Run(ctx, req)
				r.wall = time.Since(start)
				close(r.done)
			}
		}()
	}
	return ra
}

// run returns the result of req and the wall time its run took: of its
// run started ahead, once done, after replaying the run's progress
// reports to req.Progress; else of eng.Run. An interrupt reaches a run
// started ahead through the context startAhead was given.
func (ra *runsAhead) run(ctx context.Context, eng engine.Engine, req engine.RunRequest) (*result.WorkloadResult, time.Duration, error) {
	var r *aheadRun
	if ra != nil {
		r = ra.runs[aheadKey{req.Scenario, req.Workload}]
	}
	if r == nil {
		start := time.Now()
		res, err := eng.Run(ctx, req)
		return res, time.Since(start), err
	}
	<-r.done
	if req.Progress != nil {
		for _, p := range r.progress {
			req.Progress(p)
		}
	}
	return r.res, r.wall, r.err
}

// stop cancels the runs not yet done and waits for every goroutine.
func (ra *runsAhead) stop() {
	if ra == nil {
		return
	}
	ra.cancel()
	ra.wg.Wait()
}

// simWorkers is how many of the model's runs go at once: one per core
// the Go runtime may use, unless c says otherwise (tests: 1 for a serial
// run).
func (c *cli) simWorkers() int {
	if c.workers > 0 {
		return c.workers
	}
	return runtime.GOMAXPROCS(0)
}
