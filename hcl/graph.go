package hcl

import (
	"fmt"
	"sort"
	"strings"
)

// checkCycles reports each reference cycle of the dependency graph once,
// at the reference that closes it, and leaves that reference out of
// evaluation. Blocks that refer to each other in a loop cannot be made in
// any order.
func (l *loader) checkCycles() {
	out := map[*block][]ref{}
	for _, r := range l.refsList {
		out[r.from] = append(out[r.from], r)
	}
	for _, scc := range stronglyConnected(l.allBlocks(), out) {
		first := scc[0]
		in := map[*block]bool{}
		for _, b := range scc {
			in[b] = true
		}
		path := cycleFrom(first, out, in)
		if path == nil {
			continue // a single block without a self-reference
		}
		closing := path[len(path)-1]
		closing.from.skip[closing.attr] = true
		l.errorf(closing.rng, "Reference cycle", "%s", cycleDetail(path))
	}
}

func cycleDetail(path []ref) string {
	closing := path[len(path)-1]
	if len(path) == 1 {
		if closing.attr == "peer" {
			return fmt.Sprintf("%s names itself as its peer. peer names the other end of a back-to-back pair: name another NIC.", closing.from.label())
		}
		return fmt.Sprintf("%s refers to itself in %s: name another %s.", closing.from.label(), closing.attr, closing.to.kind())
	}
	if len(path) == 2 && path[0].attr == "peer" && closing.attr == "peer" {
		return fmt.Sprintf("%s and %s name each other as peer. A back-to-back pair is declared on one side only: remove peer = %s from %s; the pair is made from %s.",
			path[0].from.label(), closing.from.label(), closing.to.addr(), closing.from.label(), path[0].from.label())
	}
	steps := []string{path[0].from.addr()}
	for _, r := range path {
		steps = append(steps, r.to.addr())
	}
	return fmt.Sprintf("These blocks refer to each other in a loop, so none of them can be made first: %s. Remove one of the references (a back-to-back pair needs peer on one side only).",
		strings.Join(steps, " -> "))
}

// cycleFrom returns the shortest cycle of references from first back to
// first inside the component in, or nil when there is none.
func cycleFrom(first *block, out map[*block][]ref, in map[*block]bool) []ref {
	type step struct {
		at   *block
		path []ref
	}
	queue := []step{{at: first}}
	visited := map[*block]bool{}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, r := range out[s.at] {
			if !in[r.to] {
				continue
			}
			path := append(append([]ref(nil), s.path...), r)
			if r.to == first {
				return path
			}
			if !visited[r.to] {
				visited[r.to] = true
				queue = append(queue, step{at: r.to, path: path})
			}
		}
	}
	return nil
}

// stronglyConnected returns the strongly connected components of the
// graph (Tarjan), each ordered by declaration, in the order of their
// first block.
func stronglyConnected(nodes []*block, out map[*block][]ref) [][]*block {
	order := map[*block]int{}
	for i, b := range nodes {
		order[b] = i
	}
	index := map[*block]int{}
	low := map[*block]int{}
	onStack := map[*block]bool{}
	var stack []*block
	var comps [][]*block
	var visit func(b *block)
	visit = func(b *block) {
		index[b] = len(index)
		low[b] = index[b]
		stack = append(stack, b)
		onStack[b] = true
		for _, r := range out[b] {
			if _, seen := index[r.to]; !seen {
				visit(r.to)
				low[b] = min(low[b], low[r.to])
			} else if onStack[r.to] {
				low[b] = min(low[b], index[r.to])
			}
		}
		if low[b] == index[b] {
			var comp []*block
			for {
				top := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[top] = false
				comp = append(comp, top)
				if top == b {
					break
				}
			}
			sortByOrder(comp, order)
			comps = append(comps, comp)
		}
	}
	for _, b := range nodes {
		if _, seen := index[b]; !seen {
			visit(b)
		}
	}
	sortComps(comps, order)
	return comps
}

func sortByOrder(bs []*block, order map[*block]int) {
	sort.Slice(bs, func(i, j int) bool { return order[bs[i]] < order[bs[j]] })
}

func sortComps(cs [][]*block, order map[*block]int) {
	sort.Slice(cs, func(i, j int) bool { return order[cs[i][0]] < order[cs[j][0]] })
}

// allBlocks returns every named block in declaration order by kind.
func (l *loader) allBlocks() []*block {
	var out []*block
	for _, k := range blockKinds() {
		out = append(out, l.blocks[k]...)
	}
	return out
}
