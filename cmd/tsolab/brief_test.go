package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/view"
)

// TestBriefView: a plan is one line after the label; progress is dropped,
// and what goes wrong is shown in full.
func TestBriefView(t *testing.T) {
	tx0 := provider.Addr{Kind: provider.KindNIC, Name: "tx0"}
	plan := &planner.Plan{Changes: []planner.Change{{Addr: tx0, Action: planner.Update}}}

	var out bytes.Buffer
	b := briefView{View: view.NewHuman(&out, view.HumanOptions{}), w: &out, label: "=== scenario tso=false: "}
	b.Plan(plan)
	b.Event(planner.Event{Kind: planner.EventStart, Addr: tx0, Action: planner.Update})
	b.Event(planner.Event{Kind: planner.EventComplete, Addr: tx0, Action: planner.Update})
	b.Applied(&planner.ApplyResult{Changed: 1})
	if got, want := out.String(), "=== scenario tso=false: Plan: 0 to add, 1 to change, 0 to destroy.\n"; got != want {
		t.Errorf("a successful apply:\ngot  %q\nwant %q", got, want)
	}

	out.Reset()
	b.Event(planner.Event{Kind: planner.EventFailed, Addr: tx0, Action: planner.Update})
	b.Applied(&planner.ApplyResult{Failed: []provider.Addr{tx0}})
	for _, want := range []string{"nic.tx0: ", "Apply failed: 1 operation(s) failed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("a failed apply shows %q, want it to hold %q", out.String(), want)
		}
	}

	// With no label (test's destroy), the apply's summary is the line.
	out.Reset()
	b.label = ""
	b.Plan(&planner.Plan{Mode: planner.ModeDestroy, Changes: []planner.Change{{Addr: tx0, Action: planner.Delete}}})
	b.Applied(&planner.ApplyResult{Mode: planner.ModeDestroy, Destroyed: 1})
	if got, want := out.String(), "Destroy complete! Resources: 1 destroyed.\n"; got != want {
		t.Errorf("a destroy:\ngot  %q\nwant %q", got, want)
	}
}
