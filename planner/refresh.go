package planner

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/provider"
)

// Observed is what refresh found for one recorded resource.
type Observed struct {
	Actual provider.Attrs // nil when Gone
	Gone   bool
	// Remains (with Gone): something of the resource is left that its
	// Delete removes (provider.ReadResponse.Remains), so the plan keeps
	// its record.
	Remains bool
}

// Refreshed is the result of reading back every recorded resource.
type Refreshed struct {
	// Resources holds an entry for every recorded resource whose read
	// succeeded.
	Resources map[provider.Addr]Observed
	// Drift lists ready resources whose actual attributes differ from the
	// recorded ones, or that are gone, sorted by address. Resources still
	// being created are not drift: their record holds desired values.
	Drift       []Drift
	Diagnostics hcl.Diagnostics
}

// observed returns what refresh found for addr; false when it was not
// read (r nil, not recorded, or the read failed).
func (r *Refreshed) observed(addr provider.Addr) (Observed, bool) {
	if r == nil {
		return Observed{}, false
	}
	o, ok := r.Resources[addr]
	return o, ok
}

// Refresh reads every resource recorded in st through its provider,
// at most parallelism at a time, and computes the drift. Reads use the
// naming of the lab that made the resources (st.Lab). The reads share
// one provider.Snapshot, dropped when Refresh returns.
func Refresh(ctx context.Context, st *State, providers map[provider.Kind]provider.Interface, parallelism int) *Refreshed {
	r := &Refreshed{Resources: map[provider.Addr]Observed{}}
	if st == nil {
		return r
	}
	if parallelism < 1 {
		parallelism = 1
	}
	naming := provider.NewNaming(st.Lab)
	naming.Owner = st.Lineage
	// The reads share what they read of the kernel (one dump of a
	// switch's ports for all its NICs) for this refresh only.
	snap := provider.NewSnapshot()
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, parallelism)
	)
	for _, rec := range st.Resources {
		prov := providers[rec.Addr.Kind]
		if prov == nil {
			r.Diagnostics = append(r.Diagnostics, noProvider(rec.Addr))
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(rec ResourceState) {
			defer func() { <-sem; wg.Done() }()
			resp := prov.Read(ctx, provider.ReadRequest{Naming: naming, Addr: rec.Addr, Recorded: rec.Attrs.Clone(), Snapshot: snap})
			mu.Lock()
			defer mu.Unlock()
			r.Diagnostics = append(r.Diagnostics, resp.Diagnostics...)
			if resp.Diagnostics.HasErrors() {
				return
			}
			r.Resources[rec.Addr] = Observed{Actual: resp.Actual, Gone: resp.Gone, Remains: resp.Gone && resp.Remains}
			if rec.Status != StatusReady {
				return
			}
			if resp.Gone {
				r.Drift = append(r.Drift, Drift{Addr: rec.Addr, Gone: true})
				return
			}
			var diffs []AttrDiff
			for _, k := range rec.Attrs.Keys() {
				if strings.HasPrefix(k, provider.PrefixRestore) {
					continue
				}
				a, ok := resp.Actual[k]
				if a != rec.Attrs[k] {
					diffs = append(diffs, AttrDiff{Key: k, Before: rec.Attrs[k], After: a, BeforeSet: true, AfterSet: ok})
				}
			}
			if len(diffs) > 0 {
				r.Drift = append(r.Drift, Drift{Addr: rec.Addr, Diffs: diffs})
			}
		}(rec)
	}
	wg.Wait()
	sort.Slice(r.Drift, func(i, j int) bool { return r.Drift[i].Addr.String() < r.Drift[j].Addr.String() })
	sortDiags(r.Diagnostics)
	return r
}

func noProvider(a provider.Addr) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  fmt.Sprintf("%s: no provider for resources of kind %q", a, a.Kind),
		Detail:   "This is a bug in tsolab: the CLI must pass a provider for every resource kind.",
	}
}

// sortDiags orders diagnostics from parallel calls by their summary, so
// output does not depend on scheduling.
func sortDiags(d hcl.Diagnostics) {
	sort.SliceStable(d, func(i, j int) bool { return d[i].Summary < d[j].Summary })
}
