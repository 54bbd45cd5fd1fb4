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
	// going (a Delete) lists what the resource depends on that this walk
	// deletes after it: provider.DeleteRequest.Going.
	going []provider.Addr
	// prior is what the state recorded at op's address before the walk
	// recorded it "creating" (nil: nothing), put back when the op never
	// starts; set only for the creates recorded together at the start of
	// the walk (recordCreates).
	prior    *ResourceState
	recorded bool
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
					ops[d].going = append(ops[d].going, dep)
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
	k := newWalker(p, plan, lineage, w, res)
	parallelism := p.opts.Parallelism
	if parallelism < 1 {
		parallelism = DefaultParallelism
	}
	k.recordCreates()
	// The ops run on a pool of workers, each taking op after op: a
	// goroutine's stack grows once to what provider calls need, not once
	// per op (a 1000-host apply started 2001 goroutines).
	for range min(parallelism, len(k.ops)) {
		go func() {
			for id := range k.work {
				k.run(ctx, id)
			}
		}()
	}
	defer close(k.work)
	for k.finished < len(k.ops) {
		k.startReady(ctx, parallelism)
		if k.running == 0 {
			if !k.stop {
				panic("planner: apply graph has a cycle")
			}
			// Stopped (cancelled, or the state cannot be written) with
			// nothing in flight: what did not run is skipped.
			k.skipUnstarted()
			break
		}
		k.finish(<-k.done)
	}
	k.unrecordUnstarted()
	if err := context.Cause(ctx); err != nil && (len(res.Skipped) > 0) {
		res.Interrupted = true
		res.Diagnostics = append(res.Diagnostics, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Apply interrupted",
			Detail:   fmt.Sprintf("%v: %d operation(s) were not started. The state records what was made; run tsolab apply again to finish, or tsolab destroy.", err, len(res.Skipped)),
		})
	}
}

// walker is one walk's progress over its ops. Only the walk's goroutine
// touches it, except emit (called from the ops' goroutines, under evMu)
// and done (the ops' results).
type walker struct {
	p      *Planner
	ops    []*op
	naming provider.Naming
	w      *stateWriter
	res    *ApplyResult

	pending           []int // per op: its unfinished dependencies
	ready             []int // ops whose dependencies all succeeded, not started
	skipped, started  []bool
	running, finished int
	stop              bool // start nothing more: cancelled, or the state cannot be written
	done              chan opResult
	work              chan int // ops to run, taken by the walk's workers
	evMu              sync.Mutex
}

// opResult is what one op's goroutine reports to the walk.
type opResult struct {
	id    int
	diags hcl.Diagnostics
	fatal bool // the state could not be written: start nothing more
}

func newWalker(p *Planner, plan *Plan, lineage string, w *stateWriter, res *ApplyResult) *walker {
	k := &walker{p: p, ops: buildOps(plan), w: w, res: res, done: make(chan opResult), work: make(chan int)}
	k.naming = provider.NewNaming(plan.Lab)
	k.naming.Owner = lineage
	k.pending = make([]int, len(k.ops))
	k.skipped = make([]bool, len(k.ops))
	k.started = make([]bool, len(k.ops))
	for i, o := range k.ops {
		k.pending[i] = len(o.after)
		if k.pending[i] == 0 {
			k.ready = append(k.ready, i)
		}
	}
	return k
}

// recordCreates records every create of the walk "creating" (but the
// create half of a replace, which follows its delete) in one state
// write, before any provider call: what an op is about to make is on
// disk before it starts, as each op would otherwise wait for on its own,
// and the ops wait for no state write at all (they note their outcomes:
// stateWriter.Note). A record of an op that never starts (a dependency
// failed, the apply was cancelled) is put back as it was
// (unrecordUnstarted); after a crash, a "creating" record of what was
// never made reads as gone, and the next apply creates it. When the
// state cannot be written nothing starts.
func (k *walker) recordCreates() {
	var recs []ResourceState
	for _, o := range k.ops {
		if o.action != Create || o.replacing {
			continue
		}
		o.prior = k.w.Lookup(o.addr)
		recs = append(recs, creatingRecord(o))
		o.recorded = true
	}
	if len(recs) == 0 {
		return
	}
	if err := k.w.RecordAll(recs); err != nil {
		k.res.Diagnostics = append(k.res.Diagnostics, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "The state could not be written",
			Detail:   fmt.Sprintf("%v. tsolab started no change.", err),
		})
		k.stop = true
	}
}

// unrecordUnstarted puts back the prior record of every create recorded
// at the start that never started.
func (k *walker) unrecordUnstarted() {
	for id, o := range k.ops {
		if !o.recorded || k.started[id] {
			continue
		}
		if o.prior == nil {
			k.w.NoteForget(o.addr)
		} else {
			k.w.Note(*o.prior)
		}
	}
}

// creatingRecord is the record of create o before its provider call: the
// desired attributes, keeping what an earlier record has to restore.
func creatingRecord(o *op) ResourceState {
	c := o.change
	rec := ResourceState{Addr: o.addr, Status: StatusCreating, Attrs: c.After.Clone(), DependsOn: c.DependsOn}
	if o.prior != nil {
		rec.Attrs = mergeRestore(rec.Attrs, o.prior.Attrs)
	}
	return rec
}

// emit passes ev to the OnEvent hook, one event at a time.
func (k *walker) emit(ev Event) {
	if k.p.opts.OnEvent == nil {
		return
	}
	k.evMu.Lock()
	defer k.evMu.Unlock()
	k.p.opts.OnEvent(ev)
}

// startReady starts ready ops, each on a worker of the walk's, until
// parallelism are running; it stops the walk when ctx is cancelled.
func (k *walker) startReady(ctx context.Context, parallelism int) {
	for !k.stop && k.running < parallelism && len(k.ready) > 0 {
		if ctx.Err() != nil {
			k.stop = true
			return
		}
		id := k.ready[0]
		k.ready = k.ready[1:]
		k.running++
		k.started[id] = true
		k.work <- id // a worker is free: fewer than parallelism run
	}
}

// run makes op id's provider call, with its start and end events, and
// reports the result on done.
func (k *walker) run(ctx context.Context, id int) {
	o := k.ops[id]
	k.emit(Event{Kind: EventStart, Addr: o.addr, Action: o.action, Replacing: o.replacing})
	start := time.Now()
	diags, fatal := k.p.runOp(ctx, k.naming, o, k.w)
	ev := Event{Kind: EventComplete, Addr: o.addr, Action: o.action, Replacing: o.replacing, Elapsed: time.Since(start)}
	if diags.HasErrors() {
		ev.Kind, ev.Diagnostics = EventFailed, diags
	}
	k.emit(ev)
	k.done <- opResult{id: id, diags: diags, fatal: fatal}
}

// finish takes in a finished op: counts it, and either skips what
// depends on it (it failed) or readies the ops it was the last
// dependency of.
func (k *walker) finish(r opResult) {
	k.running--
	k.finished++
	o := k.ops[r.id]
	k.res.Diagnostics = append(k.res.Diagnostics, r.diags...)
	if r.fatal {
		k.stop = true
	}
	if r.diags.HasErrors() {
		k.res.Failed = append(k.res.Failed, o.addr)
		k.skipDownstream(r.id, o.addr)
		return
	}
	switch {
	case o.action == Delete:
		k.res.Destroyed++
	case o.action == Create:
		k.res.Added++
	default:
		k.res.Changed++
	}
	for _, n := range o.before {
		k.pending[n]--
		if k.pending[n] == 0 && !k.skipped[n] {
			k.ready = append(k.ready, n)
		}
	}
}

// skipDownstream skips every op that waits, directly or not, for op id,
// whose failure at cause is the reason.
func (k *walker) skipDownstream(id int, cause provider.Addr) {
	for _, n := range k.ops[id].before {
		if k.skipped[n] {
			continue
		}
		k.skipped[n] = true
		k.finished++
		k.res.Skipped = append(k.res.Skipped, Skipped{Addr: k.ops[n].addr, Action: k.ops[n].action, Cause: cause})
		k.emit(Event{Kind: EventSkipped, Addr: k.ops[n].addr, Action: k.ops[n].action, Replacing: k.ops[n].replacing, Cause: cause})
		k.skipDownstream(n, cause)
	}
}

// skipUnstarted skips every op that neither ran nor was skipped already.
func (k *walker) skipUnstarted() {
	for id, o := range k.ops {
		if !k.skipped[id] && !k.started[id] {
			k.skipped[id] = true
			k.finished++
			k.res.Skipped = append(k.res.Skipped, Skipped{Addr: o.addr, Action: o.action})
			k.emit(Event{Kind: EventSkipped, Addr: o.addr, Action: o.action, Replacing: o.replacing})
		}
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
	// The outcome of a call is noted, not waited for: if tsolab dies
	// before a later write carries it, the state holds what it held
	// before the call ("creating", the attributes before an update, the
	// record of what was deleted), which the next refresh reads as it is.
	switch o.action {
	case Create:
		if !o.recorded {
			o.prior = w.Lookup(o.addr)
			// Recorded before the call: if tsolab dies during Create, the
			// next refresh finds the half-made object and destroy removes
			// it.
			if err := w.Record(creatingRecord(o)); err != nil {
				return stateErr(err)
			}
		}
		rec := creatingRecord(o)
		resp := prov.Create(ctx, provider.CreateRequest{Naming: naming, Addr: o.addr, Desired: c.After.Clone()})
		diags = resp.Diagnostics
		if resp.New != nil {
			rec.Attrs = mergeRestore(resp.New.Clone(), rec.Attrs)
		}
		if !diags.HasErrors() {
			rec.Status = StatusReady
		}
		w.Note(rec)
	case Update:
		old := w.Lookup(o.addr)
		resp := prov.Update(ctx, provider.UpdateRequest{Naming: naming, Addr: o.addr, Prior: c.Before.Clone(), Desired: c.After.Clone()})
		diags = resp.Diagnostics
		if resp.New != nil {
			rec := ResourceState{Addr: o.addr, Status: StatusReady, Attrs: resp.New.Clone(), DependsOn: c.DependsOn}
			if old != nil {
				rec.Attrs = mergeRestore(rec.Attrs, old.Attrs)
			}
			w.Note(rec)
		}
	case Delete:
		old := w.Lookup(o.addr)
		if old == nil {
			return nil, false // nothing recorded: nothing of ours to delete
		}
		resp := prov.Delete(ctx, provider.DeleteRequest{Naming: naming, Addr: o.addr, Recorded: old.Attrs.Clone(), Going: o.going})
		diags = resp.Diagnostics
		if !diags.HasErrors() {
			w.NoteForget(o.addr)
		}
	default:
		panic(fmt.Sprintf("planner: op with action %v", o.action))
	}
	return diags, false
}
