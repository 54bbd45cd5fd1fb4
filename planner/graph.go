package planner

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/provider"
)

// DOT renders the dependency graph of resources in Graphviz DOT: one node
// per resource, an edge from each resource to each of its dependencies
// (the direction "depends on", as terraform graph draws it). The objects
// of each other machine are a cluster, labelled with whom tsolab logs in
// as there when machines says ("machine r1 (root@10.1.2.3)"). Output is
// sorted, so it is stable.
func DOT(resources []provider.Resource, machines map[string]config.Reach) []byte {
	var b bytes.Buffer
	b.WriteString("digraph tsolab {\n")
	b.WriteString("  compound = \"true\"\n  newrank = \"true\"\n  rankdir = \"RL\"\n")
	rs := append([]provider.Resource(nil), resources...)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Addr.String() < rs[j].Addr.String() })
	// Objects on another machine are grouped in a cluster per machine.
	var names []string
	onMachine := map[string][]provider.Resource{}
	for _, r := range rs {
		m := r.Attrs[provider.AttrMachine]
		if m == "" {
			fmt.Fprintf(&b, "  %q [label = %q, shape = %q]\n", r.Addr.String(), r.Addr.String(), shape(r.Addr.Kind))
			continue
		}
		if onMachine[m] == nil {
			names = append(names, m)
		}
		onMachine[m] = append(onMachine[m], r)
	}
	sort.Strings(names)
	for _, m := range names {
		label := "machine " + m
		if r, ok := machines[m]; ok {
			label += " (" + r.Login() + ")"
		}
		fmt.Fprintf(&b, "  subgraph %q {\n    label = %q\n", "cluster_machine_"+m, label)
		for _, r := range onMachine[m] {
			fmt.Fprintf(&b, "    %q [label = %q, shape = %q]\n", r.Addr.String(), r.Addr.String(), shape(r.Addr.Kind))
		}
		b.WriteString("  }\n")
	}
	for _, r := range rs {
		deps := make([]string, len(r.DependsOn))
		for i, d := range r.DependsOn {
			deps[i] = d.String()
		}
		sort.Strings(deps)
		for _, d := range deps {
			fmt.Fprintf(&b, "  %q -> %q\n", r.Addr.String(), d)
		}
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// PlanDOT renders the operations of a plan and the order apply will run
// them in: an edge A -> B means A runs before B. Nodes are labelled with
// the action symbol ("+ host.tx", "-/+ nic.tx0 (delete)").
func PlanDOT(p *Plan) []byte {
	ops := buildOps(p)
	name := func(o *op) string {
		switch {
		case o.replacing && o.action == Delete:
			return "-/+ " + o.addr.String() + " (delete)"
		case o.replacing:
			return "-/+ " + o.addr.String() + " (create)"
		}
		return o.action.String() + " " + o.addr.String()
	}
	var nodes, edges []string
	for _, o := range ops {
		nodes = append(nodes, fmt.Sprintf("  %q", name(o)))
		for _, n := range o.before {
			edges = append(edges, fmt.Sprintf("  %q -> %q", name(o), name(ops[n])))
		}
	}
	sort.Strings(nodes)
	sort.Strings(edges)
	var b bytes.Buffer
	b.WriteString("digraph tsolab_plan {\n  rankdir = \"LR\"\n")
	for _, s := range append(nodes, edges...) {
		b.WriteString(s + "\n")
	}
	b.WriteString("}\n")
	return b.Bytes()
}

func shape(k provider.Kind) string {
	switch k {
	case provider.KindHost:
		return "box"
	case provider.KindSwitch:
		return "diamond"
	}
	return "ellipse"
}
