package view

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
)

// HumanOptions configure the text view.
type HumanOptions struct {
	// Color adds ANSI colors (green create, yellow update, red delete).
	Color bool
	// Sources maps file names to their bytes, for diagnostic snippets.
	Sources map[string][]byte
	// Width wraps diagnostic text; 0 = 78.
	Width uint
}

// Human renders Terraform-like text.
type Human struct {
	opts HumanOptions
	mu   sync.Mutex // serialises writes to w
	w    io.Writer
}

var _ View = (*Human)(nil)

// NewHuman returns a text view writing to w.
func NewHuman(w io.Writer, opts HumanOptions) *Human {
	if opts.Width == 0 {
		opts.Width = 78
	}
	return &Human{w: w, opts: opts}
}

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
)

func (h *Human) color(code, s string) string {
	if !h.opts.Color {
		return s
	}
	return code + s + ansiReset
}

// symbol renders an action's symbol in its color, right-aligned in three
// columns as Terraform does ("  +", "-/+").
func (h *Human) symbol(a planner.Action) string {
	switch a {
	case planner.Create:
		return "  " + h.color(ansiGreen, "+")
	case planner.Update:
		return "  " + h.color(ansiYellow, "~")
	case planner.Delete:
		return "  " + h.color(ansiRed, "-")
	case planner.Replace:
		return h.color(ansiRed, "-") + "/" + h.color(ansiGreen, "+")
	}
	return "   "
}

// Plan implements View.
func (h *Human) Plan(p *planner.Plan) {
	var b strings.Builder
	if len(p.Drift) > 0 {
		b.WriteString(h.color(ansiBold, "Changed outside tsolab since the last apply:") + "\n\n")
		for _, d := range p.Drift {
			if d.Gone {
				fmt.Fprintf(&b, "%s %s was deleted outside tsolab\n", h.symbol(planner.Delete), d.Addr)
				continue
			}
			for _, a := range d.Diffs {
				fmt.Fprintf(&b, "%s %s %s: %s -> %s (changed outside tsolab)\n",
					h.symbol(planner.Update), d.Addr, a.Key, value(a.Before, a.BeforeSet), value(a.After, a.AfterSet))
			}
		}
		b.WriteString("\n")
	}
	if !p.HasChanges() {
		if p.Mode == planner.ModeDestroy {
			b.WriteString(h.color(ansiBold+ansiGreen, "No changes.") + " No objects need to be destroyed.\n")
		} else {
			b.WriteString(h.color(ansiBold+ansiGreen, "No changes.") + " The lab matches the configuration.\n")
		}
		h.write(b.String())
		return
	}
	b.WriteString("tsolab will perform the following actions:\n")
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Action == planner.NoOp {
			continue
		}
		b.WriteString("\n")
		h.change(&b, p, c)
	}
	b.WriteString("\n" + h.color(ansiBold, "Plan:") + strings.TrimPrefix(p.Summary(), "Plan:") + "\n")
	h.write(b.String())
}

// adopted reports the device an adopting NIC's change is about, and the
// namespace it lives in there ("" = the machine's own).
func adopted(c *planner.Change) (dev, ns string, ok bool) {
	a := c.After
	if c.Action == planner.Delete {
		a = c.Before
	}
	kind, dev, _ := strings.Cut(a[provider.AttrLink], ":")
	if c.Addr.Kind != provider.KindNIC || kind != provider.LinkDevice {
		return "", "", false
	}
	return dev, a[provider.AttrNetNS], true
}

// adoptionWhy says what a change does to an adopted device, which tsolab
// never creates or deletes: it takes it (moving it into a namespace host)
// and gives it back.
func adoptionWhy(a planner.Action, why, dev, ns string) string {
	moved := ns != "" && dev != "lo"
	reason := strings.TrimPrefix(why, "will be created") // why an earlier one is gone
	switch {
	case a == planner.Create && moved:
		return fmt.Sprintf("will adopt device %s, moving it into %s%s", dev, ns, reason)
	case a == planner.Create:
		return fmt.Sprintf("will adopt device %s%s", dev, reason)
	case a == planner.Delete && moved:
		return fmt.Sprintf("will give device %s back, moving it to the machine's namespace", dev)
	case a == planner.Delete:
		return fmt.Sprintf("will give device %s back as it was", dev)
	}
	return why
}

// change renders one change: a comment saying what happens and why, the
// symbol and address, then one line per attribute.
func (h *Human) change(b *strings.Builder, p *planner.Plan, c *planner.Change) {
	addr := h.color(ansiBold, c.Addr.String())
	var why string
	switch c.Action {
	case planner.Create:
		why = "will be created"
		switch c.Reason {
		case planner.ReasonGone:
			why += " (it was deleted outside tsolab)"
		case planner.ReasonIncomplete:
			why += " (an earlier apply did not finish creating it)"
		}
	case planner.Update:
		why = "will be updated in-place"
	case planner.Replace:
		why = "must be replaced"
		if c.Reason == planner.ReasonDependency {
			why += fmt.Sprintf(" (it lives in %s, which is replaced)", c.Cause)
		}
	case planner.Delete:
		why = "will be destroyed"
	}
	if dev, ns, ok := adopted(c); ok {
		why = adoptionWhy(c.Action, why, dev, ns)
	}
	if m := machineOf(c); m != "" {
		why += fmt.Sprintf(" on machine %s", m)
	}
	fmt.Fprintf(b, "  # %s %s\n", addr, why)
	if c.Action == planner.Delete && p.Mode == planner.ModeNormal {
		fmt.Fprintf(b, "  # (because %s is not in the lab)\n", c.Addr)
	}
	fmt.Fprintf(b, "%s %s\n", h.symbol(c.Action), c.Addr)
	diffs := c.Diffs()
	if c.Action == planner.Delete {
		return // what is recorded is in tsolab show; the plan says it goes
	}
	width := 0
	for _, d := range diffs {
		width = max(width, len(d.Key))
	}
	for _, d := range diffs {
		key := fmt.Sprintf("%-*s", width+1, d.Key+":")
		before, after := value(d.Before, d.BeforeSet), value(d.After, d.AfterSet)
		if d.Key == provider.AttrMachine {
			before, after = machineValue(p, d.Before, d.BeforeSet), machineValue(p, d.After, d.AfterSet)
		}
		switch c.Action {
		case planner.Create:
			fmt.Fprintf(b, "      %s %s\n", key, after)
		default:
			line := fmt.Sprintf("      %s %s -> %s", key, before, after)
			if d.ForcesReplace {
				line += h.color(ansiRed, " # forces replacement")
			}
			b.WriteString(line + "\n")
		}
	}
}

// Event implements View.
func (h *Human) Event(ev planner.Event) {
	doing, done, failed := progress(ev.Action)
	var line string
	switch ev.Kind {
	case planner.EventStart:
		line = doing
	case planner.EventComplete:
		line = fmt.Sprintf("%s after %s", done, elapsed(ev.Elapsed))
	case planner.EventFailed:
		line = h.color(ansiRed, fmt.Sprintf("%s after %s", failed, elapsed(ev.Elapsed)))
	case planner.EventSkipped:
		if ev.Cause == (provider.Addr{}) {
			line = "Not started: the apply was interrupted"
		} else {
			line = fmt.Sprintf("Skipped: %s failed", ev.Cause)
		}
	}
	h.write(fmt.Sprintf("%s: %s\n", h.color(ansiBold, ev.Addr.String()), line))
}

// Applied implements View.
func (h *Human) Applied(res *planner.ApplyResult) {
	h.Diagnostics(res.Diagnostics)
	s := res.Summary()
	head, rest, _ := strings.Cut(s, "!")
	switch {
	case len(res.Failed) > 0 || res.Interrupted:
		s = h.color(ansiBold+ansiRed, s)
	case rest != "":
		s = h.color(ansiBold+ansiGreen, head+"!") + rest
	}
	if len(res.Diagnostics) == 0 {
		s = "\n" + s // the diagnostics writer ends with a blank line
	}
	h.write(s + "\n")
}

// State implements View.
func (h *Human) State(st *planner.State) {
	if st == nil || len(st.Resources) == 0 {
		h.write("The state is empty: nothing has been applied.\n")
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Lab %q, scenario %q (state serial %d, lineage %s)\n", st.Lab, st.Scenario, st.Serial, st.Lineage)
	for _, name := range slices.Sorted(maps.Keys(st.Machines)) {
		r := st.Machines[name]
		fmt.Fprintf(&b, "Machine %s: %s", name, r.Login())
		if r.IdentityFile != "" {
			fmt.Fprintf(&b, ", identity_file %s", r.IdentityFile)
		}
		if r.KnownHosts != "" {
			fmt.Fprintf(&b, ", known_hosts %s", r.KnownHosts)
		}
		if r.Sudo {
			b.WriteString(", sudo -n")
		}
		b.WriteString("\n")
	}
	for _, r := range st.Resources {
		b.WriteString("\n")
		h.resource(&b, r)
	}
	h.write(b.String())
}

// Resource renders one recorded resource as State does (tsolab state
// show).
func (h *Human) Resource(r planner.ResourceState) {
	var b strings.Builder
	h.resource(&b, r)
	h.write(b.String())
}

func (h *Human) resource(b *strings.Builder, r planner.ResourceState) {
	if r.Status == planner.StatusCreating {
		fmt.Fprintf(b, "# %s: (being created: an apply did not finish it)\n", h.color(ansiBold, r.Addr.String()))
	} else {
		fmt.Fprintf(b, "# %s:\n", h.color(ansiBold, r.Addr.String()))
	}
	width := 0
	for k := range r.Attrs {
		width = max(width, len(k))
	}
	for _, k := range r.Attrs.Keys() {
		fmt.Fprintf(b, "    %-*s %s\n", width+1, k+":", value(r.Attrs[k], true))
	}
	if len(r.DependsOn) > 0 {
		deps := make([]string, len(r.DependsOn))
		for i, d := range r.DependsOn {
			deps[i] = d.String()
		}
		fmt.Fprintf(b, "    (depends on %s)\n", strings.Join(deps, ", "))
	}
}

// Diagnostics implements View, with source snippets from
// HumanOptions.Sources.
func (h *Human) Diagnostics(diags hcl.Diagnostics) {
	if len(diags) == 0 {
		return
	}
	files := map[string]*hcl.File{}
	for name, src := range h.opts.Sources {
		files[name] = &hcl.File{Bytes: src}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	wr := hcl.NewDiagnosticTextWriter(h.w, files, h.opts.Width, h.opts.Color)
	for _, d := range diags {
		io.WriteString(h.w, "\n")
		wr.WriteDiagnostic(d)
	}
}

func (h *Human) write(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	io.WriteString(h.w, s)
}

// machineValue renders a machine attribute with whom tsolab logs in as
// there, when the plan knows: "r1 (root@10.1.2.3)".
func machineValue(p *planner.Plan, name string, set bool) string {
	r, ok := p.Machines[name]
	if !ok {
		r, ok = p.Prior.Reaches()[name]
	}
	if !set || !ok {
		return value(name, set)
	}
	return strconv.Quote(name + " (" + r.Login() + ")")
}

// machineOf is the machine a change's object lives on ("" for the machine
// tsolab runs on).
func machineOf(c *planner.Change) string {
	if m := c.After[provider.AttrMachine]; m != "" {
		return m
	}
	return c.Before[provider.AttrMachine]
}
