package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

// provenance says what the model ran with: the stack and CPU profiles of
// the scenario's hosts, and a hash of their definitions as this engine
// holds them (stack name and options, every CPU cost), so two runs with
// the same hash ran the same model.
func (w *world) provenance(sc *config.Scenario) *result.Run {
	m := &result.Model{}
	h := sha256.New()
	for _, hst := range w.hosts {
		var opts map[string]string
		if hc := sc.Host(hst.name); hc != nil {
			opts = hc.StackOptions
		}
		var run *Scheduler
		if hst.sched != nil {
			run = &hst.sched.Scheduler
			m.Schedulers = append(m.Schedulers, run.String())
		}
		// fmt prints maps sorted by key and CPUProfile as plain data.
		fmt.Fprintf(h, "%s\x00%s\x00%v\x00%s\x00", hst.name, hst.prof.name, opts, hst.cpu.hashText(run))
		m.Stacks = append(m.Stacks, hst.prof.name)
		m.CPUs = append(m.CPUs, hst.cpu.Name)
	}
	slices.Sort(m.Stacks)
	m.Stacks = slices.Compact(m.Stacks)
	slices.Sort(m.CPUs)
	m.CPUs = slices.Compact(m.CPUs)
	slices.Sort(m.Schedulers)
	m.Schedulers = slices.Compact(m.Schedulers)
	m.Hash = hex.EncodeToString(h.Sum(nil))
	m.Files = w.e.files
	if w.rnd != nil {
		seed := w.e.seed
		m.Seed = &seed
	}
	return &result.Run{Model: m}
}
