package planner_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/provider/providertest"
)

// hundredHosts is the lab of issue 2's performance target: 100 hosts,
// each with a veth to one switch.
func hundredHosts() *config.Scenario { return hostsOnSwitch(100) }

// hostsOnSwitch is a lab of n hosts, each with a veth to one switch
// (issue 14's large lab has 1000).
func hostsOnSwitch(n int) *config.Scenario {
	sc := &config.Scenario{Name: "default", Switches: []*config.Switch{{Name: "sw"}}}
	for i := range n {
		h := fmt.Sprintf("h%d", i)
		sc.Hosts = append(sc.Hosts, &config.Host{Name: h, Kind: config.HostNamespace})
		sc.NICs = append(sc.NICs, &config.NIC{Name: h + "e", Host: h, Connect: "sw",
			Address: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 78, byte(i / 250), byte(i%250 + 1)}), 16)})
	}
	return sc
}

// BenchmarkApplyDestroy100Hosts measures the planner's own cost of
// applying and destroying a 100-host lab against the in-memory World:
// graph walk, the state's creates recorded in one write before the walk,
// the outcomes written at the end.
func BenchmarkApplyDestroy100Hosts(b *testing.B) { benchApplyDestroy(b, 100) }

// BenchmarkApplyDestroy1000Hosts is BenchmarkApplyDestroy100Hosts with
// 1000 hosts: the planner's share of issue 14's large lab.
func BenchmarkApplyDestroy1000Hosts(b *testing.B) { benchApplyDestroy(b, 1000) }

func benchApplyDestroy(b *testing.B, hosts int) {
	sc := hostsOnSwitch(hosts)
	res := desired(sc)
	var writes int
	for b.Loop() {
		dir := b.TempDir()
		w := providertest.NewWorld()
		p := newPlanner(dir, w)
		plan, err := p.Plan(context.Background(), sc.Name, res)
		if err != nil {
			b.Fatal(err)
		}
		r, err := p.Apply(context.Background(), plan)
		if err != nil || r.Diagnostics.HasErrors() || r.Added != 2*hosts+1 {
			b.Fatalf("apply: %v %v added %d", err, r.Diagnostics, r.Added)
		}
		writes = r.StateWrites
		dplan, err := p.PlanDestroy(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		r, err = p.Apply(context.Background(), dplan)
		if err != nil || r.Diagnostics.HasErrors() || r.Destroyed != 2*hosts+1 {
			b.Fatalf("destroy: %v %v destroyed %d", err, r.Diagnostics, r.Destroyed)
		}
	}
	b.ReportMetric(float64(writes), "state-writes/apply")
}

// BenchmarkPlan100Hosts measures refresh and diff of an applied 100-host
// lab that needs no change.
func BenchmarkPlan100Hosts(b *testing.B) { benchPlan(b, 100) }

// BenchmarkPlan1000Hosts is BenchmarkPlan100Hosts with 1000 hosts.
func BenchmarkPlan1000Hosts(b *testing.B) { benchPlan(b, 1000) }

func benchPlan(b *testing.B, hosts int) {
	sc := hostsOnSwitch(hosts)
	res := desired(sc)
	dir := b.TempDir()
	w := providertest.NewWorld()
	p := newPlanner(dir, w)
	plan, _ := p.Plan(context.Background(), sc.Name, res)
	if _, err := p.Apply(context.Background(), plan); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		plan, err := p.Plan(context.Background(), sc.Name, res)
		if err != nil || plan.HasChanges() {
			b.Fatalf("plan: %v changes=%v", err, plan.HasChanges())
		}
	}
}
