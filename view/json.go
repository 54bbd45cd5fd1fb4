package view

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
)

// JSONFormatVersion is the version of the JSON-lines vocabulary, reported
// in the first line as "tsolab_format_version". Programs should accept
// any 1.x; a new field or message type bumps the minor version.
const JSONFormatVersion = "1.12"

// JSONOptions configure the JSON-lines view.
type JSONOptions struct {
	// Version is tsolab's version, reported in the first line.
	Version string
	// Now stamps messages; nil = time.Now. Tests fix it.
	Now func() time.Time
}

// JSON renders one JSON object per line, shaped like terraform -json:
// every object has "@level" ("info", "warn", "error"), "@message" (the
// text a human would read), "@module" ("tsolab.ui"), "@timestamp"
// (RFC 3339 with microseconds) and "type". The first line is a "version"
// message carrying "tsolab_format_version". Types: version,
// resource_drift, planned_change, change_summary, apply_start,
// apply_complete, apply_errored, apply_skipped, state, diagnostic; and,
// through Message, the types of the commands that share the stream (run
// and test: see docs/json-format.md).
type JSON struct {
	opts    JSONOptions
	mu      sync.Mutex // serialises writes to w; guards started
	w       io.Writer
	started bool
}

var _ View = (*JSON)(nil)

// NewJSON returns a JSON-lines view writing to w.
func NewJSON(w io.Writer, opts JSONOptions) *JSON {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &JSON{w: w, opts: opts}
}

// jsonResource names a resource in JSON messages.
type jsonResource struct {
	Addr         string `json:"addr"`
	ResourceType string `json:"resource_type"`
	ResourceName string `json:"resource_name"`
}

func resource(a provider.Addr) jsonResource {
	return jsonResource{Addr: a.String(), ResourceType: string(a.Kind), ResourceName: a.Name}
}

type jsonChange struct {
	Resource   jsonResource       `json:"resource"`
	Action     string             `json:"action"`
	Reason     string             `json:"reason,omitempty"`
	Cause      string             `json:"cause,omitempty"`
	ReplacedBy []string           `json:"replaced_by,omitempty"`
	Before     provider.Attrs     `json:"before,omitempty"`
	After      provider.Attrs     `json:"after,omitempty"`
	Attributes []planner.AttrDiff `json:"attributes,omitempty"`
}

type jsonSummary struct {
	Add       int    `json:"add"`
	Change    int    `json:"change"`
	Remove    int    `json:"remove"`
	Operation string `json:"operation"` // plan, apply, destroy
}

type jsonHook struct {
	Resource       jsonResource `json:"resource"`
	Action         string       `json:"action"`
	Replacing      bool         `json:"replacing,omitempty"`
	ElapsedSeconds *float64     `json:"elapsed_seconds,omitempty"`
	Cause          string       `json:"cause,omitempty"`
}

// JSONPos is a position in a lab file, as JSON messages give it.
type JSONPos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

// JSONRange is a range of a lab file, as JSON messages give it (a
// diagnostic's, a verdict's condition): docs/json-format.md.
type JSONRange struct {
	Filename string  `json:"filename"`
	Start    JSONPos `json:"start"`
	End      JSONPos `json:"end"`
}

// NewJSONRange is r as JSON messages give it.
func NewJSONRange(r hcl.Range) *JSONRange {
	return &JSONRange{
		Filename: r.Filename,
		Start:    JSONPos{r.Start.Line, r.Start.Column, r.Start.Byte},
		End:      JSONPos{r.End.Line, r.End.Column, r.End.Byte},
	}
}

type jsonDiagnostic struct {
	Severity string     `json:"severity"`
	Summary  string     `json:"summary"`
	Detail   string     `json:"detail,omitempty"`
	Range    *JSONRange `json:"range,omitempty"`
}

// emit writes one message: the common fields, then fields.
func (j *JSON) emit(level, typ, message string, fields map[string]any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.started {
		j.started = true
		j.writeLocked("info", "version", "tsolab "+j.opts.Version, map[string]any{
			"tsolab":                j.opts.Version,
			"tsolab_format_version": JSONFormatVersion,
		})
	}
	j.writeLocked(level, typ, message, fields)
}

// Message writes one message of a type this view does not render itself
// (run and test write workload progress, results and verdicts into the
// same stream as the plan and apply messages): the common fields, then
// fields, whose values must marshal to JSON. The version line comes
// first, as for every other message.
func (j *JSON) Message(level, typ, message string, fields map[string]any) {
	j.emit(level, typ, message, fields)
}

// writeLocked encodes one line.
// Precondition: j.mu is held.
func (j *JSON) writeLocked(level, typ, message string, fields map[string]any) {
	m := map[string]any{
		"@level":     level,
		"@message":   message,
		"@module":    "tsolab.ui",
		"@timestamp": j.opts.Now().Format("2006-01-02T15:04:05.000000Z07:00"),
		"type":       typ,
	}
	for k, v := range fields {
		m[k] = v
	}
	b, err := json.Marshal(m) // map keys are sorted: stable output
	if err != nil {
		panic(fmt.Sprintf("view: %v", err)) // every value here is plain data
	}
	j.w.Write(append(b, '\n'))
}

// Plan implements View.
func (j *JSON) Plan(p *planner.Plan) {
	for _, d := range p.Drift {
		c := jsonChange{Resource: resource(d.Addr), Action: "update", Attributes: d.Diffs}
		msg := fmt.Sprintf("%s: Drift detected (update)", d.Addr)
		if d.Gone {
			c.Action, msg = "delete", fmt.Sprintf("%s: Drift detected (delete)", d.Addr)
		}
		j.emit("info", "resource_drift", msg, map[string]any{"change": c})
	}
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Action == planner.NoOp {
			continue
		}
		jc := jsonChange{
			Resource: resource(c.Addr), Action: c.Action.Name(), ReplacedBy: c.ReplacedBy,
			Before: c.Before, After: c.After, Attributes: c.Diffs(),
		}
		if c.Reason != planner.ReasonNone {
			jc.Reason = c.Reason.String()
		}
		if c.Cause != (provider.Addr{}) {
			jc.Cause = c.Cause.String()
		}
		j.emit("info", "planned_change", fmt.Sprintf("%s: Plan to %s", c.Addr, c.Action.Name()), map[string]any{"change": jc})
	}
	add, change, destroy := p.Counts()
	op := "plan"
	if p.Mode == planner.ModeDestroy {
		op = "destroy"
	}
	j.emit("info", "change_summary", p.Summary(), map[string]any{
		"changes": jsonSummary{Add: add, Change: change, Remove: destroy, Operation: op},
	})
}

// Event implements View.
func (j *JSON) Event(ev planner.Event) {
	doing, done, failed := progress(ev.Action)
	hook := jsonHook{Resource: resource(ev.Addr), Action: ev.Action.Name(), Replacing: ev.Replacing}
	secs := ev.Elapsed.Seconds()
	switch ev.Kind {
	case planner.EventStart:
		j.emit("info", "apply_start", fmt.Sprintf("%s: %s", ev.Addr, doing), map[string]any{"hook": hook})
	case planner.EventComplete:
		hook.ElapsedSeconds = &secs
		j.emit("info", "apply_complete", fmt.Sprintf("%s: %s after %s", ev.Addr, done, elapsed(ev.Elapsed)), map[string]any{"hook": hook})
	case planner.EventFailed:
		hook.ElapsedSeconds = &secs
		j.emit("error", "apply_errored", fmt.Sprintf("%s: %s after %s", ev.Addr, failed, elapsed(ev.Elapsed)), map[string]any{"hook": hook})
	case planner.EventSkipped:
		msg := fmt.Sprintf("%s: Not started: the apply was interrupted", ev.Addr)
		if ev.Cause != (provider.Addr{}) {
			hook.Cause = ev.Cause.String()
			msg = fmt.Sprintf("%s: Skipped: %s failed", ev.Addr, ev.Cause)
		}
		j.emit("warn", "apply_skipped", msg, map[string]any{"hook": hook})
	}
}

// Applied implements View.
func (j *JSON) Applied(res *planner.ApplyResult) {
	j.Diagnostics(res.Diagnostics)
	op := "apply"
	if res.Mode == planner.ModeDestroy {
		op = "destroy"
	}
	level := "info"
	if len(res.Failed) > 0 || res.Interrupted {
		level = "error"
	}
	j.emit(level, "change_summary", res.Summary(), map[string]any{
		"changes": jsonSummary{Add: res.Added, Change: res.Changed, Remove: res.Destroyed, Operation: op},
	})
}

// State implements View: one "state" message holding the state as the
// state file has it (null when nothing was applied).
func (j *JSON) State(st *planner.State) {
	msg := "The state is empty: nothing has been applied."
	if st != nil && len(st.Resources) > 0 {
		msg = fmt.Sprintf("Lab %q, scenario %q: %d resource(s) (state serial %d)", st.Lab, st.Scenario, len(st.Resources), st.Serial)
	}
	j.emit("info", "state", msg, map[string]any{"state": st})
}

// Resource writes one "state_resource" message: a recorded resource as
// the state file has it (tsolab state list and show).
func (j *JSON) Resource(r planner.ResourceState) {
	deps := make([]string, len(r.DependsOn))
	for i, d := range r.DependsOn {
		deps[i] = d.String()
	}
	j.emit("info", "state_resource", r.Addr.String(), map[string]any{
		"resource": resource(r.Addr), "status": r.Status, "attrs": r.Attrs, "depends_on": deps,
	})
}

// Removed writes one "state_removed" message: tsolab state rm forgot
// the resource at a, which stays where it is.
func (j *JSON) Removed(a provider.Addr) {
	j.emit("info", "state_removed", "Removed "+a.String(), map[string]any{"resource": resource(a)})
}

// Diagnostics implements View.
func (j *JSON) Diagnostics(diags hcl.Diagnostics) {
	for _, d := range diags {
		jd := jsonDiagnostic{Severity: "error", Summary: d.Summary, Detail: d.Detail}
		level, prefix := "error", "Error: "
		if d.Severity == hcl.DiagWarning {
			jd.Severity, level, prefix = "warning", "warn", "Warning: "
		}
		if d.Subject != nil {
			jd.Range = NewJSONRange(*d.Subject)
		}
		j.emit(level, "diagnostic", prefix+d.Summary, map[string]any{"diagnostic": jd})
	}
}
