package planner

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/provider"
)

// EventKind says what happened to one change during an apply.
type EventKind uint8

const (
	EventStart    EventKind = iota // the provider call began
	EventComplete                  // it succeeded
	EventFailed                    // it failed; Diagnostics say why
	EventSkipped                   // not attempted: something it depends on failed
)

func (k EventKind) String() string {
	switch k {
	case EventStart:
		return "start"
	case EventComplete:
		return "complete"
	case EventFailed:
		return "failed"
	case EventSkipped:
		return "skipped"
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event reports progress of one operation of an apply.
type Event struct {
	Kind EventKind
	Addr provider.Addr
	// Action is the operation: Create, Update or Delete. A Replace runs as
	// a Delete then a Create, both with Replacing set.
	Action    Action
	Replacing bool
	// Elapsed is the provider call's duration (Complete, Failed).
	Elapsed     time.Duration
	Diagnostics hcl.Diagnostics // Failed: the root cause
	// Cause is the failed operation's resource (Skipped).
	Cause provider.Addr
}

// Skipped is an operation not attempted because one it depends on failed.
type Skipped struct {
	Addr   provider.Addr
	Action Action
	Cause  provider.Addr
}

// ApplyResult is what an apply did.
type ApplyResult struct {
	Mode Mode
	// Added, Changed and Destroyed count completed operations; a Replace
	// adds one and destroys one.
	Added, Changed, Destroyed int
	// Failed lists resources whose operation failed, in the order they failed.
	Failed  []provider.Addr
	Skipped []Skipped
	// Interrupted: the context was cancelled (Ctrl-C, SIGTERM) before
	// every operation started; the ones not started are in Skipped.
	Interrupted bool
	// Diagnostics hold each failure's root cause once.
	Diagnostics hcl.Diagnostics
	// State is the state as written at the end.
	State *State
	// StateWrites counts state files written.
	StateWrites int
}

// Summary is "Apply complete! Resources: 1 added, 2 changed, 0 destroyed."
// (or "Destroy complete! ..."), "Apply failed: ..." (or "Destroy
// failed: ...") saying how many operations failed and were skipped, or
// "Apply interrupted: ..." saying how many were not started: one outcome,
// never "complete" for an apply that stopped half-way.
func (r *ApplyResult) Summary() string {
	verb := "Apply"
	if r.Mode == ModeDestroy {
		verb = "Destroy"
	}
	if r.Interrupted && len(r.Failed) == 0 {
		return fmt.Sprintf("%s interrupted: %d operation(s) not started. Resources: %d added, %d changed, %d destroyed.",
			verb, len(r.Skipped), r.Added, r.Changed, r.Destroyed)
	}
	if len(r.Failed) > 0 {
		return fmt.Sprintf("%s failed: %d operation(s) failed, %d skipped because something they depend on failed. Resources: %d added, %d changed, %d destroyed.",
			verb, len(r.Failed), len(r.Skipped), r.Added, r.Changed, r.Destroyed)
	}
	if r.Mode == ModeDestroy {
		return fmt.Sprintf("Destroy complete! Resources: %d destroyed.", r.Destroyed)
	}
	return fmt.Sprintf("Apply complete! Resources: %d added, %d changed, %d destroyed.", r.Added, r.Changed, r.Destroyed)
}

// op is one provider call of an apply: a node of the walk.
type op struct {
	addr      provider.Addr
	action    Action // Create, Update or Delete
	replacing bool
	change    *Change
	after     []int // ops that must succeed before this one
	before    []int // ops waiting for this one
}

// buildOps turns the plan's changes into provider calls and their order:
//   - creates and updates after the creates and updates of their
//     dependencies;
//   - deletes before the deletes of what they depended on (dependents
//     first), using the recorded dependencies;
//   - a replace's create after its delete;
//   - creates and updates after the deletes of resources leaving the lab,
//     so a name they free (an adopted device, an address) is free.
func buildOps(p *Plan) []*op {
	var ops []*op
	upd := map[provider.Addr]int{}
	del := map[provider.Addr]int{}
	var pureDeletes []int
	add := func(o *op) int { ops = append(ops, o); return len(ops) - 1 }
	for i := range p.Changes {
		c := &p.Changes[i]
		switch c.Action {
		case Create, Update:
			upd[c.Addr] = add(&op{addr: c.Addr, action: c.Action, change: c})
		case Delete:
			del[c.Addr] = add(&op{addr: c.Addr, action: Delete, change: c})
			pureDeletes = append(pureDeletes, del[c.Addr])
		case Replace:
			del[c.Addr] = add(&op{addr: c.Addr, action: Delete, replacing: true, change: c})
			upd[c.Addr] = add(&op{addr: c.Addr, action: Create, replacing: true, change: c})
		}
	}
	edge := func(first, then int) {
		ops[first].before = append(ops[first].before, then)
		ops[then].after = append(ops[then].after, first)
	}
	for i := range p.Changes {
		c := &p.Changes[i]
		if u, ok := upd[c.Addr]; ok {
			for _, d := range c.DependsOn {
				if du, ok := upd[d]; ok {
					edge(du, u)
				}
			}
			for _, d := range pureDeletes {
				edge(d, u)
			}
			if d, ok := del[c.Addr]; ok {
				edge(d, u)
			}
		}
		if d, ok := del[c.Addr]; ok {
			var deps []provider.Addr
			if rec := p.Prior.Resource(c.Addr); rec != nil {
				deps = rec.DependsOn
			}
			for _, dep := range deps {
				if dd, ok := del[dep]; ok {
					edge(d, dd)
				}
			}
		}
	}
	return ops
}

// walk runs ops in dependency order, at most parallelism at a time, as
// the state of that lineage (the owner of what it creates and deletes). A
// failed op fails everything downstream of it, which is reported as
// skipped, not as another error. Independent ops continue. When ctx is
// cancelled no new op starts.
func (p *Planner) walk(ctx context.Context, plan *Plan, lineage string, w *stateWriter, res *ApplyResult) {
	ops := buildOps(plan)
	naming := provider.NewNaming(plan.Lab)
	naming.Owner = lineage
	parallelism := p.opts.Parallelism
	if parallelism < 1 {
		parallelism = DefaultParallelism
	}

	type result struct {
		id    int
		diags hcl.Diagnostics
		fatal bool // the state could not be written: start nothing more
	}
	pending := make([]int, len(ops)) // unfinished dependencies
	var ready []int
	for i, o := range ops {
		pending[i] = len(o.after)
		if pending[i] == 0 {
			ready = append(ready, i)
		}
	}
	var evMu sync.Mutex
	emit := func(ev Event) {
		if p.opts.OnEvent == nil {
			return
		}
		evMu.Lock()
		defer evMu.Unlock()
		p.opts.OnEvent(ev)
	}

	done := make(chan result)
	running, finished := 0, 0
	skipped := make([]bool, len(ops))
	started := make([]bool, len(ops))
	stop := false
	var skip func(id int, cause provider.Addr)
	skip = func(id int, cause provider.Addr) {
		for _, n := range ops[id].before {
			if skipped[n] {
				continue
			}
			skipped[n] = true
			finished++
			res.Skipped = append(res.Skipped, Skipped{Addr: ops[n].addr, Action: ops[n].action, Cause: cause})
			emit(Event{Kind: EventSkipped, Addr: ops[n].addr, Action: ops[n].action, Replacing: ops[n].replacing, Cause: cause})
			skip(n, cause)
		}
	}
	for finished < len(ops) {
		for !stop && running < parallelism && len(ready) > 0 {
			if ctx.Err() != nil {
				stop = true
				break
			}
			id := ready[0]
			ready = ready[1:]
			running++
			started[id] = true
			o := ops[id]
			go func() {
				emit(Event{Kind: EventStart, Addr: o.addr, Action: o.action, Replacing: o.replacing})
				start := time.Now()
				diags, fatal := p.runOp(ctx, naming, o, w)
				ev := Event{Kind: EventComplete, Addr: o.addr, Action: o.action, Replacing: o.replacing, Elapsed: time.Since(start)}
				if diags.HasErrors() {
					ev.Kind, ev.Diagnostics = EventFailed, diags
				}
				emit(ev)
				done <- result{id: id, diags: diags, fatal: fatal}
			}()
		}
		if running == 0 {
			if !stop {
				panic("planner: apply graph has a cycle")
			}
			// Stopped (cancelled, or the state cannot be written) with
			// nothing in flight: what did not run is skipped.
			for id, o := range ops {
				if !skipped[id] && !started[id] {
					skipped[id] = true
					finished++
					res.Skipped = append(res.Skipped, Skipped{Addr: o.addr, Action: o.action})
					emit(Event{Kind: EventSkipped, Addr: o.addr, Action: o.action, Replacing: o.replacing})
				}
			}
			break
		}
		r := <-done
		running--
		finished++
		o := ops[r.id]
		res.Diagnostics = append(res.Diagnostics, r.diags...)
		if r.fatal {
			stop = true
		}
		if r.diags.HasErrors() {
			res.Failed = append(res.Failed, o.addr)
			skip(r.id, o.addr)
			continue
		}
		switch {
		case o.action == Delete:
			res.Destroyed++
		case o.action == Create:
			res.Added++
		default:
			res.Changed++
		}
		for _, n := range o.before {
			pending[n]--
			if pending[n] == 0 && !skipped[n] {
				ready = append(ready, n)
			}
		}
	}
	if err := context.Cause(ctx); err != nil && (len(res.Skipped) > 0) {
		res.Interrupted = true
		res.Diagnostics = append(res.Diagnostics, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Apply interrupted",
			Detail:   fmt.Sprintf("%v: %d operation(s) were not started. The state records what was made; run tsolab apply again to finish, or tsolab destroy.", err, len(res.Skipped)),
		})
	}
}

// runOp makes one provider call and records its outcome in the state.
// fatal reports that the state could not be written.
func (p *Planner) runOp(ctx context.Context, naming provider.Naming, o *op, w *stateWriter) (diags hcl.Diagnostics, fatal bool) {
	prov := p.opts.Providers[o.addr.Kind]
	if prov == nil {
		return hcl.Diagnostics{noProvider(o.addr)}, false
	}
	c := o.change
	stateErr := func(err error) (hcl.Diagnostics, bool) {
		return append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("%s: the state could not be written", o.addr),
			Detail:   fmt.Sprintf("%v. tsolab stopped starting changes; what was made may not be recorded in %s.", err, StatePath(p.opts.Dir)),
		}), true
	}
	switch o.action {
	case Create:
		rec := ResourceState{Addr: o.addr, Status: StatusCreating, Attrs: c.After.Clone(), DependsOn: c.DependsOn}
		if old := w.Lookup(o.addr); old != nil {
			rec.Attrs = mergeRestore(rec.Attrs, old.Attrs)
		}
		// Recorded before the call: if tsolab dies during Create, the next
		// refresh finds the half-made object and destroy removes it.
		if err := w.Record(rec); err != nil {
			return stateErr(err)
		}
		resp := prov.Create(ctx, provider.CreateRequest{Naming: naming, Addr: o.addr, Desired: c.After.Clone()})
		diags = resp.Diagnostics
		if resp.New != nil {
			rec.Attrs = mergeRestore(resp.New.Clone(), rec.Attrs)
		}
		if !diags.HasErrors() {
			rec.Status = StatusReady
		}
		if err := w.Record(rec); err != nil {
			return stateErr(err)
		}
	case Update:
		old := w.Lookup(o.addr)
		resp := prov.Update(ctx, provider.UpdateRequest{Naming: naming, Addr: o.addr, Prior: c.Before.Clone(), Desired: c.After.Clone()})
		diags = resp.Diagnostics
		if resp.New != nil {
			rec := ResourceState{Addr: o.addr, Status: StatusReady, Attrs: resp.New.Clone(), DependsOn: c.DependsOn}
			if old != nil {
				rec.Attrs = mergeRestore(rec.Attrs, old.Attrs)
			}
			if err := w.Record(rec); err != nil {
				return stateErr(err)
			}
		}
	case Delete:
		old := w.Lookup(o.addr)
		if old == nil {
			return nil, false // nothing recorded: nothing of ours to delete
		}
		resp := prov.Delete(ctx, provider.DeleteRequest{Naming: naming, Addr: o.addr, Recorded: old.Attrs.Clone()})
		diags = resp.Diagnostics
		if !diags.HasErrors() {
			if err := w.Forget(o.addr); err != nil {
				return stateErr(err)
			}
		}
	default:
		panic(fmt.Sprintf("planner: op with action %v", o.action))
	}
	return diags, false
}
