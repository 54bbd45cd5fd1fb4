package planner_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/providertest"
)

const labName = "t"

// twoReceivers is the lab of issue 2: a sender and two receivers on one
// switch, with TSO as given.
func twoReceivers(tso bool) *config.Scenario {
	var off config.Offloads
	off.Set(config.TSO, tso)
	off.Set(config.GSO, true)
	off.Set(config.SG, true)
	sc := &config.Scenario{
		Name:     "tso=" + map[bool]string{true: "true", false: "false"}[tso],
		Hosts:    []*config.Host{{Name: "tx", Kind: config.HostNamespace}, {Name: "rx1", Kind: config.HostNamespace}, {Name: "rx2", Kind: config.HostNamespace}},
		Switches: []*config.Switch{{Name: "sw"}},
	}
	for i, h := range []string{"tx", "rx1", "rx2"} {
		n := &config.NIC{Name: h + "0", Host: h, Connect: "sw", MTU: 1500,
			Address: netip.MustParsePrefix("10.77.0." + string(rune('1'+i)) + "/24")}
		if h == "tx" {
			n.Offload = off
		}
		sc.NICs = append(sc.NICs, n)
	}
	return sc
}

func desired(sc *config.Scenario) []provider.Resource {
	return provider.Desired(sc, provider.NewNaming(labName))
}

func addr(s string) provider.Addr {
	a, err := provider.ParseAddr(s)
	if err != nil {
		panic(err)
	}
	return a
}

func newPlanner(dir string, w *providertest.World, mod ...func(*planner.Options)) *planner.Planner {
	o := planner.Options{Dir: dir, Lab: labName, Providers: w.Providers()}
	for _, m := range mod {
		m(&o)
	}
	return planner.New(o)
}

// mustPlan plans a *config.Scenario or a planScenario.
func mustPlan(t *testing.T, p *planner.Planner, sc any) *planner.Plan {
	t.Helper()
	var name string
	var res []provider.Resource
	switch sc := sc.(type) {
	case *config.Scenario:
		name, res = sc.Name, desired(sc)
	case planScenario:
		name, res = sc.name, sc.res
	}
	plan, err := p.Plan(context.Background(), name, res)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	if plan.Diagnostics.HasErrors() {
		t.Fatalf("Plan diagnostics: %v", plan.Diagnostics)
	}
	return plan
}

func mustApply(t *testing.T, p *planner.Planner, plan *planner.Plan) *planner.ApplyResult {
	t.Helper()
	res, err := p.Apply(context.Background(), plan)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if res.Diagnostics.HasErrors() {
		t.Fatalf("Apply diagnostics: %v", res.Diagnostics)
	}
	return res
}

func mustDestroy(t *testing.T, p *planner.Planner) *planner.ApplyResult {
	t.Helper()
	plan, err := p.PlanDestroy(context.Background())
	if err != nil {
		t.Fatalf("PlanDestroy: %v", err)
	}
	return mustApply(t, p, plan)
}

// actions maps each changed address to its action symbol.
func actions(p *planner.Plan) map[string]string {
	m := map[string]string{}
	for _, c := range p.Changes {
		if c.Action != planner.NoOp {
			m[c.Addr.String()] = c.Action.String()
		}
	}
	return m
}

// opIndex finds the logged operation of kind on a.
func opIndex(t *testing.T, log []providertest.Op, kind providertest.OpKind, a string) providertest.Op {
	t.Helper()
	for _, o := range log {
		if o.Kind == kind && o.Addr.String() == a {
			return o
		}
	}
	t.Fatalf("no %v %s in log %v", kind, a, log)
	return providertest.Op{}
}
