package planner

import (
	"strings"
	"testing"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/provider"
)

// TestStateSetReplacesItsOwnRecord: recording a resource again replaces
// its record in place and leaves the others; a new one is appended.
func TestStateSetReplacesItsOwnRecord(t *testing.T) {
	a := provider.Addr{Kind: provider.KindHost, Name: "a"}
	b := provider.Addr{Kind: provider.KindHost, Name: "b"}
	c := provider.Addr{Kind: provider.KindNIC, Name: "c0"}
	st := &State{Resources: []ResourceState{{Addr: a, Status: StatusReady}, {Addr: b, Status: StatusCreating}}}
	st.set(ResourceState{Addr: b, Status: StatusReady})
	st.set(ResourceState{Addr: c, Status: StatusCreating})
	want := []ResourceState{{Addr: a, Status: StatusReady}, {Addr: b, Status: StatusReady}, {Addr: c, Status: StatusCreating}}
	if len(st.Resources) != len(want) {
		t.Fatalf("records %v, want %v", st.Resources, want)
	}
	for i, r := range st.Resources {
		if r.Addr != want[i].Addr || r.Status != want[i].Status {
			t.Errorf("record %d: %s %s, want %s %s", i, r.Addr, r.Status, want[i].Addr, want[i].Status)
		}
	}
}

// TestStateErrorSaysWhatToDo: each way a state file cannot be read ends
// with what to do about it, and only that.
func TestStateErrorSaysWhatToDo(t *testing.T) {
	for _, tc := range []struct {
		err       StateError
		want, not string
	}{
		{StateError{Denied: true, Owner: 0}, "root owns it", "User"},
		{StateError{Denied: true, Owner: 1000}, "User 1000 owns it", "root owns"},
		{StateError{Denied: true, Owner: -1}, "as the user that applied", "owns it"},
		{StateError{Newer: true, Owner: 1000}, "as new as the one that wrote it", "owns it"},
		{StateError{Backup: "b.json", BackupSerial: 7, Owner: 1000}, "serial 7", "owns it"},
	} {
		tc.err.Path, tc.err.Problem = "s.json", "a problem"
		msg := tc.err.Error()
		if !strings.Contains(msg, tc.want) || strings.Contains(msg, tc.not) {
			t.Errorf("%+v: %q, want %q and no %q", tc.err, msg, tc.want, tc.not)
		}
	}
}

// TestMergeRestoreKeepsBoth: the next attributes keep what they hold and
// gain the restore values only the old ones had, a nil next included.
func TestMergeRestoreKeepsBoth(t *testing.T) {
	old := provider.Attrs{"restore.mtu": "1500", "mtu": "9000"}
	for _, tc := range []struct {
		next, want provider.Attrs
	}{
		{provider.Attrs{"mtu": "4000"}, provider.Attrs{"mtu": "4000", "restore.mtu": "1500"}},
		{provider.Attrs{"restore.mtu": "1400"}, provider.Attrs{"restore.mtu": "1400"}},
		{nil, provider.Attrs{"restore.mtu": "1500"}},
	} {
		if got := mergeRestore(tc.next.Clone(), old); !got.Equal(tc.want) {
			t.Errorf("mergeRestore(%v, %v) = %v, want %v", tc.next, old, got, tc.want)
		}
	}
}

// TestSameContentSeesEachDifference: a state that differs from another
// in one record's status alone, or its attributes alone, is not the same
// (the writer would skip a state it takes for unchanged).
func TestSameContentSeesEachDifference(t *testing.T) {
	a := provider.Addr{Kind: provider.KindHost, Name: "a"}
	base := func() *State {
		return &State{Lab: "l", Resources: []ResourceState{{Addr: a, Status: StatusReady, Attrs: provider.Attrs{"netns": "x"}}}}
	}
	if !sameContent(base(), base()) {
		t.Error("two equal states: not the same content")
	}
	status := base()
	status.Resources[0].Status = StatusCreating
	attrs := base()
	attrs.Resources[0].Attrs = provider.Attrs{"netns": "y"}
	for name, other := range map[string]*State{"status": status, "attrs": attrs} {
		if sameContent(base(), other) {
			t.Errorf("states that differ in %s only: the same content", name)
		}
	}
}

// TestMachinesRecorded: Reaches gives the machines the state records,
// and a machine no record names any more is forgotten, one still named
// kept.
func TestMachinesRecorded(t *testing.T) {
	r1 := config.Reach{Address: "10.1.2.3"}
	st := &State{Machines: map[string]config.Reach{"r1": r1, "r2": {Address: "10.1.2.4"}},
		Resources: []ResourceState{{Addr: provider.Addr{Kind: provider.KindHost, Name: "h"}, Attrs: provider.Attrs{provider.AttrMachine: "r1"}}}}
	if got := st.Reaches(); len(got) != 2 || got["r1"] != r1 {
		t.Errorf("Reaches() = %v, want r1 and r2", got)
	}
	if (*State)(nil).Reaches() != nil {
		t.Error("Reaches() of a nil state: not nil")
	}
	st.dropMachine("r1")
	st.dropMachine("r2")
	if got := st.Reaches(); len(got) != 1 || got["r1"] != r1 {
		t.Errorf("after dropping r1 (still named) and r2 (not): %v, want r1 only", got)
	}
}
