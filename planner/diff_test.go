package planner_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
)

// rs builds a ready record.
func rs(a string, attrs provider.Attrs, deps ...string) planner.ResourceState {
	r := planner.ResourceState{Addr: addr(a), Status: planner.StatusReady, Attrs: attrs}
	for _, d := range deps {
		r.DependsOn = append(r.DependsOn, addr(d))
	}
	return r
}

func res(a string, attrs provider.Attrs, deps ...string) provider.Resource {
	r := provider.Resource{Addr: addr(a), Attrs: attrs}
	for _, d := range deps {
		r.DependsOn = append(r.DependsOn, addr(d))
	}
	return r
}

// summary is what a test compares for one change.
type summary struct {
	Addr       string
	Action     string
	Reason     string
	ReplacedBy []string
	Cause      string
}

func summarize(p *planner.Plan) []summary {
	var out []summary
	for _, c := range p.Changes {
		s := summary{Addr: c.Addr.String(), Action: c.Action.Name(), Reason: c.Reason.String(), ReplacedBy: c.ReplacedBy}
		if c.Cause != (provider.Addr{}) {
			s.Cause = c.Cause.String()
		}
		out = append(out, s)
	}
	return out
}

func TestDiff(t *testing.T) {
	host := provider.Attrs{"kind": "netns", "netns": "tsl.t.h"}
	host2 := provider.Attrs{"kind": "netns", "netns": "tsl.t.h2"}
	nic := provider.Attrs{"host": "h", "netns": "tsl.t.h", "ifname": "n", "link": "none", "mtu": "1500", "offload.tso": "true"}
	with := func(a provider.Attrs, kv ...string) provider.Attrs {
		c := a.Clone()
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "<del>" {
				delete(c, kv[i])
			} else {
				c[kv[i]] = kv[i+1]
			}
		}
		return c
	}
	tests := []struct {
		name     string
		desired  []provider.Resource
		state    []planner.ResourceState
		observed map[string]planner.Observed // missing: as recorded
		want     []summary
		summary  string
	}{
		{
			name:    "create all",
			desired: []provider.Resource{res("nic.n", nic, "host.h"), res("host.h", host)},
			want: []summary{
				{Addr: "host.h", Action: "create", Reason: "none"},
				{Addr: "nic.n", Action: "create", Reason: "none"},
			},
			summary: "Plan: 2 to add, 0 to change, 0 to destroy.",
		},
		{
			name:    "no-op",
			desired: []provider.Resource{res("host.h", host), res("nic.n", nic, "host.h")},
			state:   []planner.ResourceState{rs("host.h", host), rs("nic.n", nic, "host.h")},
			want: []summary{
				{Addr: "host.h", Action: "no-op", Reason: "none"},
				{Addr: "nic.n", Action: "no-op", Reason: "none"},
			},
			summary: "No changes.",
		},
		{
			name:    "keys only in actual and restore keys are ignored",
			desired: []provider.Resource{res("nic.n", with(nic, "mtu", "<del>"))},
			state:   []planner.ResourceState{rs("nic.n", with(nic, "restore.mtu", "1500"))},
			observed: map[string]planner.Observed{
				"nic.n": {Actual: with(nic, "mtu", "9000", "restore.mtu", "1400")},
			},
			want:    []summary{{Addr: "nic.n", Action: "no-op", Reason: "none"}},
			summary: "No changes.",
		},
		{
			name:    "a rate taken out of the lab is a change to none, a rate never set is not",
			desired: []provider.Resource{res("nic.n", nic), res("nic.m", with(nic, "ifname", "m"))},
			state:   []planner.ResourceState{rs("nic.n", with(nic, "rate", "500000000")), rs("nic.m", with(nic, "ifname", "m", "rate", ""))},
			want: []summary{
				{Addr: "nic.n", Action: "update", Reason: "none"},
				{Addr: "nic.m", Action: "no-op", Reason: "none"},
			},
			summary: "Plan: 0 to add, 1 to change, 0 to destroy.",
		},
		{
			name:     "update in place after drift",
			desired:  []provider.Resource{res("nic.n", nic)},
			state:    []planner.ResourceState{rs("nic.n", nic)},
			observed: map[string]planner.Observed{"nic.n": {Actual: with(nic, "offload.tso", "false")}},
			want:     []summary{{Addr: "nic.n", Action: "update", Reason: "none"}},
			summary:  "Plan: 0 to add, 1 to change, 0 to destroy.",
		},
		{
			name:    "replace on a replace-only attribute",
			desired: []provider.Resource{res("nic.n", with(nic, "link", "switch:sw", "mtu", "9000"))},
			state:   []planner.ResourceState{rs("nic.n", nic)},
			want:    []summary{{Addr: "nic.n", Action: "replace", Reason: "none", ReplacedBy: []string{"link"}}},
			summary: "Plan: 1 to add, 0 to change, 1 to destroy.",
		},
		{
			name:    "delete what is no longer desired, dependents first",
			desired: nil,
			state:   []planner.ResourceState{rs("host.h", host), rs("nic.n", nic, "host.h")},
			want: []summary{
				{Addr: "nic.n", Action: "delete", Reason: "none"},
				{Addr: "host.h", Action: "delete", Reason: "none"},
			},
			summary: "Plan: 0 to add, 0 to change, 2 to destroy.",
		},
		{
			name:     "gone is created again",
			desired:  []provider.Resource{res("host.h", host)},
			state:    []planner.ResourceState{rs("host.h", host)},
			observed: map[string]planner.Observed{"host.h": {Gone: true}},
			want:     []summary{{Addr: "host.h", Action: "create", Reason: "deleted_outside"}},
			summary:  "Plan: 1 to add, 0 to change, 0 to destroy.",
		},
		{
			name:     "gone and no longer desired needs nothing",
			state:    []planner.ResourceState{rs("host.h", host)},
			observed: map[string]planner.Observed{"host.h": {Gone: true}},
			summary:  "No changes.",
		},
		{
			name:     "incomplete create is completed",
			desired:  []provider.Resource{res("host.h", host)},
			state:    []planner.ResourceState{{Addr: addr("host.h"), Status: planner.StatusCreating, Attrs: host}},
			observed: map[string]planner.Observed{"host.h": {Actual: provider.Attrs{"netns": "tsl.t.h"}}},
			want:     []summary{{Addr: "host.h", Action: "create", Reason: "incomplete"}},
			summary:  "Plan: 1 to add, 0 to change, 0 to destroy.",
		},
		{
			name:    "a NIC in a replaced host namespace is replaced",
			desired: []provider.Resource{res("host.h", with(host, "kind", "netns2")), res("nic.n", nic, "host.h")},
			state:   []planner.ResourceState{rs("host.h", host), rs("nic.n", nic, "host.h")},
			want: []summary{
				{Addr: "host.h", Action: "replace", Reason: "none", ReplacedBy: []string{"kind"}},
				{Addr: "nic.n", Action: "replace", Reason: "dependency_replaced", ReplacedBy: []string{"netns"}, Cause: "host.h"},
			},
			summary: "Plan: 2 to add, 0 to change, 2 to destroy.",
		},
		{
			name:    "a NIC in another namespace stays",
			desired: []provider.Resource{res("host.h2", with(host2, "kind", "netns2")), res("nic.n", nic, "host.h2")},
			state:   []planner.ResourceState{rs("host.h2", host2), rs("nic.n", nic, "host.h2")},
			want: []summary{
				{Addr: "host.h2", Action: "replace", Reason: "none", ReplacedBy: []string{"kind"}},
				{Addr: "nic.n", Action: "no-op", Reason: "none"},
			},
			summary: "Plan: 1 to add, 0 to change, 1 to destroy.",
		},
		{
			name: "the far end of a replaced pair is replaced",
			desired: []provider.Resource{
				res("nic.a", provider.Attrs{"link": "peer:b", "ifname": "a2"}),
				res("nic.b", provider.Attrs{"link": "peer-of:a", "ifname": "b"}, "nic.a"),
			},
			state: []planner.ResourceState{
				rs("nic.a", provider.Attrs{"link": "peer:b", "ifname": "a"}),
				rs("nic.b", provider.Attrs{"link": "peer-of:a", "ifname": "b"}, "nic.a"),
			},
			want: []summary{
				{Addr: "nic.a", Action: "replace", Reason: "none", ReplacedBy: []string{"ifname"}},
				{Addr: "nic.b", Action: "replace", Reason: "dependency_replaced", ReplacedBy: []string{"link"}, Cause: "nic.a"},
			},
			summary: "Plan: 2 to add, 0 to change, 2 to destroy.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st *planner.State
			r := &planner.Refreshed{Resources: map[provider.Addr]planner.Observed{}}
			if tt.state != nil {
				st = &planner.State{FormatVersion: 1, Serial: 3, Lineage: "l", Lab: labName, Resources: tt.state}
				for _, rec := range tt.state {
					o, ok := tt.observed[rec.Addr.String()]
					if !ok {
						o = planner.Observed{Actual: rec.Attrs.Clone()}
					}
					r.Resources[rec.Addr] = o
				}
			}
			p := planner.Diff(tt.desired, st, r)
			if diff := cmp.Diff(tt.want, summarize(p)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if got := p.Summary(); got != tt.summary {
				t.Errorf("Summary() = %q, want %q", got, tt.summary)
			}
		})
	}
}

func TestChangeDiffs(t *testing.T) {
	c := planner.Change{
		Action: planner.Replace,
		Before: provider.Attrs{"ifname": "a", "mtu": "1500", "offload.tso": "true", "extra": "x", "restore.mtu": "1"},
		After:  provider.Attrs{"ifname": "b", "mtu": "9000", "offload.tso": "true", "address": "10.0.0.1/24"},
	}
	want := []planner.AttrDiff{
		{Key: "address", After: "10.0.0.1/24", AfterSet: true},
		{Key: "ifname", Before: "a", After: "b", BeforeSet: true, AfterSet: true, ForcesReplace: true},
		{Key: "mtu", Before: "1500", After: "9000", BeforeSet: true, AfterSet: true},
	}
	if diff := cmp.Diff(want, c.Diffs()); diff != "" {
		t.Errorf("Diffs() (-want +got):\n%s", diff)
	}
}
