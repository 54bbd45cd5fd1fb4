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
