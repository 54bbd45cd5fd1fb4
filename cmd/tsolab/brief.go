package main

import (
	"fmt"
	"io"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/view"
)

// briefView shows a plan and its apply in one line, for tsolab test,
// which applies one scenario after another: the plan's summary ("Plan: 4
// to add, 0 to change, 0 to destroy."), after label. What goes wrong is
// shown in full: failed and skipped resources, diagnostics, a failed
// apply's summary. -verbose shows every plan instead.
type briefView struct {
	view.View           // the full view, for what goes wrong
	w         io.Writer // where the summary line goes
	// label starts the plan's line ("=== scenario tso=false: "); with
	// none, no plan line is written and a successful apply's summary
	// ("Destroy complete! Resources: 4 destroyed.") is the one line.
	label string
}

// Plan writes the plan's summary line, saying how many resources drifted.
func (b briefView) Plan(p *planner.Plan) {
	if b.label == "" {
		return
	}
	line := b.label + p.Summary()
	if n := len(p.Drift); n > 0 {
		line += fmt.Sprintf(" (%d resource(s) changed outside tsolab: -verbose shows them)", n)
	}
	fmt.Fprintln(b.w, line)
}

// Event passes on failed and skipped resources only.
func (b briefView) Event(ev planner.Event) {
	if ev.Kind == planner.EventFailed || ev.Kind == planner.EventSkipped {
		b.View.Event(ev)
	}
}

// Applied shows a failed apply in full, a successful one only when no
// plan line said what it would do.
func (b briefView) Applied(res *planner.ApplyResult) {
	if len(res.Failed) > 0 || res.Diagnostics.HasErrors() {
		b.View.Applied(res)
		return
	}
	b.View.Diagnostics(res.Diagnostics)
	if b.label == "" {
		fmt.Fprintln(b.w, res.Summary())
	}
}
