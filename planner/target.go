package planner

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agext/levenshtein"

	"github.com/tsolab/tsolab/provider"
)

// Target narrows the plan to the resources of targets, as Terraform's
// -target does: in a normal plan, each target and what it depends on
// (with the dependents a replaced one takes with it, which cannot stay);
// in a destroy plan, each target and what depends on it. Every other
// change becomes a NoOp: its resource stays as it is, recorded as it was,
// for a later plan to show again. A target that is neither desired nor
// recorded is an error naming the addresses there are.
func (p *Plan) Target(targets []provider.Addr) error {
	if len(targets) == 0 {
		return nil
	}
	known := map[provider.Addr]bool{}
	for _, c := range p.Changes {
		known[c.Addr] = true
	}
	for _, t := range targets {
		if !known[t] {
			return fmt.Errorf("-target %s: the lab has no such resource%s; its resources are %s", t, closest(t, known), addrList(known))
		}
	}
	deps := map[provider.Addr][]provider.Addr{} // resource -> what it depends on
	for _, c := range p.Changes {
		deps[c.Addr] = append(deps[c.Addr], c.DependsOn...)
		if rec := p.Prior.Resource(c.Addr); rec != nil && p.Mode == ModeNormal {
			deps[c.Addr] = append(deps[c.Addr], rec.DependsOn...)
		}
	}
	in := map[provider.Addr]bool{}
	var visit func(provider.Addr)
	if p.Mode == ModeDestroy {
		visit = func(a provider.Addr) { // a and its dependents
			if in[a] {
				return
			}
			in[a] = true
			for _, c := range p.Changes {
				if slices.Contains(deps[c.Addr], a) {
					visit(c.Addr)
				}
			}
		}
	} else {
		visit = func(a provider.Addr) { // a and its dependencies
			if in[a] {
				return
			}
			in[a] = true
			for _, d := range deps[a] {
				visit(d)
			}
		}
	}
	for _, t := range targets {
		visit(t)
	}
	if p.Mode == ModeNormal {
		// A dependent that a replaced resource takes with it is made
		// again with it, or it would be gone and recorded as there.
		for changed := true; changed; {
			changed = false
			for _, c := range p.Changes {
				if !in[c.Addr] && c.Reason == ReasonDependency && in[c.Cause] {
					visit(c.Addr)
					changed = true
				}
			}
		}
	}
	for i := range p.Changes {
		if c := &p.Changes[i]; !in[c.Addr] {
			c.Action, c.Reason, c.Cause, c.ReplacedBy = NoOp, ReasonNone, provider.Addr{}, nil
		}
	}
	p.Targets = append([]provider.Addr(nil), targets...)
	return nil
}

// closest suggests the known address of t's kind nearest to it.
func closest(t provider.Addr, known map[provider.Addr]bool) string {
	best, bestDist := "", 4
	for a := range known {
		if a.Kind != t.Kind {
			continue
		}
		if d := levenshtein.Distance(strings.ToLower(t.Name), strings.ToLower(a.Name), nil); d < bestDist || d == bestDist && a.String() < best {
			best, bestDist = a.String(), d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

func addrList(known map[provider.Addr]bool) string {
	var out []string
	for a := range known {
		out = append(out, a.String())
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
