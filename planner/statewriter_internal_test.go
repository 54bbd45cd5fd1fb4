package planner

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/tsolab/tsolab/provider"
)

// TestStateWriterWritesWhatWriteStateWrites: the writer, which encodes
// each record once per change, writes after every Record, Forget and
// Replace the same bytes as encoding the whole state (sorted) at once.
func TestStateWriterWritesWhatWriteStateWrites(t *testing.T) {
	dir := t.TempDir()
	w := newStateWriter(dir, &State{FormatVersion: StateFormatVersion, Lineage: "l", Lab: "lab"})
	check := func(step string) {
		t.Helper()
		got, err := os.ReadFile(StatePath(dir))
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		want := w.st.Clone()
		want.sortResources()
		b, err := json.MarshalIndent(want, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if b = append(b, '\n'); !bytes.Equal(got, b) {
			t.Errorf("%s: the state file is\n%s\nwant\n%s", step, got, b)
		}
		if _, err := ReadState(dir); err != nil {
			t.Errorf("%s: %v", step, err)
		}
	}
	host := provider.Addr{Kind: provider.KindHost, Name: "h"}
	nic := provider.Addr{Kind: provider.KindNIC, Name: "n<&>"}
	sw := provider.Addr{Kind: provider.KindSwitch, Name: "sw"}
	steps := []struct {
		name string
		do   func() error
	}{
		{"record a nic", func() error {
			return w.Record(ResourceState{Addr: nic, Status: StatusCreating, Attrs: provider.Attrs{"address": "10.0.0.1/24", "note": "é\t\"<b>\""}, DependsOn: []provider.Addr{host, sw}})
		}},
		{"record a host before it", func() error {
			return w.Record(ResourceState{Addr: host, Status: StatusReady, Attrs: provider.Attrs{"netns": "tsl.lab.h"}})
		}},
		{"record a switch without attrs", func() error { return w.Record(ResourceState{Addr: sw, Status: StatusReady}) }},
		{"change the nic", func() error {
			return w.Record(ResourceState{Addr: nic, Status: StatusReady, Attrs: provider.Attrs{"address": "10.0.0.2/24"}, DependsOn: []provider.Addr{}})
		}},
		{"forget the host", func() error { return w.Forget(host) }},
		{"change the nic again", func() error {
			return w.Record(ResourceState{Addr: nic, Status: StatusReady, Attrs: provider.Attrs{"mtu": "9000"}})
		}},
		{"forget the nic", func() error { return w.Forget(nic) }},
		{"forget the switch", func() error { return w.Forget(sw) }},
		{"replace", func() error {
			return w.Replace(&State{FormatVersion: StateFormatVersion, Lineage: "l", Lab: "lab", Scenario: "s",
				Resources: []ResourceState{{Addr: sw, Status: StatusReady, Attrs: provider.Attrs{"a": "1"}}, {Addr: host, Status: StatusReady}}})
		}},
		{"record after replace", func() error { return w.Record(ResourceState{Addr: nic, Status: StatusCreating}) }},
		{"change the replaced switch", func() error {
			return w.Record(ResourceState{Addr: sw, Status: StatusReady, Attrs: provider.Attrs{"a": "2"}})
		}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		check(s.name)
		if r := w.Lookup(sw); (r == nil) != (w.st.Resource(sw) == nil) {
			t.Errorf("%s: Lookup(%s) = %v, the state holds %v", s.name, sw, r, w.st.Resource(sw))
		}
	}
}

// TestStateWriterNotes: Note and NoteForget write nothing; the next
// waiting write carries them, and Close writes what is left.
func TestStateWriterNotes(t *testing.T) {
	dir := t.TempDir()
	w := newStateWriter(dir, &State{FormatVersion: StateFormatVersion, Lineage: "l", Lab: "lab"})
	host := provider.Addr{Kind: provider.KindHost, Name: "h"}
	nic := provider.Addr{Kind: provider.KindNIC, Name: "n"}
	onDisk := func() []provider.Addr {
		t.Helper()
		st, err := ReadState(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []provider.Addr
		if st != nil {
			for _, r := range st.Resources {
				out = append(out, r.Addr)
			}
		}
		return out
	}
	if err := w.RecordAll([]ResourceState{{Addr: host, Status: StatusCreating}, {Addr: nic, Status: StatusCreating}}); err != nil {
		t.Fatal(err)
	}
	w.Note(ResourceState{Addr: host, Status: StatusReady})
	w.NoteForget(nic)
	if got := onDisk(); len(got) != 2 {
		t.Errorf("after the notes the state file holds %v, want both records as RecordAll wrote them", got)
	}
	if _, writes, err := w.Close(); err != nil || writes != 2 {
		t.Errorf("Close: %d writes, %v; want 2 (RecordAll and Close's), nil", writes, err)
	}
	st, err := ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Resources) != 1 || st.Resources[0].Addr != host || st.Resources[0].Status != StatusReady {
		t.Errorf("after Close the state holds %+v, want only %s ready", st.Resources, host)
	}
}
