package view

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/planner"
)

// View renders the planner's output for one command. Implementations are
// safe for concurrent use: Event is called from the goroutines of an apply.
type View interface {
	// Plan renders what changed outside tsolab (Plan.Drift), the changes,
	// and the summary line ("Plan: 1 to add, ..." or "No changes."). It
	// does not render p.Diagnostics: pass them to Diagnostics.
	Plan(p *planner.Plan)
	// Event renders one apply progress event; pass it as
	// planner.Options.OnEvent.
	Event(ev planner.Event)
	// Applied renders the end of an apply or destroy: the root causes of
	// failures, what was skipped, and the summary line.
	Applied(res *planner.ApplyResult)
	// State renders the recorded state (tsolab show); st may be nil.
	State(st *planner.State)
	// Diagnostics renders warnings and errors.
	Diagnostics(diags hcl.Diagnostics)
}
