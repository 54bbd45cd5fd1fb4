package planner_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/providertest"
)

// A state file that is broken is a *StateError naming the file, what is
// wrong and what to do; never a panic, never a state read half.
func TestReadStateRefusesBrokenFiles(t *testing.T) {
	good := `{"format_version": 1, "serial": 4, "lineage": "l", "lab": "t", "scenario": "s", "resources": [
  {"addr": "host.a", "status": "ready", "attrs": {"netns": "tsl.t.a"}, "depends_on": []},
  {"addr": "nic.a0", "status": "ready", "attrs": {}, "depends_on": ["host.a"]}]}`
	for _, tc := range []struct {
		name, file, want string
	}{
		{"empty", "", "it is empty"},
		{"truncated", good[:len(good)/2], "it is not a tsolab state file (unexpected end of JSON input)"},
		{"not json", "serial = 4\n", "it is not a tsolab state file (invalid character"},
		{"an array", "[1, 2]", "it is not a tsolab state file (json: cannot unmarshal array"},
		{"no version", `{"serial": 4, "lab": "t", "resources": []}`, "it has no format_version"},
		{"newer", `{"format_version": 2, "resources": {"host.a": {}}}`, "it was written by a newer tsolab (state format 2; this tsolab reads format 1). Run a tsolab as new as the one that wrote it"},
		{"older", `{"format_version": 0}`, "it has format_version 0; tsolab has only ever written format 1"},
		{"bad address", strings.Replace(good, `"nic.a0"`, `"nick.a0"`, 1), `"nick.a0" is not a resource address`},
		{"no address", strings.Replace(good, `"addr": "nic.a0", `, ``, 1), "resources[1] has no addr"},
		{"null resource", strings.Replace(good, `]}]}`, `]}, null]}`, 1), "resources[2] has no addr"},
		{"twice", strings.Replace(good, `"nic.a0"`, `"host.a"`, 1), "host.a is recorded twice (resources[0] and [1])"},
		{"status", strings.Replace(good, `"status": "ready", "attrs": {}`, `"status": "deleted", "attrs": {}`, 1), `nic.a0 has status "deleted"`},
		{"attrs not strings", strings.Replace(good, `"tsl.t.a"`, `7`, 1), "cannot unmarshal number"},
		{"no lab", strings.Replace(good, `"lab": "t"`, `"lab": ""`, 1), `it records resources but no "lab"`},
		{"cycle", strings.Replace(good, `"depends_on": []`, `"depends_on": ["nic.a0"]`, 1), "its depends_on form a cycle (host.a -> nic.a0 -> host.a), so no order of deletes exists"},
		{"self", strings.Replace(good, `"depends_on": []`, `"depends_on": ["host.a"]`, 1), "cycle (host.a -> host.a)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, planner.StatePath(dir), tc.file)
			st, err := planner.ReadState(dir)
			var se *planner.StateError
			if !errors.As(err, &se) {
				t.Fatalf("got state %+v, error %v; want a *planner.StateError", st, err)
			}
			if !strings.Contains(err.Error(), planner.StatePath(dir)+" cannot be read: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q\nwant the path and %q", err, tc.want)
			}
			if !se.Newer && !strings.Contains(err.Error(), "Repair the file by hand") {
				t.Errorf("error %q does not say what to do", err)
			}
		})
	}
	t.Run("good", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, planner.StatePath(dir), good)
		if st, err := planner.ReadState(dir); err != nil || len(st.Resources) != 2 {
			t.Errorf("got %+v, %v; want the two resources", st, err)
		}
	})
	// With a backup that reads, the error says how to restore it.
	t.Run("backup", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, planner.StatePath(dir), good[:20])
		writeFile(t, planner.BackupPath(dir), good)
		_, err := planner.ReadState(dir)
		want := "The state as it was before the last apply is in " + planner.BackupPath(dir) + " (serial 4). If that is the lab as you know it, restore it (cp " +
			planner.BackupPath(dir) + " " + planner.StatePath(dir) + ") and run tsolab plan"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v\nwant %q", err, want)
		}
	})
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Forget drops records and touches nothing: the objects stay in the
// world, and the next plan creates them again as new (Terraform's
// state rm).
func TestForget(t *testing.T) {
	dir := t.TempDir()
	w := providertest.NewWorld()
	p := newPlanner(dir, w)
	mustApply(t, p, mustPlan(t, p, twoReceivers(true)))
	before, _ := planner.ReadState(dir)
	objects := w.Addrs()
	ops := len(w.Log())

	// All or nothing: an address not recorded removes none.
	_, err := planner.Forget(dir, []provider.Addr{addr("nic.tx0"), addr("nic.nope")})
	var nr *planner.NotRecordedError
	if !errors.As(err, &nr) || !strings.Contains(err.Error(), "records no nic.nope: nothing was removed") {
		t.Fatalf("Forget of an unrecorded address: %v", err)
	}
	// The lock is respected.
	lock, err := planner.LockState(dir, labName)
	if err != nil {
		t.Fatal(err)
	}
	var le *planner.LockError
	if _, err := planner.Forget(dir, []provider.Addr{addr("nic.tx0")}); !errors.As(err, &le) {
		t.Errorf("Forget while locked: %v, want a *planner.LockError", err)
	}
	lock.Unlock()
	if st, _ := planner.ReadState(dir); !cmp.Equal(st, before) {
		t.Fatalf("refused Forgets changed the state:\n%s", cmp.Diff(before, st))
	}

	st, err := planner.Forget(dir, []provider.Addr{addr("nic.tx0"), addr("host.tx")})
	if err != nil {
		t.Fatal(err)
	}
	if st.Resource(addr("nic.tx0")) != nil || st.Resource(addr("host.tx")) != nil || len(st.Resources) != len(before.Resources)-2 || st.Serial != before.Serial+1 {
		t.Errorf("after Forget: %d resources, serial %d; want %d without nic.tx0 and host.tx, serial %d", len(st.Resources), st.Serial, len(before.Resources)-2, before.Serial+1)
	}
	if onDisk, _ := planner.ReadState(dir); !cmp.Equal(onDisk, st) {
		t.Errorf("Forget's result differs from the file:\n%s", cmp.Diff(st, onDisk))
	}
	if backup, _ := os.ReadFile(planner.BackupPath(dir)); !strings.Contains(string(backup), `"nic.tx0"`) {
		t.Errorf("the backup is not the state before Forget:\n%s", backup)
	}
	if got := w.Addrs(); !cmp.Equal(got, objects) || len(w.Log()) != ops {
		t.Errorf("Forget touched the world: objects %v (were %v), %d operations (were %d)", got, objects, len(w.Log()), ops)
	}
	// The next plan knows nothing of them, and destroy leaves them.
	if got := actions(mustPlan(t, p, twoReceivers(true))); got["nic.tx0"] != "+" || got["host.tx"] != "+" {
		t.Errorf("plan after Forget: %v, want nic.tx0 and host.tx created", got)
	}
	dplan, err := p.PlanDestroy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(dplan); len(got) != len(before.Resources)-2 || got["nic.tx0"] != "" || got["host.tx"] != "" {
		t.Errorf("destroy plan after Forget: %v, want every resource but nic.tx0 and host.tx", got)
	}
}

// FuzzReadState feeds ReadState arbitrary files: it returns a state or
// an error, never panics, and a state it returns is one tsolab could
// have written (it reads back the same after a round trip through JSON).
// go test -fuzz FuzzReadState ./planner
func FuzzReadState(f *testing.F) {
	for _, s := range stateSeeds(f) {
		f.Add(s)
	}
	f.Add([]byte(`{"format_version": 1, "lab": "t", "resources": [{"addr": "host.a", "depends_on": ["host.a"]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		writeFile(t, planner.StatePath(dir), string(b))
		st, err := planner.ReadState(dir)
		if err != nil {
			var se *planner.StateError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *planner.StateError", err)
			}
			return
		}
		out, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, planner.StatePath(dir), string(out))
		again, err := planner.ReadState(dir)
		if err != nil {
			t.Fatalf("a state ReadState accepted does not read back: %v\n%s", err, out)
		}
		if !cmp.Equal(st, again, cmpopts.EquateEmpty()) {
			t.Fatalf("round trip changed the state:\n%s", cmp.Diff(st, again, cmpopts.EquateEmpty()))
		}
	})
}

// stateSeeds are the state files of the CLI's state scripts, seeds of
// FuzzReadState and FuzzPlanState.
func stateSeeds(f *testing.F) [][]byte {
	var out [][]byte
	seeds, _ := filepath.Glob("../cmd/tsolab/testdata/script/state-*.txtar")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		for _, part := range strings.Split(string(b), "\n-- ")[1:] {
			if _, body, ok := strings.Cut(part, " --\n"); ok && strings.HasPrefix(strings.TrimSpace(body), "{") {
				out = append(out, []byte(body))
			}
		}
	}
	return out
}
