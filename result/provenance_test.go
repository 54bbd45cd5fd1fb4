package result

import (
	"slices"
	"testing"
)

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

// TestLoadPressureHalfRead: a load whose pressure was read at only one
// end (the read at the other failed) shows no pressure, rather than
// dereferencing the missing one.
func TestLoadPressureHalfRead(t *testing.T) {
	p := 92.5
	for _, l := range []Load{
		{LoadStart: 1, LoadEnd: 2, CPUPressureStart: &p},
		{LoadStart: 1, LoadEnd: 2, CPUPressureEnd: &p},
	} {
		if got, want := l.String(), "load 1.00 -> 2.00, other processes 0.0% of one core"; got != want {
			t.Errorf("load with one pressure: got %q, want %q", got, want)
		}
	}
}

// TestLabGitProperties: a lab in a git work tree names its commit and
// whether it was dirty; one outside names neither.
func TestLabGitProperties(t *testing.T) {
	for _, tc := range []struct {
		git  *Git
		want map[string]string // "" = absent
	}{
		{&Git{Commit: "abc123", Dirty: true}, map[string]string{"lab.git.commit": "abc123", "lab.git.dirty": "true"}},
		{nil, map[string]string{"lab.git.commit": "", "lab.git.dirty": ""}},
	} {
		p := &Provenance{Lab: Lab{Name: "l", Hash: "h", Git: tc.git}}
		got := map[string]string{}
		for _, pr := range p.Properties() {
			got[pr.Name] = pr.Value
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("git %v: property %s = %q, want %q", tc.git, k, got[k], v)
			}
		}
		if got["lab.name"] != "l" {
			t.Errorf("git %v: lab.name = %q, want l", tc.git, got["lab.name"])
		}
	}
}

// TestSchedulersProperty: a model run whose hosts ran a scheduler names
// the schedulers; one without has no such property.
func TestSchedulersProperty(t *testing.T) {
	for _, tc := range []struct {
		scheds []string
		want   string // "" = no property
	}{{[]string{"cfs a", "cfs b"}, "cfs a; cfs b"}, {nil, ""}} {
		r := &Run{Model: &Model{Stacks: []string{"linux-6"}, Hash: "h", Schedulers: tc.scheds}}
		got, found := "", false
		for _, p := range r.Properties("c.") {
			if p.Name == "c.model.schedulers" {
				got, found = p.Value, true
			}
		}
		if got != tc.want || found != (tc.want != "") {
			t.Errorf("schedulers %v: property %q (present %v), want %q", tc.scheds, got, found, tc.want)
		}
	}
}

// TestSummary: the two lines at the top of a text summary name the tool
// with its short revision (or say it has none), the lab's files and
// commit, and the machine; no provenance, no lines.
func TestSummary(t *testing.T) {
	p := &Provenance{
		Tool:    Tool{Version: "v1.2", Revision: "0123456789abcdef0123", GoVersion: "go1.26"},
		Lab:     Lab{Name: "l", Hash: "fedcba9876543210fedc", Git: &Git{Commit: "aaaabbbbccccdddd", Dirty: true}, Variables: map[string]string{"b": "2", "a": "1"}},
		Machine: Machine{Kernel: "6.18", Arch: "amd64", CPUModel: "EPYC", CPUs: 2},
	}
	want := []string{
		"tsolab v1.2 0123456789ab · lab l files fedcba987654, git aaaabbbbcccc (dirty), variables a=1,b=2",
		"machine: Linux 6.18 amd64, 2 × EPYC",
	}
	if got := p.Summary(); !slices.Equal(got, want) {
		t.Errorf("Summary:\n got %q\nwant %q", got, want)
	}
	p.Tool.Revision, p.Lab.Git, p.Lab.Variables = "", nil, nil
	want[0] = "tsolab v1.2 (revision unknown: built without VCS stamping) · lab l files fedcba987654"
	if got := p.Summary(); !slices.Equal(got, want) {
		t.Errorf("Summary without revision:\n got %q\nwant %q", got, want)
	}
	if got := (*Provenance)(nil).Summary(); got != nil {
		t.Errorf("nil Summary = %q, want none", got)
	}
}

// TestShortHash: a hash is quoted by its first 12 characters; a string
// of 12 or fewer is itself.
func TestShortHash(t *testing.T) {
	for in, want := range map[string]string{"0123456789abcdef": "0123456789ab", "0123456789ab": "0123456789ab", "abc": "abc", "": ""} {
		if got := ShortHash(in); got != want {
			t.Errorf("ShortHash(%q) = %q, want %q", in, got, want)
		}
	}
}
