package view_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/view"
)

func addr(s string) provider.Addr {
	a, err := provider.ParseAddr(s)
	if err != nil {
		panic(err)
	}
	return a
}

var (
	hostTx  = provider.Attrs{"kind": "netns", "netns": "tsl.t.tx"}
	hostRx1 = provider.Attrs{"kind": "netns", "netns": "tsl.t.rx1"}
	hostOld = provider.Attrs{"kind": "netns", "netns": "tsl.t.old"}
	nicTx0  = provider.Attrs{"host": "tx", "netns": "tsl.t.tx", "ifname": "tx0", "link": "switch:sw", "mtu": "1500", "offload.tso": "true", "address": "10.77.0.1/24"}
)

func with(a provider.Attrs, kv ...string) provider.Attrs {
	c := a.Clone()
	for i := 0; i < len(kv); i += 2 {
		c[kv[i]] = kv[i+1]
	}
	return c
}

// examplePlan has drift (a flipped offload, a deleted host), an update, a
// create of what was deleted, a replace and a delete.
func examplePlan() *planner.Plan {
	st := &planner.State{FormatVersion: 1, Serial: 4, Lineage: "l", Lab: "t", Resources: []planner.ResourceState{
		{Addr: addr("host.tx"), Status: planner.StatusReady, Attrs: hostTx},
		{Addr: addr("host.rx1"), Status: planner.StatusReady, Attrs: hostRx1},
		{Addr: addr("host.old"), Status: planner.StatusReady, Attrs: hostOld},
		{Addr: addr("nic.tx0"), Status: planner.StatusReady, Attrs: nicTx0, DependsOn: []provider.Addr{addr("host.tx")}},
		{Addr: addr("nic.rx10"), Status: planner.StatusReady, Attrs: provider.Attrs{"ifname": "rx10", "link": "none"}},
	}}
	r := &planner.Refreshed{Resources: map[provider.Addr]planner.Observed{
		addr("host.tx"):  {Actual: hostTx},
		addr("host.rx1"): {Gone: true},
		addr("host.old"): {Actual: hostOld},
		addr("nic.tx0"):  {Actual: with(nicTx0, "offload.tso", "false")},
		addr("nic.rx10"): {Actual: provider.Attrs{"ifname": "rx10", "link": "none"}},
	}, Drift: []planner.Drift{
		{Addr: addr("host.rx1"), Gone: true},
		{Addr: addr("nic.tx0"), Diffs: []planner.AttrDiff{{Key: "offload.tso", Before: "true", After: "false", BeforeSet: true, AfterSet: true}}},
	}}
	desired := []provider.Resource{
		{Addr: addr("host.tx"), Attrs: hostTx},
		{Addr: addr("host.rx1"), Attrs: hostRx1},
		{Addr: addr("nic.tx0"), Attrs: with(nicTx0, "mtu", "9000"), DependsOn: []provider.Addr{addr("host.tx")}},
		{Addr: addr("nic.rx10"), Attrs: provider.Attrs{"ifname": "rx10", "link": "switch:sw", "address": ""}},
	}
	return planner.Diff(desired, st, r)
}

func TestHumanPlan(t *testing.T) {
	var b bytes.Buffer
	view.NewHuman(&b, view.HumanOptions{}).Plan(examplePlan())
	want := `Changed outside tsolab since the last apply:

  - host.rx1 was deleted outside tsolab
  ~ nic.tx0 offload.tso: true -> false (changed outside tsolab)

tsolab will perform the following actions:

  # host.rx1 will be created (it was deleted outside tsolab)
  + host.rx1
      kind:  "netns"
      netns: "tsl.t.rx1"

  # nic.tx0 will be updated in-place
  ~ nic.tx0
      mtu:         1500 -> 9000
      offload.tso: false -> true

  # nic.rx10 must be replaced
-/+ nic.rx10
      link: "none" -> "switch:sw" # forces replacement

  # host.old will be destroyed
  # (because host.old is not in the lab)
  - host.old

Plan: 2 to add, 1 to change, 2 to destroy.
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("plan output (-want +got):\n%s", diff)
	}
}

// TestHumanPlanNamesTheMachine: an object on another machine says which.
func TestHumanPlanNamesTheMachine(t *testing.T) {
	rx := provider.Attrs{"kind": "netns", "netns": "tsl.t.rx", "machine": "r1"}
	plan := planner.Diff([]provider.Resource{{Addr: addr("host.rx"), Attrs: rx}}, nil, &planner.Refreshed{})
	plan.Machines = map[string]config.Reach{"r1": {Address: "10.1.2.3", Port: 2222, User: "root"}}
	var b bytes.Buffer
	view.NewHuman(&b, view.HumanOptions{}).Plan(plan)
	for _, want := range []string{"  # host.rx will be created on machine r1\n", `      machine: "r1 (root@10.1.2.3:2222)"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("plan output lacks %q:\n%s", want, b.String())
		}
	}
}

func TestHumanPlanNoChanges(t *testing.T) {
	tests := []struct {
		name string
		plan *planner.Plan
		want string
	}{
		{"normal", &planner.Plan{}, "No changes. The lab matches the configuration.\n"},
		{"destroy", &planner.Plan{Mode: planner.ModeDestroy}, "No changes. No objects need to be destroyed.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			view.NewHuman(&b, view.HumanOptions{}).Plan(tt.plan)
			if got := b.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestHumanColor(t *testing.T) {
	var b bytes.Buffer
	view.NewHuman(&b, view.HumanOptions{Color: true}).Plan(&planner.Plan{Changes: []planner.Change{
		{Addr: addr("host.tx"), Action: planner.Create, After: provider.Attrs{"kind": "netns"}},
	}})
	for _, want := range []string{"  \x1b[32m+\x1b[0m host.tx\n", "\x1b[1mPlan:\x1b[0m 1 to add"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("colored output %q lacks %q", b.String(), want)
		}
	}
}

func TestHumanApply(t *testing.T) {
	var b bytes.Buffer
	h := view.NewHuman(&b, view.HumanOptions{})
	for _, ev := range []planner.Event{
		{Kind: planner.EventStart, Addr: addr("host.tx"), Action: planner.Create},
		{Kind: planner.EventComplete, Addr: addr("host.tx"), Action: planner.Create, Elapsed: 2300 * time.Microsecond},
		{Kind: planner.EventStart, Addr: addr("nic.tx0"), Action: planner.Delete, Replacing: true},
		{Kind: planner.EventFailed, Addr: addr("nic.tx0"), Action: planner.Delete, Replacing: true, Elapsed: 1250 * time.Millisecond},
		{Kind: planner.EventSkipped, Addr: addr("nic.tx0"), Action: planner.Create, Replacing: true, Cause: addr("nic.tx0")},
		{Kind: planner.EventStart, Addr: addr("nic.rx10"), Action: planner.Update},
		{Kind: planner.EventComplete, Addr: addr("nic.rx10"), Action: planner.Update, Elapsed: 40 * time.Millisecond},
	} {
		h.Event(ev)
	}
	h.Applied(&planner.ApplyResult{
		Added: 1, Changed: 1, Failed: []provider.Addr{addr("nic.tx0")},
		Skipped:     []planner.Skipped{{Addr: addr("nic.tx0"), Action: planner.Create, Cause: addr("nic.tx0")}},
		Diagnostics: hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "nic.tx0: delete veth: device or resource busy"}},
	})
	want := `host.tx: Creating...
host.tx: Creation complete after 2ms
nic.tx0: Destroying...
nic.tx0: Destruction failed after 1.3s
nic.tx0: Skipped: nic.tx0 failed
nic.rx10: Modifying...
nic.rx10: Modifications complete after 40ms

Error: nic.tx0: delete veth: device or resource busy

Apply failed: 1 operation(s) failed, 1 skipped because something they depend on failed. Resources: 1 added, 1 changed, 0 destroyed.
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("apply output (-want +got):\n%s", diff)
	}

	b.Reset()
	h.Applied(&planner.ApplyResult{Mode: planner.ModeDestroy, Destroyed: 7})
	if got, want := b.String(), "\nDestroy complete! Resources: 7 destroyed.\n"; got != want {
		t.Errorf("destroy summary: got %q, want %q", got, want)
	}
}

func TestHumanState(t *testing.T) {
	var b bytes.Buffer
	h := view.NewHuman(&b, view.HumanOptions{})
	h.State(&planner.State{Serial: 9, Lineage: "abc", Lab: "t", Scenario: "tso=true", Resources: []planner.ResourceState{
		{Addr: addr("host.tx"), Status: planner.StatusReady, Attrs: hostTx},
		{Addr: addr("nic.tx0"), Status: planner.StatusCreating, Attrs: provider.Attrs{"ifname": "tx0", "mtu": "1500"}, DependsOn: []provider.Addr{addr("host.tx")}},
	}})
	want := `Lab "t", scenario "tso=true" (state serial 9, lineage abc)

# host.tx:
    kind:  "netns"
    netns: "tsl.t.tx"

# nic.tx0: (being created: an apply did not finish it)
    ifname: "tx0"
    mtu:    1500
    (depends on host.tx)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("state output (-want +got):\n%s", diff)
	}
	b.Reset()
	h.State(nil)
	if got := b.String(); got != "The state is empty: nothing has been applied.\n" {
		t.Errorf("empty state: %q", got)
	}
}

func TestHumanDiagnosticSnippet(t *testing.T) {
	src := []byte("nic \"tx0\" {\n  mtu = 70000\n}\n")
	var b bytes.Buffer
	view.NewHuman(&b, view.HumanOptions{Sources: map[string][]byte{"lab.tsolab.hcl": src}}).Diagnostics(hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "MTU out of range",
		Detail:   "Use an MTU between 68 and 65535.",
		Subject:  &hcl.Range{Filename: "lab.tsolab.hcl", Start: hcl.Pos{Line: 2, Column: 9, Byte: 20}, End: hcl.Pos{Line: 2, Column: 14, Byte: 25}},
	}})
	for _, want := range []string{"Error: MTU out of range", "on lab.tsolab.hcl line 2", "mtu = 70000", "Use an MTU between 68 and 65535."} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("diagnostic output lacks %q:\n%s", want, b.String())
		}
	}
}

// TestJSONSkippedByInterrupt: a change not started because the apply was
// interrupted says so, with no cause; one skipped because another failed
// names it.
func TestJSONSkippedByInterrupt(t *testing.T) {
	var b bytes.Buffer
	j := view.NewJSON(&b, view.JSONOptions{Version: "0.1.0", Now: func() time.Time { return time.Unix(0, 0) }})
	j.Event(planner.Event{Kind: planner.EventSkipped, Addr: addr("nic.tx0"), Action: planner.Create})
	j.Event(planner.Event{Kind: planner.EventSkipped, Addr: addr("nic.rx0"), Action: planner.Create, Cause: addr("host.rx")})
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var m struct {
			Message string `json:"@message"`
			Hook    struct {
				Cause string `json:"cause"`
			} `json:"hook"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		got = append(got, m.Message+" | cause "+m.Hook.Cause)
	}
	want := []string{
		"tsolab 0.1.0 | cause ",
		"nic.tx0: Not started: the apply was interrupted | cause ",
		"nic.rx0: Skipped: host.rx failed | cause host.rx",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("skipped events (-want +got):\n%s", diff)
	}
}

func TestJSONLines(t *testing.T) {
	var b bytes.Buffer
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	j := view.NewJSON(&b, view.JSONOptions{Version: "0.1.0", Now: func() time.Time { return now }})
	j.Plan(examplePlan())
	j.Event(planner.Event{Kind: planner.EventStart, Addr: addr("host.rx1"), Action: planner.Create})
	j.Event(planner.Event{Kind: planner.EventComplete, Addr: addr("host.rx1"), Action: planner.Create, Elapsed: 1500 * time.Millisecond})
	j.Event(planner.Event{Kind: planner.EventFailed, Addr: addr("nic.tx0"), Action: planner.Update, Elapsed: time.Millisecond})
	j.Applied(&planner.ApplyResult{Added: 1, Failed: []provider.Addr{addr("nic.tx0")},
		Diagnostics: hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "nic.tx0: set mtu: invalid argument",
			Subject: &hcl.Range{Filename: "lab.tsolab.hcl", Start: hcl.Pos{Line: 3, Column: 3, Byte: 30}, End: hcl.Pos{Line: 3, Column: 13, Byte: 40}}}}})

	type line struct {
		Level   string `json:"@level"`
		Message string `json:"@message"`
		Time    string `json:"@timestamp"`
		Type    string `json:"type"`
	}
	var got []line
	var raw []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		var x line
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("line %q is not JSON: %v", l, err)
		}
		json.Unmarshal([]byte(l), &m)
		if x.Time != "2026-03-01T12:00:00.000000Z" {
			t.Errorf("@timestamp = %q", x.Time)
		}
		x.Time = ""
		got = append(got, x)
		raw = append(raw, m)
	}
	want := []line{
		{"info", "tsolab 0.1.0", "", "version"},
		{"info", "host.rx1: Drift detected (delete)", "", "resource_drift"},
		{"info", "nic.tx0: Drift detected (update)", "", "resource_drift"},
		{"info", "host.rx1: Plan to create", "", "planned_change"},
		{"info", "nic.tx0: Plan to update", "", "planned_change"},
		{"info", "nic.rx10: Plan to replace", "", "planned_change"},
		{"info", "host.old: Plan to delete", "", "planned_change"},
		{"info", "Plan: 2 to add, 1 to change, 2 to destroy.", "", "change_summary"},
		{"info", "host.rx1: Creating...", "", "apply_start"},
		{"info", "host.rx1: Creation complete after 1.5s", "", "apply_complete"},
		{"error", "nic.tx0: Modification failed after 1ms", "", "apply_errored"},
		{"error", "Error: nic.tx0: set mtu: invalid argument", "", "diagnostic"},
		{"error", "Apply failed: 1 operation(s) failed, 0 skipped because something they depend on failed. Resources: 1 added, 0 changed, 0 destroyed.", "", "change_summary"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if v := raw[0]["tsolab_format_version"]; v != view.JSONFormatVersion {
		t.Errorf("tsolab_format_version = %v", v)
	}
	wantSummary := map[string]any{"add": 2.0, "change": 1.0, "remove": 2.0, "operation": "plan"}
	if diff := cmp.Diff(wantSummary, raw[7]["changes"]); diff != "" {
		t.Errorf("change_summary (-want +got):\n%s", diff)
	}
	wantChange := map[string]any{
		"resource":    map[string]any{"addr": "nic.rx10", "resource_type": "nic", "resource_name": "rx10"},
		"action":      "replace",
		"replaced_by": []any{"link"},
		"before":      map[string]any{"ifname": "rx10", "link": "none"},
		"after":       map[string]any{"ifname": "rx10", "link": "switch:sw", "address": ""},
		"attributes": []any{
			map[string]any{"key": "link", "before": "none", "after": "switch:sw", "before_set": true, "after_set": true, "forces_replace": true},
		},
	}
	if diff := cmp.Diff(wantChange, raw[5]["change"]); diff != "" {
		t.Errorf("planned_change of nic.rx10 (-want +got):\n%s", diff)
	}
	wantDiag := map[string]any{"severity": "error", "summary": "nic.tx0: set mtu: invalid argument",
		"range": map[string]any{"filename": "lab.tsolab.hcl",
			"start": map[string]any{"line": 3.0, "column": 3.0, "byte": 30.0},
			"end":   map[string]any{"line": 3.0, "column": 13.0, "byte": 40.0}}}
	if diff := cmp.Diff(wantDiag, raw[11]["diagnostic"]); diff != "" {
		t.Errorf("diagnostic (-want +got):\n%s", diff)
	}
	if got := raw[9]["hook"].(map[string]any)["elapsed_seconds"]; got != 1.5 {
		t.Errorf("elapsed_seconds = %v, want 1.5", got)
	}
}

func TestHumanPlanReasons(t *testing.T) {
	p := &planner.Plan{Changes: []planner.Change{
		{Addr: addr("host.tx"), Action: planner.Replace, Before: hostTx, After: with(hostTx, "netns", "tsl.u.tx"), ReplacedBy: []string{"netns"}},
		{Addr: addr("nic.tx0"), Action: planner.Replace, Reason: planner.ReasonDependency, Cause: addr("host.tx"),
			Before: provider.Attrs{"netns": "tsl.t.tx"}, After: provider.Attrs{"netns": "tsl.t.tx"}, ReplacedBy: []string{"netns"}},
		{Addr: addr("nic.rx10"), Action: planner.Create, Reason: planner.ReasonIncomplete, After: provider.Attrs{"mtu": "1500"}},
	}}
	var b bytes.Buffer
	view.NewHuman(&b, view.HumanOptions{}).Plan(p)
	want := `tsolab will perform the following actions:

  # host.tx must be replaced
-/+ host.tx
      netns: "tsl.t.tx" -> "tsl.u.tx" # forces replacement

  # nic.tx0 must be replaced (it lives in host.tx, which is replaced)
-/+ nic.tx0

  # nic.rx10 will be created (an earlier apply did not finish creating it)
  + nic.rx10
      mtu: 1500

Plan: 3 to add, 0 to change, 2 to destroy.
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("plan output (-want +got):\n%s", diff)
	}
}

func TestJSONState(t *testing.T) {
	var b bytes.Buffer
	j := view.NewJSON(&b, view.JSONOptions{Version: "x", Now: func() time.Time { return time.Unix(0, 0).UTC() }})
	st := &planner.State{FormatVersion: 1, Serial: 2, Lineage: "l", Lab: "t", Scenario: "default", Resources: []planner.ResourceState{
		{Addr: addr("host.tx"), Status: planner.StatusReady, Attrs: hostTx},
	}}
	j.State(st)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want version + state:\n%s", len(lines), b.String())
	}
	var m struct {
		Message string         `json:"@message"`
		State   *planner.State `json:"state"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &m); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(st, m.State); diff != "" {
		t.Errorf("state round trip (-want +got):\n%s", diff)
	}
	if want := `Lab "t", scenario "default": 1 resource(s) (state serial 2)`; m.Message != want {
		t.Errorf("@message = %q, want %q", m.Message, want)
	}
}

// A NIC that adopts a device says so: tsolab takes the device (moving it
// into a namespace host) and gives it back, and never creates or deletes
// it.
func TestHumanPlanAdoption(t *testing.T) {
	moved := provider.Attrs{"host": "a", "netns": "tsl.t.a", "ifname": "enp3s0f1", "link": "device:enp3s0f1"}
	local := provider.Attrs{"host": "m", "netns": "", "ifname": "enp3s0f0", "link": "device:enp3s0f0"}
	lo := provider.Attrs{"host": "a", "netns": "tsl.t.a", "ifname": "lo", "link": "device:lo"}
	gone := provider.Attrs{"host": "b", "netns": "tsl.t.b", "ifname": "enp4s0", "link": "device:enp4s0"}
	goneLocal := provider.Attrs{"host": "m", "netns": "", "ifname": "enp5s0", "link": "device:enp5s0"}
	st := &planner.State{FormatVersion: 1, Lineage: "l", Lab: "t", Resources: []planner.ResourceState{
		{Addr: addr("nic.old"), Status: planner.StatusReady, Attrs: gone},
		{Addr: addr("nic.oldlocal"), Status: planner.StatusReady, Attrs: goneLocal},
	}}
	r := &planner.Refreshed{Resources: map[provider.Addr]planner.Observed{addr("nic.old"): {Actual: gone}, addr("nic.oldlocal"): {Actual: goneLocal}}}
	desired := []provider.Resource{
		{Addr: addr("nic.port"), Attrs: moved},
		{Addr: addr("nic.uplink"), Attrs: local},
		{Addr: addr("nic.lo"), Attrs: lo},
	}
	var b bytes.Buffer
	view.NewHuman(&b, view.HumanOptions{}).Plan(planner.Diff(desired, st, r))
	var got []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "  # nic.") {
			got = append(got, l)
		}
	}
	want := []string{
		"  # nic.port will adopt device enp3s0f1, moving it into tsl.t.a",
		"  # nic.uplink will adopt device enp3s0f0",
		"  # nic.lo will adopt device lo",
		"  # nic.oldlocal will give device enp5s0 back as it was",
		"  # nic.old will give device enp4s0 back, moving it to the machine's namespace",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plan comments (-want +got):\n%s", diff)
	}
}
