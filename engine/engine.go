package engine

import (
	"context"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/result"
)

// Engine runs the workloads of one scenario.
type Engine interface {
	// Name is "kernel" or "sim".
	Name() string
	// Run runs one workload of the scenario once and measures it. Its
	// errors do not name the request's scenario and workload: the
	// caller, which chose them, does (tsolab test: "scenario S,
	// workload W: ...").
	Run(ctx context.Context, req RunRequest) (*result.WorkloadResult, error)
}

// RunRequest is one workload run.
type RunRequest struct {
	Lab      *config.Lab
	Scenario *config.Scenario
	Workload *config.Workload
	// Naming gives the namespaces of the applied lab (kernel engine).
	Naming provider.Naming
	// Repetition is the 0-based index of this run among -repeat N.
	Repetition int
	// Progress, when not nil, is called about once per second of workload
	// time (wall time for the kernel engine, virtual time for the model).
	Progress func(Progress)
}

// Progress is a snapshot of a running workload.
type Progress struct {
	Scenario, Workload string
	Elapsed, Planned   time.Duration
	ThroughputBps      float64 // over the last interval
}
