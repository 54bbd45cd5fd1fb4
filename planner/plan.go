package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/provider"
)

// Mode says whether a plan converges the lab on a scenario or removes it.
type Mode uint8

const (
	ModeNormal  Mode = iota // make the lab match the desired resources
	ModeDestroy             // delete every recorded resource
)

func (m Mode) String() string {
	switch m {
	case ModeNormal:
		return "normal"
	case ModeDestroy:
		return "destroy"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// MarshalText writes String.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText parses the form MarshalText writes.
func (m *Mode) UnmarshalText(b []byte) error {
	switch string(b) {
	case "normal":
		*m = ModeNormal
	case "destroy":
		*m = ModeDestroy
	default:
		return fmt.Errorf("unknown plan mode %q", b)
	}
	return nil
}

// Plan is the set of changes that makes the lab match the desired
// resources, and what it was computed against.
type Plan struct {
	Mode Mode `json:"mode"`
	// Dir is the lab directory whose state the plan was made against.
	Dir      string `json:"dir"`
	Lab      string `json:"lab"`
	Scenario string `json:"scenario"`
	// LabHash identifies the lab files the plan was made from (the CLI
	// sets it before WritePlanFile: a hash of the lab directory's
	// *.tsolab.hcl files). Apply does not read it: tsolab apply FILE
	// warns when the files hash otherwise now. "" in a plan file written
	// before it was recorded.
	LabHash string `json:"lab_hash,omitempty"`
	// Lineage and Serial identify the state the plan was made against
	// ("" and 0 when there was none); Apply refuses the plan when the
	// state has moved on since.
	Lineage string `json:"lineage"`
	Serial  uint64 `json:"serial"`
	// DesiredHash is HashDesired(Desired).
	DesiredHash string              `json:"desired_hash"`
	Desired     []provider.Resource `json:"desired"`
	// Prior is the state as refreshed: resources deleted outside tsolab
	// dropped, the others with their attributes as read. Apply records it
	// first. Nil when the lab has no state.
	Prior *State `json:"prior"`
	// Machines says how to reach the other machines the lab declares
	// (Options.Machines when planned); Apply records them in the state
	// over what Prior recorded.
	Machines map[string]config.Reach `json:"machines,omitempty"`
	// Drift lists what changed outside tsolab since the last apply,
	// sorted by address.
	Drift []Drift `json:"drift"`
	// Changes holds one entry per desired or recorded resource, NoOp
	// included: desired resources first in dependency order (ties in the
	// order given), then deletions, dependents before what they depend on.
	Changes []Change `json:"changes"`
	// Targets are the -target addresses the plan was narrowed to (see
	// Target); nil for a whole plan.
	Targets []provider.Addr `json:"targets,omitempty"`
	// Diagnostics from refresh and from the providers' Validate. A plan
	// with errors cannot be applied or saved.
	Diagnostics hcl.Diagnostics `json:"-"`
	// File is the file the plan was read from (ReadPlanFile); "" for a
	// plan made by this process, which Apply makes right after planning.
	File string `json:"-"`
}

// Change is what a plan does to one resource.
//
// Before and After per action:
//   - Create: Before is nil for a new resource or one deleted outside
//     tsolab; for an incomplete one (ReasonIncomplete) it holds what
//     refresh read of the half-made object. After is the desired attributes.
//   - Update: Before is what refresh read; After is the desired attributes.
//     Only keys of After are compared; keys only in Before are left alone.
//   - Replace: as Update; the resource is deleted (with the attributes
//     recorded in Plan.Prior) and created with After.
//   - Delete: Before is what refresh read; After is nil.
//   - NoOp: Before is what refresh read; After the desired attributes.
type Change struct {
	Addr   provider.Addr  `json:"addr"`
	Action Action         `json:"action"`
	Before provider.Attrs `json:"before"`
	After  provider.Attrs `json:"after"`
	// ReplacedBy lists the attributes that force a Replace: changed
	// replace-only attributes, or for ReasonDependency the attributes
	// that point into the replaced dependency ("netns", "link").
	ReplacedBy []string `json:"replaced_by,omitempty"`
	Reason     Reason   `json:"reason"`
	// Cause is the replaced dependency for ReasonDependency.
	Cause provider.Addr `json:"cause,omitzero"`
	// DependsOn are the desired dependencies, or the recorded ones for a
	// Delete.
	DependsOn []provider.Addr `json:"depends_on"`
}

// AttrDiff is one attribute's change.
type AttrDiff struct {
	Key           string `json:"key"`
	Before        string `json:"before"`
	After         string `json:"after"`
	BeforeSet     bool   `json:"before_set"` // the key was present before
	AfterSet      bool   `json:"after_set"`  // the key is present after
	ForcesReplace bool   `json:"forces_replace,omitempty"`
}

// Diffs returns the attribute changes of c sorted by key: every desired
// attribute for a Create, the differing desired ones for an Update or
// Replace, every recorded one for a Delete, none for a NoOp. Keys with
// provider.PrefixRestore are never shown.
func (c *Change) Diffs() []AttrDiff {
	var out []AttrDiff
	switch c.Action {
	case Create:
		for _, k := range c.After.Keys() {
			if !strings.HasPrefix(k, provider.PrefixRestore) {
				out = append(out, AttrDiff{Key: k, After: c.After[k], AfterSet: true})
			}
		}
	case Update, Replace:
		out = diffDesired(c.Before, c.After)
	case Delete:
		for _, k := range c.Before.Keys() {
			if !strings.HasPrefix(k, provider.PrefixRestore) {
				out = append(out, AttrDiff{Key: k, Before: c.Before[k], BeforeSet: true})
			}
		}
	}
	return out
}

// diffDesired compares the keys of desired with actual. An absent key
// reads as "".
func diffDesired(actual, desired provider.Attrs) []AttrDiff {
	var out []AttrDiff
	for _, k := range desired.Keys() {
		if strings.HasPrefix(k, provider.PrefixRestore) {
			continue
		}
		b, bok := actual[k]
		if b != desired[k] {
			out = append(out, AttrDiff{Key: k, Before: b, After: desired[k], BeforeSet: bok, AfterSet: true, ForcesReplace: provider.ReplaceAttr(k)})
		}
	}
	// An attribute whose absence means "none" (a rate taken out of the
	// lab) is a change when the resource still has it.
	for _, k := range actual.Keys() {
		if _, ok := desired[k]; ok || !provider.AbsentMeansNone(k) || actual[k] == "" {
			continue
		}
		out = append(out, AttrDiff{Key: k, Before: actual[k], BeforeSet: true, ForcesReplace: provider.ReplaceAttr(k)})
	}
	return out
}

// Drift is a difference between what the state recorded and what refresh
// found.
type Drift struct {
	Addr provider.Addr `json:"addr"`
	// Gone: the resource was deleted outside tsolab.
	Gone bool `json:"gone,omitempty"`
	// Diffs are recorded (Before) -> actual (After), for the recorded keys.
	Diffs []AttrDiff `json:"diffs,omitempty"`
}

// Counts returns the plan's summary: a Replace counts as one to add and
// one to destroy.
func (p *Plan) Counts() (add, change, destroy int) {
	for _, c := range p.Changes {
		switch c.Action {
		case Create:
			add++
		case Update:
			change++
		case Replace:
			add++
			destroy++
		case Delete:
			destroy++
		}
	}
	return add, change, destroy
}

// HasChanges reports whether applying p would change anything.
func (p *Plan) HasChanges() bool {
	a, c, d := p.Counts()
	return a+c+d > 0
}

// Summary is "Plan: N to add, M to change, K to destroy." or "No changes.".
func (p *Plan) Summary() string {
	a, c, d := p.Counts()
	if a+c+d == 0 {
		return "No changes."
	}
	return fmt.Sprintf("Plan: %d to add, %d to change, %d to destroy.", a, c, d)
}

// Change returns the change for addr, or nil.
func (p *Plan) Change(addr provider.Addr) *Change {
	for i := range p.Changes {
		if p.Changes[i].Addr == addr {
			return &p.Changes[i]
		}
	}
	return nil
}

// HashDesired returns a stable hash of the desired resources, independent
// of their order.
func HashDesired(desired []provider.Resource) string {
	rs := append([]provider.Resource(nil), desired...)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Addr.String() < rs[j].Addr.String() })
	h := sha256.New()
	for _, r := range rs {
		deps := make([]string, len(r.DependsOn))
		for i, d := range r.DependsOn {
			deps[i] = d.String()
		}
		sort.Strings(deps)
		b, err := json.Marshal(struct {
			Addr  string
			Attrs provider.Attrs
			Deps  []string
		}{r.Addr.String(), r.Attrs, deps})
		if err != nil {
			panic(err)
		}
		h.Write(b)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Diff computes the changes that take the lab from the refreshed state to
// the desired resources. It is pure: no provider is called. st may be nil
// (nothing applied yet); r must be Refresh's result for st.
func Diff(desired []provider.Resource, st *State, r *Refreshed) *Plan {
	p := &Plan{
		Mode:        ModeNormal,
		Desired:     desired,
		DesiredHash: HashDesired(desired),
		Prior:       priorState(st, r),
	}
	if st != nil {
		p.Lab, p.Lineage, p.Serial = st.Lab, st.Lineage, st.Serial
	}
	if r != nil {
		p.Drift = r.Drift
		p.Diagnostics = append(p.Diagnostics, r.Diagnostics...)
	}
	order, err := topoOrder(desired)
	if err != nil {
		panic(err) // the loader rejects reference cycles
	}
	byAddr := map[provider.Addr]*Change{}
	for _, res := range order {
		c := Change{
			Addr:      res.Addr,
			After:     res.Attrs.Clone(),
			DependsOn: append([]provider.Addr(nil), res.DependsOn...),
		}
		rec := st.Resource(res.Addr)
		obs, read := r.observed(res.Addr)
		switch {
		case rec == nil:
			c.Action = Create
		case !read:
			// The read failed (its diagnostics block apply): show the
			// resource as recorded.
			c.Action, c.Before = NoOp, rec.Attrs.Clone()
		case obs.Gone:
			c.Action = Create
			if rec.Status == StatusReady {
				c.Reason = ReasonGone
			}
		case rec.Status == StatusCreating:
			c.Action, c.Reason, c.Before = Create, ReasonIncomplete, obs.Actual.Clone()
		default:
			c.Before = obs.Actual.Clone()
			c.Action = NoOp
			for _, d := range diffDesired(c.Before, c.After) {
				if d.ForcesReplace {
					c.Action = Replace
					c.ReplacedBy = append(c.ReplacedBy, d.Key)
				} else if c.Action == NoOp {
					c.Action = Update
				}
			}
		}
		p.Changes = append(p.Changes, c)
		byAddr[res.Addr] = &p.Changes[len(p.Changes)-1]
	}
	// A resource living inside a dependency that is replaced or was
	// deleted outside tsolab goes with it. Order is topological, so
	// replacement propagates down chains.
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Before == nil || c.Action == Replace {
			continue
		}
		rec := st.Resource(c.Addr)
		deps := append(append([]provider.Addr(nil), c.DependsOn...), rec.DependsOn...)
		for _, d := range deps {
			dc := byAddr[d]
			if dc == nil || !(dc.Action == Replace || dc.Action == Create && dc.Reason == ReasonGone) {
				continue
			}
			if refs := references(c.Before, d, st.Resource(d)); len(refs) > 0 {
				c.Action, c.Reason, c.Cause, c.ReplacedBy = Replace, ReasonDependency, d, refs
				break
			}
		}
	}
	// Recorded resources no longer desired are deleted, dependents first.
	var gone []ResourceState
	if p.Prior != nil {
		for _, rec := range p.Prior.Resources {
			if byAddr[rec.Addr] == nil {
				gone = append(gone, rec)
			}
		}
	}
	for _, rec := range reverseTopo(gone) {
		p.Changes = append(p.Changes, Change{
			Addr:      rec.Addr,
			Action:    Delete,
			Before:    rec.Attrs.Clone(),
			DependsOn: append([]provider.Addr(nil), rec.DependsOn...),
		})
	}
	return p
}

// references returns the attributes of a (a dependent's actual attributes)
// that point into the dependency dep: its namespace, or the veth pair of a
// NIC for a "peer-of" NIC.
func references(a provider.Attrs, dep provider.Addr, depRec *ResourceState) []string {
	var refs []string
	if depRec != nil {
		if ns := depRec.Attrs[provider.AttrNetNS]; ns != "" {
			for _, k := range []string{provider.AttrNetNS, provider.AttrPeerNetNS} {
				if a[k] == ns {
					refs = append(refs, k)
				}
			}
		}
	}
	if dep.Kind == provider.KindNIC && a[provider.AttrLink] == provider.LinkPeerOf+":"+dep.Name {
		refs = append(refs, provider.AttrLink)
	}
	return refs
}

// priorState is st as refreshed: gone resources dropped, ready ones with
// the attributes read (keeping recorded restore values the provider did
// not report). Resources still being created, and gone ones whose
// remains only their Delete removes, keep their recorded attributes,
// which are what Delete and Create need to find them.
func priorState(st *State, r *Refreshed) *State {
	if st == nil {
		return nil
	}
	p := st.Clone()
	p.Resources = p.Resources[:0]
	for _, rec := range st.Clone().Resources {
		obs, read := r.observed(rec.Addr)
		switch {
		case !read:
			// Not refreshed (the read failed): keep the record.
		case obs.Gone && !obs.Remains:
			continue
		case obs.Gone:
			// Kept as recorded, for Delete.
		case rec.Status == StatusReady:
			rec.Attrs = mergeRestore(obs.Actual.Clone(), rec.Attrs)
		}
		p.Resources = append(p.Resources, rec)
	}
	return p
}

// mergeRestore copies the provider.PrefixRestore keys of old that next
// lacks into next, so restore values are never lost.
func mergeRestore(next, old provider.Attrs) provider.Attrs {
	for k, v := range old {
		if strings.HasPrefix(k, provider.PrefixRestore) {
			if _, ok := next[k]; !ok {
				if next == nil {
					next = provider.Attrs{}
				}
				next[k] = v
			}
		}
	}
	return next
}

// topoOrder orders resources so each comes after its dependencies; ties
// keep the given order. Dependencies on resources not in the list are
// ignored.
func topoOrder(rs []provider.Resource) ([]provider.Resource, error) {
	idx := map[provider.Addr]int{}
	for i, r := range rs {
		idx[r.Addr] = i
	}
	done := make([]bool, len(rs))
	var out []provider.Resource
	for len(out) < len(rs) {
		progressed := false
		for i, r := range rs {
			if done[i] {
				continue
			}
			ready := true
			for _, d := range r.DependsOn {
				if j, ok := idx[d]; ok && !done[j] {
					ready = false
					break
				}
			}
			if ready {
				done[i] = true
				out = append(out, r)
				progressed = true
				break // restart so earlier resources keep precedence
			}
		}
		if !progressed {
			var stuck []string
			for i, r := range rs {
				if !done[i] {
					stuck = append(stuck, r.Addr.String())
				}
			}
			return nil, fmt.Errorf("dependency cycle among %s", strings.Join(stuck, ", "))
		}
	}
	return out, nil
}

// reverseTopo orders recorded resources dependents first, ties by address.
func reverseTopo(recs []ResourceState) []ResourceState {
	sort.Slice(recs, func(i, j int) bool { return recs[i].Addr.String() < recs[j].Addr.String() })
	rs := make([]provider.Resource, len(recs))
	for i, r := range recs {
		rs[i] = provider.Resource{Addr: r.Addr, DependsOn: r.DependsOn}
	}
	order, err := topoOrder(rs)
	if err != nil {
		panic(fmt.Sprintf("planner: recorded state has a %v", err))
	}
	byAddr := map[provider.Addr]ResourceState{}
	for _, r := range recs {
		byAddr[r.Addr] = r
	}
	out := make([]ResourceState, len(order))
	for i, r := range order {
		out[len(order)-1-i] = byAddr[r.Addr]
	}
	return out
}
