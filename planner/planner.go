package planner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/provider"
)

// DefaultParallelism bounds concurrent provider calls when
// Options.Parallelism is zero.
const DefaultParallelism = 64

// Options wire a Planner to one lab.
type Options struct {
	// Dir is the lab directory; the state lives in Dir/.tsolab.
	Dir string
	// Lab is the lab's name (config.Lab.Name); it derives the naming of
	// everything created.
	Lab string
	// Providers has one provider per resource kind.
	Providers map[provider.Kind]provider.Interface
	// Machines says how to reach the other machines the lab declares,
	// by name (config.Scenario.Reaches): plans carry it and apply
	// records it in the state, so that destroy can reach them without
	// the lab's files. Optional.
	Machines map[string]config.Reach
	// Parallelism bounds concurrent provider calls; 0 = DefaultParallelism.
	Parallelism int
	// Ranges says where each resource was declared, passed to Validate
	// for diagnostics (see Ranges). Optional.
	Ranges map[provider.Addr]hcl.Range
	// AttrRanges says where each resource's attributes were written (see
	// AttrRanges), passed to Validate. Optional.
	AttrRanges map[provider.Addr]map[string]hcl.Range
	// OnEvent, when set, receives apply progress. Calls never overlap;
	// they come from the goroutines making the changes, so keep it quick.
	OnEvent func(Event)
}

// Planner plans and applies changes to one lab.
type Planner struct {
	opts Options
}

// New returns a Planner for the lab described by opts.
func New(opts Options) *Planner { return &Planner{opts: opts} }

// State reads the lab's state; nil when nothing was ever applied.
func (p *Planner) State() (*State, error) { return ReadState(p.opts.Dir) }

// Refresh reads the state and every resource it records.
func (p *Planner) Refresh(ctx context.Context) (*State, *Refreshed, error) {
	st, err := ReadState(p.opts.Dir)
	if err != nil {
		return nil, nil, err
	}
	return st, Refresh(ctx, st, p.opts.Providers, p.parallelism()), nil
}

func (p *Planner) parallelism() int {
	if p.opts.Parallelism > 0 {
		return p.opts.Parallelism
	}
	return DefaultParallelism
}

// Plan refreshes the state, diffs the desired resources of the named
// scenario against it and validates every create, update and replace
// with its provider. Problems with the lab or the machine are in
// plan.Diagnostics; err is for a state that cannot be read.
func (p *Planner) Plan(ctx context.Context, scenario string, desired []provider.Resource) (*Plan, error) {
	st, r, err := p.Refresh(ctx)
	if err != nil {
		return nil, err
	}
	plan := Diff(desired, st, r)
	p.stamp(plan, scenario)
	plan.Machines = cloneReaches(p.opts.Machines)
	if st != nil && st.Lab != p.opts.Lab && len(st.Resources) > 0 {
		plan.Diagnostics = append(plan.Diagnostics, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("The state belongs to lab %q, not %q", st.Lab, p.opts.Lab),
			Detail: fmt.Sprintf("%s records resources made under the lab name %q, and names derive from it. "+
				"Add -name %s to work on them under their name, or run tsolab destroy %s first to remove them and start afresh as %q.",
				StatePath(p.opts.Dir), st.Lab, st.Lab, p.opts.Dir, p.opts.Lab),
		})
		return plan, nil
	}
	plan.Diagnostics = append(plan.Diagnostics, p.validate(ctx, plan)...)
	return plan, nil
}

// PlanDestroy refreshes the state and plans the deletion of every
// recorded resource, dependents first.
func (p *Planner) PlanDestroy(ctx context.Context) (*Plan, error) {
	st, r, err := p.Refresh(ctx)
	if err != nil {
		return nil, err
	}
	plan := Diff(nil, st, r)
	p.stamp(plan, "")
	plan.Mode = ModeDestroy
	if st != nil {
		// Destroy removes what the state's lab made, under its naming.
		plan.Lab = st.Lab
	}
	return plan, nil
}

func (p *Planner) stamp(plan *Plan, scenario string) {
	plan.Scenario = scenario
	plan.Lab = p.opts.Lab
	if abs, err := filepath.Abs(p.opts.Dir); err == nil {
		plan.Dir = abs
	} else {
		plan.Dir = p.opts.Dir
	}
}

// validate asks the providers whether every create, update and replace
// can be made, at most parallelism at a time.
func (p *Planner) validate(ctx context.Context, plan *Plan) hcl.Diagnostics {
	naming := provider.NewNaming(plan.Lab)
	naming.Owner = plan.Lineage
	type job struct {
		c    *Change
		prov provider.Interface
	}
	var jobs []job
	var diags hcl.Diagnostics
	for i := range plan.Changes {
		c := &plan.Changes[i]
		switch c.Action {
		case Create, Update, Replace:
		default:
			continue
		}
		prov := p.opts.Providers[c.Addr.Kind]
		if prov == nil {
			diags = append(diags, noProvider(c.Addr))
			continue
		}
		jobs = append(jobs, job{c, prov})
	}
	out := make([]hcl.Diagnostics, len(jobs))
	parallel(len(jobs), p.parallelism(), func(i int) {
		j := jobs[i]
		out[i] = j.prov.Validate(ctx, provider.ValidateRequest{
			Naming: naming, Addr: j.c.Addr, Desired: j.c.After.Clone(), Range: p.opts.Ranges[j.c.Addr],
			AttrRanges: p.opts.AttrRanges[j.c.Addr],
		}).Diagnostics
	})
	for _, d := range out {
		diags = append(diags, d...)
	}
	return diags
}

// parallel calls fn(0..n-1) with at most limit calls at a time.
func parallel(n, limit int, fn func(i int)) {
	sem := make(chan struct{}, limit)
	done := make(chan struct{})
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; done <- struct{}{} }()
			fn(i)
		}()
	}
	for i := 0; i < n; i++ {
		<-done
	}
}

// StaleError says the state moved on since the plan was made.
type StaleError struct {
	PlanLineage, StateLineage string
	PlanSerial, StateSerial   uint64
	// File is the saved plan's file (Plan.File); "" when the plan was
	// made by this process, whose state another process changed between
	// its plan and its apply (two tsolabs on one lab at once).
	File string
}

func (e *StaleError) Error() string {
	if e.File == "" {
		return fmt.Sprintf("Another tsolab changed the lab's state while this one was planning (%s), so this one changed nothing. Run the command again: it plans against what is there now.",
			e.moved())
	}
	if e.PlanLineage != e.StateLineage {
		return fmt.Sprintf("Saved plan is stale: it was made for state lineage %q, but the lab's state now has lineage %q. Run tsolab plan again.",
			e.PlanLineage, e.StateLineage)
	}
	return fmt.Sprintf("Saved plan is stale: the state changed since it was made (serial %d, now %d). Run tsolab plan again.",
		e.PlanSerial, e.StateSerial)
}

// moved says how the state moved: "serial 3, now 4", or from none to one
// (lineages are for the saved plan's message, where they name the files).
func (e *StaleError) moved() string {
	switch {
	case e.PlanLineage == "" && e.PlanSerial == 0:
		return "it had no state; now it has one, serial " + fmt.Sprint(e.StateSerial)
	case e.StateLineage == "":
		return "its state was removed"
	case e.PlanLineage != e.StateLineage:
		return fmt.Sprintf("its state was replaced by another lineage, serial %d", e.StateSerial)
	}
	return fmt.Sprintf("serial %d, now %d", e.PlanSerial, e.StateSerial)
}

// ErrPlanHasErrors is returned by Apply for a plan whose diagnostics hold
// errors.
var ErrPlanHasErrors = errors.New("the plan has errors: fix them and run tsolab plan again")

// Apply makes the plan's changes. It takes the lab's lock (a *LockError
// when another process holds it), refuses a plan made against another
// state than the current one (a *StaleError), records the refreshed state,
// then walks the changes in dependency order, independent ones in
// parallel. Every create is recorded "creating" in one state write before
// the walk starts; the outcomes of the calls are written with the next
// write, at the latest at the end (stateWriter). Failures of individual
// changes are in the result's Diagnostics, not err.
func (p *Planner) Apply(ctx context.Context, plan *Plan) (*ApplyResult, error) {
	if plan.Diagnostics.HasErrors() {
		return nil, ErrPlanHasErrors
	}
	lock, err := LockState(p.opts.Dir, plan.Lab)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()

	cur, err := ReadState(p.opts.Dir)
	if err != nil {
		return nil, err
	}
	var curLineage string
	var curSerial uint64
	if cur != nil {
		curLineage, curSerial = cur.Lineage, cur.Serial
	}
	if curLineage != plan.Lineage || curSerial != plan.Serial {
		return nil, &StaleError{PlanLineage: plan.Lineage, StateLineage: curLineage, PlanSerial: plan.Serial, StateSerial: curSerial, File: plan.File}
	}

	base := plan.Prior.Clone()
	if base == nil {
		base = &State{FormatVersion: StateFormatVersion, Lineage: NewLineage()}
	}
	base.Lab = plan.Lab
	base.Scenario = plan.Scenario
	base.Machines = withMachines(base.Machines, plan.Machines)
	w := newStateWriter(p.opts.Dir, &State{})
	w.declared = plan.Machines
	res := &ApplyResult{Mode: plan.Mode}
	if cur == nil || !sameContent(base, cur) {
		base.Serial = curSerial
		w.st.Serial = curSerial
		if err := w.Replace(base); err != nil {
			return nil, err
		}
	} else {
		w.st = base
	}
	p.walk(ctx, plan, base.Lineage, w, res)
	res.State, res.StateWrites, err = w.Close()
	if err != nil {
		res.Diagnostics = append(res.Diagnostics, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "The state could not be written",
			Detail:   fmt.Sprintf("%v. What this apply made or deleted since the last write may not be recorded in %s: the next apply or destroy reads the lab and finishes from there.", err, StatePath(p.opts.Dir)),
		})
	}
	return res, nil
}

// Ranges returns where each resource of sc was declared, for
// Options.Ranges.
func Ranges(sc *config.Scenario) map[provider.Addr]hcl.Range {
	m := map[provider.Addr]hcl.Range{}
	for _, h := range sc.Hosts {
		m[provider.Addr{Kind: provider.KindHost, Name: h.Name}] = h.Range
	}
	for _, s := range sc.Switches {
		m[provider.Addr{Kind: provider.KindSwitch, Name: s.Name}] = s.Range
	}
	for _, n := range sc.NICs {
		m[provider.Addr{Kind: provider.KindNIC, Name: n.Name}] = n.Range
	}
	return m
}

// AttrRanges returns where the attributes of each NIC of sc were written,
// for Options.AttrRanges.
func AttrRanges(sc *config.Scenario) map[provider.Addr]map[string]hcl.Range {
	m := map[provider.Addr]map[string]hcl.Range{}
	for _, n := range sc.NICs {
		m[provider.Addr{Kind: provider.KindNIC, Name: n.Name}] = n.AttrRanges
	}
	return m
}
