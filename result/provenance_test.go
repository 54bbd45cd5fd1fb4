package result

import "testing"

// TestModelSeedProperty: a run of the model that drew from its random
// source names the seed among its properties (JUnit, baseline
// comparison); one that drew nothing has no seed property.
func TestModelSeedProperty(t *testing.T) {
	seed := uint64(7)
	for _, tc := range []struct {
		seed *uint64
		want string // "" = no property
	}{{&seed, "7"}, {nil, ""}} {
		r := &Run{Model: &Model{Stacks: []string{"freebsd-10"}, Hash: "h", Seed: tc.seed}}
		got := ""
		for _, p := range r.Properties("c.") {
			if p.Name == "c.model.seed" {
				got = p.Value
			}
		}
		if got != tc.want {
			t.Errorf("seed %v: model.seed property %q, want %q", tc.seed, got, tc.want)
		}
	}
}

// TestLoadProperty: each machine's load is one property, the machine
// tsolab ran on named local; the pressure only where it was read.
func TestLoadProperty(t *testing.T) {
	start, end := 92.5, 95.4
	r := &Run{Load: []Load{
		{LoadStart: 9.8, LoadEnd: 9.7, CPUPressureStart: &start, CPUPressureEnd: &end, OtherCPUPct: 150},
		{Machine: "far", LoadStart: 0.5, LoadEnd: 1, OtherCPUPct: 3.25},
	}}
	want := map[string]string{
		"c.machine.local.load": "load 9.80 -> 9.70, CPU pressure 92.5% -> 95.4%, other processes 150.0% of one core",
		"c.machine.far.load":   "load 0.50 -> 1.00, other processes 3.2% of one core",
	}
	got := map[string]string{}
	for _, p := range r.Properties("c.") {
		got[p.Name] = p.Value
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("property %s = %q, want %q", k, got[k], v)
		}
	}
}
