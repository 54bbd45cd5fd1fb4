package planner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/providertest"
)

func TestApplyConverges(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	p := newPlanner(dir, w)

	plan := mustPlan(t, p, twoReceivers(true))
	if got, want := plan.Summary(), "Plan: 7 to add, 0 to change, 0 to destroy."; got != want {
		t.Fatalf("first plan: got %q, want %q", got, want)
	}
	res := mustApply(t, p, plan)
	if got, want := res.Summary(), "Apply complete! Resources: 7 added, 0 changed, 0 destroyed."; got != want {
		t.Errorf("apply: got %q, want %q", got, want)
	}
	want := []string{"host.rx1", "host.rx2", "host.tx", "nic.rx10", "nic.rx20", "nic.tx0", "switch.sw"}
	if diff := cmp.Diff(want, w.Addrs()); diff != "" {
		t.Errorf("world after apply (-want +got):\n%s", diff)
	}
	for _, d := range desired(twoReceivers(true)) {
		o, _ := w.Object(d.Addr)
		if !o.Complete || !o.Attrs.Equal(d.Attrs) {
			t.Errorf("%s: got %v complete=%v, want %v", d.Addr, o.Attrs, o.Complete, d.Attrs)
		}
	}

	again := mustPlan(t, p, twoReceivers(true))
	if got := again.Summary(); got != "No changes." {
		t.Errorf("second plan: got %q, want %q", got, "No changes.")
	}

	other := mustPlan(t, p, twoReceivers(false))
	if diff := cmp.Diff(map[string]string{"nic.tx0": "~"}, actions(other)); diff != "" {
		t.Errorf("plan of tso=false (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]planner.AttrDiff{{Key: "offload.tso", Before: "true", After: "false", BeforeSet: true, AfterSet: true}},
		other.Change(addr("nic.tx0")).Diffs()); diff != "" {
		t.Errorf("nic.tx0 diffs (-want +got):\n%s", diff)
	}
	mustApply(t, p, other)
	if o, _ := w.Object(addr("nic.tx0")); o.Attrs["offload.tso"] != "false" {
		t.Errorf("after applying tso=false: offload.tso = %q", o.Attrs["offload.tso"])
	}
	st, err := planner.ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Scenario != "tso=false" {
		t.Errorf("state scenario = %q, want tso=false", st.Scenario)
	}
}

func TestDriftIsReportedAndRepaired(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	p := newPlanner(dir, w)
	mustApply(t, p, mustPlan(t, p, twoReceivers(true)))

	w.SetAttr(addr("nic.tx0"), "offload.tso", "false")
	w.Remove(addr("host.rx1")) // takes nic.rx10 with it, as deleting a namespace does

	plan := mustPlan(t, p, twoReceivers(true))
	want := []planner.Drift{
		{Addr: addr("host.rx1"), Gone: true},
		{Addr: addr("nic.rx10"), Gone: true},
		{Addr: addr("nic.tx0"), Diffs: []planner.AttrDiff{{Key: "offload.tso", Before: "true", After: "false", BeforeSet: true, AfterSet: true}}},
	}
	if diff := cmp.Diff(want, plan.Drift); diff != "" {
		t.Errorf("drift (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"host.rx1": "+", "nic.rx10": "+", "nic.tx0": "~"}, actions(plan)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	mustApply(t, p, plan)
	if got := mustPlan(t, p, twoReceivers(true)).Summary(); got != "No changes." {
		t.Errorf("after repair: %q", got)
	}
}

func TestApplyOrder(t *testing.T) {
	w := providertest.NewWorld()
	p := newPlanner(t.TempDir(), w)
	mustApply(t, p, mustPlan(t, p, twoReceivers(true)))
	log := w.Log()
	for _, nic := range []struct{ nic, host string }{{"nic.tx0", "host.tx"}, {"nic.rx10", "host.rx1"}, {"nic.rx20", "host.rx2"}} {
		n := opIndex(t, log, providertest.OpCreate, nic.nic)
		for _, dep := range []string{nic.host, "switch.sw"} {
			if d := opIndex(t, log, providertest.OpCreate, dep); d.End > n.Start {
				t.Errorf("create %s started (%d) before create %s ended (%d)", nic.nic, n.Start, dep, d.End)
			}
		}
	}

	mustDestroy(t, p)
	log = w.Log()
	for _, nic := range []string{"nic.tx0", "nic.rx10", "nic.rx20"} {
		n := opIndex(t, log, providertest.OpDelete, nic)
		for _, dep := range []string{"host.tx", "host.rx1", "host.rx2", "switch.sw"} {
			// Every NIC has a port in the switch; each its own host.
			if dep != "switch.sw" && dep[5:] != nic[4:len(nic)-1] {
				continue
			}
			if d := opIndex(t, log, providertest.OpDelete, dep); n.End > d.Start {
				t.Errorf("delete %s started (%d) before delete %s ended (%d)", dep, d.Start, nic, n.End)
			}
		}
	}
	if got := w.Addrs(); len(got) != 0 {
		t.Errorf("after destroy the world still holds %v", got)
	}
}

// barrier blocks each caller until n have arrived, or until a deadline:
// independent changes that really run in parallel all meet.
type barrier struct {
	mu      sync.Mutex
	n       int
	arrived int
	all     chan struct{}
	timeout bool
}

func newBarrier(n int) *barrier { return &barrier{n: n, all: make(chan struct{})} }

func (b *barrier) wait() {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
	case <-time.After(10 * time.Second):
		b.mu.Lock()
		b.timeout = true
		b.mu.Unlock()
	}
}

func TestIndependentChangesOverlap(t *testing.T) {
	w := providertest.NewWorld()
	// The three hosts and the switch depend on nothing: all four creates
	// must be in flight together.
	b := newBarrier(4)
	w.OnOp = func(op providertest.OpKind, a provider.Addr) {
		if op == providertest.OpCreate && a.Kind != provider.KindNIC {
			b.wait()
		}
	}
	p := newPlanner(t.TempDir(), w)
	mustApply(t, p, mustPlan(t, p, twoReceivers(true)))
	if b.timeout {
		t.Fatalf("the four independent creates never ran together (%d arrived)", b.arrived)
	}
	log := w.Log()
	roots := []string{"host.tx", "host.rx1", "host.rx2", "switch.sw"}
	for _, x := range roots {
		for _, y := range roots {
			ox, oy := opIndex(t, log, providertest.OpCreate, x), opIndex(t, log, providertest.OpCreate, y)
			if x != y && !(ox.Start < oy.End && oy.Start < ox.End) {
				t.Errorf("create %s [%d,%d] and create %s [%d,%d] did not overlap", x, ox.Start, ox.End, y, oy.Start, oy.End)
			}
		}
	}
}

func TestParallelismBound(t *testing.T) {
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			w := providertest.NewWorld()
			p := newPlanner(t.TempDir(), w, func(o *planner.Options) { o.Parallelism = n })
			mustApply(t, p, mustPlan(t, p, twoReceivers(true)))
			if got := w.MaxInFlight(); got > n {
				t.Errorf("max in flight = %d, want <= %d", got, n)
			}
		})
	}
}

func TestFailurePropagation(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	w.Fail = func(op providertest.OpKind, a provider.Addr) hcl.Diagnostics {
		if op == providertest.OpCreate && a == addr("host.rx1") {
			return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "host.rx1: create namespace: operation not permitted"}}
		}
		return nil
	}
	var evMu sync.Mutex
	var events []string
	p := newPlanner(dir, w, func(o *planner.Options) {
		o.OnEvent = func(ev planner.Event) {
			evMu.Lock()
			defer evMu.Unlock()
			s := ev.Kind.String() + " " + ev.Action.Name() + " " + ev.Addr.String()
			if ev.Kind == planner.EventSkipped {
				s += " cause " + ev.Cause.String()
			}
			events = append(events, s)
		}
	})
	res, err := p.Apply(context.Background(), mustPlan(t, p, twoReceivers(true)))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(res.Diagnostics); got != 1 || res.Diagnostics[0].Summary != "host.rx1: create namespace: operation not permitted" {
		t.Errorf("diagnostics: got %v, want the root cause once", res.Diagnostics)
	}
	if diff := cmp.Diff([]provider.Addr{addr("host.rx1")}, res.Failed); diff != "" {
		t.Errorf("failed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]planner.Skipped{{Addr: addr("nic.rx10"), Action: planner.Create, Cause: addr("host.rx1")}}, res.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if res.Added != 5 {
		t.Errorf("added = %d, want 5 (the independent branches continue)", res.Added)
	}
	sort.Strings(events)
	wantEvents := []string{
		"complete create host.rx2", "complete create host.tx", "complete create nic.rx20", "complete create nic.tx0", "complete create switch.sw",
		"failed create host.rx1",
		"skipped create nic.rx10 cause host.rx1",
		"start create host.rx1", "start create host.rx2", "start create host.tx", "start create nic.rx20", "start create nic.tx0", "start create switch.sw",
	}
	if diff := cmp.Diff(wantEvents, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// The state records what was made, and the failed create as pending.
	st, err := planner.ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]planner.Status{}
	for _, r := range st.Resources {
		got[r.Addr.String()] = r.Status
	}
	wantState := map[string]planner.Status{
		"host.rx1": planner.StatusCreating, "host.rx2": planner.StatusReady, "host.tx": planner.StatusReady,
		"nic.rx20": planner.StatusReady, "nic.tx0": planner.StatusReady, "switch.sw": planner.StatusReady,
	}
	if diff := cmp.Diff(wantState, got); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}

	// Once the cause is gone, the next plan finishes the job.
	w.Fail = nil
	plan := mustPlan(t, p, twoReceivers(true))
	if diff := cmp.Diff(map[string]string{"host.rx1": "+", "nic.rx10": "+"}, actions(plan)); diff != "" {
		t.Errorf("re-plan (-want +got):\n%s", diff)
	}
	mustApply(t, p, plan)
	if got := mustPlan(t, p, twoReceivers(true)).Summary(); got != "No changes." {
		t.Errorf("after the retry: %q", got)
	}
}

func TestStateSerialAndLineage(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	p := newPlanner(dir, w)
	if st, err := planner.ReadState(dir); st != nil || err != nil {
		t.Fatalf("before any apply: ReadState = %v, %v; want nil, nil", st, err)
	}
	res := mustApply(t, p, mustPlan(t, p, twoReceivers(true)))
	st1, err := planner.ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(st1.Lineage) {
		t.Errorf("lineage %q is not UUID-shaped", st1.Lineage)
	}
	if st1.Serial != uint64(res.StateWrites) || st1.Serial < 2 {
		t.Errorf("serial = %d after %d writes; want one increment per write", st1.Serial, res.StateWrites)
	}
	if diff := cmp.Diff(res.State, st1); diff != "" {
		t.Errorf("state on disk differs from the result (-result +disk):\n%s", diff)
	}
	if st1.FormatVersion != planner.StateFormatVersion || st1.Lab != labName || st1.Scenario != "tso=true" {
		t.Errorf("state header = %d %q %q", st1.FormatVersion, st1.Lab, st1.Scenario)
	}

	// Nothing to do writes nothing.
	res = mustApply(t, p, mustPlan(t, p, twoReceivers(true)))
	if st, _ := planner.ReadState(dir); st.Serial != st1.Serial || res.StateWrites != 0 {
		t.Errorf("a no-change apply moved the serial from %d to %d (%d writes)", st1.Serial, st.Serial, res.StateWrites)
	}

	mustApply(t, p, mustPlan(t, p, twoReceivers(false)))
	st2, _ := planner.ReadState(dir)
	if st2.Lineage != st1.Lineage || st2.Serial <= st1.Serial {
		t.Errorf("after an update: lineage %q serial %d; want lineage %q and serial > %d", st2.Lineage, st2.Serial, st1.Lineage, st1.Serial)
	}
	if _, err := os.Stat(planner.StatePath(dir)); err != nil {
		t.Fatal(err)
	}
	// No temporary files are left next to the state.
	ents, _ := os.ReadDir(dir + "/.tsolab")
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"lock", "state.json", "state.json.backup"}, names); diff != "" {
		t.Errorf(".tsolab holds (-want +got):\n%s", diff)
	}
	// The backup is the state as the update found it.
	b, err := os.ReadFile(planner.BackupPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), fmt.Sprintf(`"serial": %d,`, st1.Serial)) || !strings.Contains(string(b), `"scenario": "tso=true"`) {
		t.Errorf("backup after the update is not the state before it (serial %d, tso=true):\n%s", st1.Serial, b)
	}
}

func TestStalePlanIsRefused(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	p := newPlanner(dir, w)
	mustApply(t, p, mustPlan(t, p, twoReceivers(true)))
	st, _ := planner.ReadState(dir)

	file := dir + "/tso-off.plan"
	if err := planner.WritePlanFile(file, mustPlan(t, p, twoReceivers(false))); err != nil {
		t.Fatal(err)
	}
	// Someone else changes the lab in between.
	w.SetAttr(addr("nic.rx10"), "mtu", "9000")
	mustApply(t, p, mustPlan(t, p, twoReceivers(true)))
	now, _ := planner.ReadState(dir)

	saved, err := planner.ReadPlanFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Apply(context.Background(), saved)
	var stale *planner.StaleError
	if !errors.As(err, &stale) {
		t.Fatalf("Apply(stale plan) error = %v, want a *StaleError", err)
	}
	want := fmt.Sprintf("Saved plan is stale: the state changed since it was made (serial %d, now %d). Run tsolab plan again.", st.Serial, now.Serial)
	if err.Error() != want {
		t.Errorf("got %q\nwant %q", err, want)
	}
	if o, _ := w.Object(addr("nic.tx0")); o.Attrs["offload.tso"] != "true" {
		t.Errorf("the stale plan changed offload.tso to %q", o.Attrs["offload.tso"])
	}
}

// TestRacingApplyIsRefused: two applies of one lab at once (tsolab apply
// DIR twice) each plan first and take the lock only to apply; the one that
// applies second finds the state moved on since its plan and changes
// nothing, saying another tsolab changed it (not that a saved plan is
// stale: the user saved none) and that running again plans afresh.
func TestRacingApplyIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		applied bool // the lab was applied before both plan
		moved   string
	}{
		{"first apply", false, "it had no state; now it has one, serial %d"},
		{"update", true, "serial %d, now %d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w := providertest.NewWorld()
			p := newPlanner(dir, w)
			if tc.applied {
				mustApply(t, p, mustPlan(t, p, twoReceivers(true)))
			}
			before, _ := planner.ReadState(dir)
			second := mustPlan(t, p, twoReceivers(false))
			mustApply(t, p, mustPlan(t, p, twoReceivers(false))) // the other tsolab, first
			now, _ := planner.ReadState(dir)
			ops := len(w.Log())

			_, err := p.Apply(context.Background(), second)
			var stale *planner.StaleError
			if !errors.As(err, &stale) {
				t.Fatalf("Apply(plan made before another apply) error = %v, want a *StaleError", err)
			}
			moved := fmt.Sprintf(tc.moved, now.Serial)
			if tc.applied {
				moved = fmt.Sprintf(tc.moved, before.Serial, now.Serial)
			}
			want := "Another tsolab changed the lab's state while this one was planning (" + moved + "), so this one changed nothing. Run the command again: it plans against what is there now."
			if err.Error() != want {
				t.Errorf("got %q\nwant %q", err, want)
			}
			if after, _ := planner.ReadState(dir); after.Serial != now.Serial || len(w.Log()) != ops {
				t.Errorf("the refused apply wrote the state (serial %d -> %d) or called the providers (%d -> %d operations)", now.Serial, after.Serial, ops, len(w.Log()))
			}
		})
	}
}

func TestPlanFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	p := newPlanner(dir, w)
	mustApply(t, p, mustPlan(t, p, twoReceivers(true)))
	plan := mustPlan(t, p, twoReceivers(false))
	file := dir + "/p.plan"
	if err := planner.WritePlanFile(file, plan); err != nil {
		t.Fatal(err)
	}
	got, err := planner.ReadPlanFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got.File != file {
		t.Errorf("the plan read from %s has File %q", file, got.File)
	}
	want := *plan
	want.File = file // the one field the file does not hold: where it was read from
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	mustApply(t, p, got)
	if o, _ := w.Object(addr("nic.tx0")); o.Attrs["offload.tso"] != "false" {
		t.Errorf("saved plan not applied: offload.tso = %q", o.Attrs["offload.tso"])
	}

	// A hand-edited plan is refused.
	b, _ := os.ReadFile(file)
	edited := regexp.MustCompile(`"offload.tso": "false"`).ReplaceAll(b, []byte(`"offload.tso": "maybe"`))
	os.WriteFile(file, edited, 0o644)
	if _, err := planner.ReadPlanFile(file); err == nil {
		t.Error("ReadPlanFile accepted a plan whose desired resources were edited")
	}
	os.WriteFile(file, []byte("lab \"x\" {}\n"), 0o644)
	if _, err := planner.ReadPlanFile(file); !errors.Is(err, planner.ErrNotPlanFile) {
		t.Errorf("ReadPlanFile(HCL) = %v, want ErrNotPlanFile", err)
	}
}

func TestLockContention(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	p := newPlanner(dir, w)
	plan := mustPlan(t, p, twoReceivers(true))

	lock, err := planner.LockState(dir, labName)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Apply(context.Background(), plan)
	var le *planner.LockError
	if !errors.As(err, &le) {
		t.Fatalf("Apply while locked: got %v, want a *planner.LockError", err)
	}
	// The error says who holds the lock, where, since when, and the fix.
	host, _ := os.Hostname()
	for _, want := range []string{
		fmt.Sprintf("lock on lab %q", labName),
		fmt.Sprintf("pid %d (%s", os.Getpid(), filepath.Base(os.Args[0])),
		" on " + host + ", since ",
		" ago). Wait for it to finish",
		fmt.Sprintf("kill %d", os.Getpid()),
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Apply while locked: %q lacks %q", err, want)
		}
	}
	if got := w.Addrs(); len(got) != 0 {
		t.Errorf("a locked-out apply created %v", got)
	}
	if err := lock.Unlock(); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, plan)
}

func TestValidationBlocksApply(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	rng := hcl.Range{Filename: "lab.tsolab.hcl", Start: hcl.Pos{Line: 12, Column: 1}}
	w.ValidateFn = func(req provider.ValidateRequest) hcl.Diagnostics {
		if req.Addr == addr("nic.tx0") {
			return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "nic.tx0: offload tso is [fixed] off on this device", Subject: req.Range.Ptr()}}
		}
		return nil
	}
	p := newPlanner(dir, w, func(o *planner.Options) { o.Ranges = map[provider.Addr]hcl.Range{addr("nic.tx0"): rng} })
	plan, err := p.Plan(context.Background(), "tso=true", desired(twoReceivers(true)))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Diagnostics) != 1 || plan.Diagnostics[0].Subject == nil || plan.Diagnostics[0].Subject.Start.Line != 12 {
		t.Fatalf("diagnostics = %v, want one naming lab.tsolab.hcl:12", plan.Diagnostics)
	}
	if _, err := p.Apply(context.Background(), plan); !errors.Is(err, planner.ErrPlanHasErrors) {
		t.Errorf("Apply = %v, want ErrPlanHasErrors", err)
	}
	if err := planner.WritePlanFile(dir+"/x.plan", plan); !errors.Is(err, planner.ErrPlanHasErrors) {
		t.Errorf("WritePlanFile = %v, want ErrPlanHasErrors", err)
	}
	if got := w.Addrs(); len(got) != 0 {
		t.Errorf("an invalid plan created %v", got)
	}
}

// crash simulates kill -9 of an apply at the start of the create of at:
// the state file as it was at that moment is restored after the apply,
// the create leaves a half-made object, and no provider call that had not
// begun by then changes anything (the process is dead).
func crash(t *testing.T, dir string, w *providertest.World, at provider.Addr, p func(ctx context.Context) *planner.Planner) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var snapshot []byte
	var dead atomic.Bool
	w.HalfCreate[at] = true
	w.Fail = func(op providertest.OpKind, a provider.Addr) hcl.Diagnostics {
		if dead.Load() && a != at {
			return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "the process is dead"}}
		}
		return nil
	}
	w.OnOp = func(op providertest.OpKind, a provider.Addr) {
		if op == providertest.OpCreate && a == at {
			dead.Store(true)
			b, err := os.ReadFile(planner.StatePath(dir))
			if err != nil {
				t.Errorf("state at the crash: %v", err)
			}
			snapshot = b
			cancel()
		}
	}
	pl := p(ctx)
	plan, err := pl.Plan(context.Background(), "tso=true", desired(twoReceivers(true)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pl.Apply(ctx, plan); err != nil {
		t.Fatal(err)
	}
	w.OnOp, w.Fail = nil, nil
	if snapshot == nil {
		t.Fatalf("the apply never reached the create of %s", at)
	}
	if err := os.WriteFile(planner.StatePath(dir), snapshot, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResumeAfterCrash(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	mk := func(context.Context) *planner.Planner { return newPlanner(dir, w) }
	crash(t, dir, w, addr("nic.tx0"), mk)

	st, err := planner.ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r := st.Resource(addr("nic.tx0")); r == nil || r.Status != planner.StatusCreating {
		t.Fatalf("state at the crash records nic.tx0 as %+v; want status creating", r)
	}
	if o, ok := w.Object(addr("nic.tx0")); !ok || o.Complete {
		t.Fatalf("world at the crash: nic.tx0 exists=%v complete=%v; want a half-made object", ok, o.Complete)
	}

	p := mk(nil)
	plan := mustPlan(t, p, twoReceivers(true))
	if c := plan.Change(addr("nic.tx0")); c.Action != planner.Create || c.Reason != planner.ReasonIncomplete {
		t.Errorf("nic.tx0 after the crash: %v %v, want create incomplete", c.Action.Name(), c.Reason)
	}
	mustApply(t, p, plan)
	if got := mustPlan(t, p, twoReceivers(true)).Summary(); got != "No changes." {
		t.Errorf("after resuming: %q", got)
	}
	for _, d := range desired(twoReceivers(true)) {
		if o, _ := w.Object(d.Addr); !o.Complete || !o.Attrs.Equal(d.Attrs) {
			t.Errorf("%s after resuming: %v complete=%v", d.Addr, o.Attrs, o.Complete)
		}
	}
}

func TestDestroyAfterCrash(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	mk := func(context.Context) *planner.Planner { return newPlanner(dir, w) }
	crash(t, dir, w, addr("nic.rx20"), mk)
	if len(w.Addrs()) == 0 {
		t.Fatal("nothing was made before the crash")
	}
	res := mustDestroy(t, mk(nil))
	if got := w.Addrs(); len(got) != 0 {
		t.Errorf("destroy after a crash left %v", got)
	}
	if len(res.State.Resources) != 0 {
		t.Errorf("state after destroy still records %v", res.State.Resources)
	}
}

func TestDestroy(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	p := newPlanner(dir, w)
	mustApply(t, p, mustPlan(t, p, twoReceivers(true)))
	before, _ := planner.ReadState(dir)

	plan, err := p.PlanDestroy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := plan.Summary(), "Plan: 0 to add, 0 to change, 7 to destroy."; got != want {
		t.Errorf("destroy plan: got %q, want %q", got, want)
	}
	// Dependents come first in the plan too.
	pos := map[string]int{}
	for i, c := range plan.Changes {
		pos[c.Addr.String()] = i
	}
	for _, n := range []string{"nic.tx0", "nic.rx10", "nic.rx20"} {
		if pos[n] > pos["switch.sw"] {
			t.Errorf("%s listed after switch.sw in the destroy plan", n)
		}
	}
	res := mustApply(t, p, plan)
	if got, want := res.Summary(), "Destroy complete! Resources: 7 destroyed."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	after, _ := planner.ReadState(dir)
	if len(after.Resources) != 0 || after.Lineage != before.Lineage || after.Serial <= before.Serial || after.Scenario != "" {
		t.Errorf("state after destroy: %+v", after)
	}
	// Destroying nothing is a no-op.
	if got := mustDestroy(t, p).Summary(); got != "Destroy complete! Resources: 0 destroyed." {
		t.Errorf("second destroy: %q", got)
	}
}

func TestReplaceRunsDeleteThenCreate(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	p := newPlanner(dir, w)
	mustApply(t, p, mustPlan(t, p, twoReceivers(true)))

	// Move nic.rx20 onto host rx1: its namespace changes, it is replaced.
	sc := twoReceivers(true)
	sc.NICs[2].Host = "rx1"
	plan := mustPlan(t, p, sc)
	if diff := cmp.Diff(map[string]string{"nic.rx20": "-/+"}, actions(plan)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	mustApply(t, p, plan)
	log := w.Log()
	del := opIndex(t, log, providertest.OpDelete, "nic.rx20")
	var create providertest.Op
	for _, o := range log {
		if o.Kind == providertest.OpCreate && o.Addr == addr("nic.rx20") {
			create = o // the last one
		}
	}
	if create.Start < del.End {
		t.Errorf("replace created (%d) before the delete ended (%d)", create.Start, del.End)
	}
	if o, _ := w.Object(addr("nic.rx20")); o.Attrs["netns"] != "tsl.t.rx1" {
		t.Errorf("nic.rx20 netns = %q after the replace", o.Attrs["netns"])
	}
	if got := mustPlan(t, p, sc).Summary(); got != "No changes." {
		t.Errorf("after the replace: %q", got)
	}
}

// goingRecorder passes every call on, and records each Delete's Going.
type goingRecorder struct {
	provider.Interface
	mu    sync.Mutex
	going map[string][]string
}

func (g *goingRecorder) Delete(ctx context.Context, req provider.DeleteRequest) provider.DeleteResponse {
	var names []string
	for _, a := range req.Going {
		names = append(names, a.String())
	}
	sort.Strings(names)
	g.mu.Lock()
	g.going[req.Addr.String()] = names
	g.mu.Unlock()
	return g.Interface.Delete(ctx, req)
}

// TestDeleteGoing: a delete is told which of its dependencies the same
// apply deletes after it (a NIC its host and switch on destroy), and
// none when they stay (one NIC replaced).
func TestDeleteGoing(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	p := newPlanner(dir, w)
	mustApply(t, p, mustPlan(t, p, twoReceivers(true)))
	rec := &goingRecorder{Interface: w, going: map[string][]string{}}
	p = newPlanner(dir, w, func(o *planner.Options) { o.Providers[provider.KindNIC] = rec })
	mustDestroy(t, p)
	want := map[string][]string{
		"nic.tx0":  {"host.tx", "switch.sw"},
		"nic.rx10": {"host.rx1", "switch.sw"},
		"nic.rx20": {"host.rx2", "switch.sw"},
	}
	if diff := cmp.Diff(want, rec.going); diff != "" {
		t.Errorf("Going of the NICs' deletes on destroy (-want +got):\n%s", diff)
	}

	mustApply(t, p, mustPlan(t, p, twoReceivers(true)))
	rec.going = map[string][]string{}
	sc := twoReceivers(true)
	sc.NICs[0].Host = "rx1" // replaces nic.tx0; host.tx and the switch stay
	mustApply(t, p, mustPlan(t, p, sc))
	if going, ok := rec.going["nic.tx0"]; !ok || len(going) > 0 {
		t.Errorf("nic.tx0 replaced: deleted %v with Going %v, want deleted with none", ok, going)
	}
}
