package remote

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestRemoveOrphanedCaptureDirs: of the capture directories in a
// temporary directory, only those marked by an agent of this pid
// namespace that no longer runs are removed; a live agent's, an
// unmarked one, one marked in another pid namespace, one with a marker
// that does not parse and a marked directory of another name stay.
func TestRemoveOrphanedCaptureDirs(t *testing.T) {
	me, err := selfOwner()
	if err != nil {
		t.Fatal(err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	deadPid := gone.Process.Pid
	if _, err := processStart(deadPid); err == nil {
		t.Skipf("pid %d of an ended process was taken again", deadPid)
	}
	tmp := t.TempDir()
	dirs := []struct {
		name   string
		marker string // "" for none
		stays  bool
	}{
		{"tsolab-capture-dead", owner{pid: deadPid, start: "12345", pidNS: me.pidNS}.String(), false},
		{"tsolab-capture-reused", owner{pid: me.pid, start: me.start + "0", pidNS: me.pidNS}.String(), false},
		{"tsolab-capture-live", me.String(), true},
		{"tsolab-capture-unmarked", "", true},
		{"tsolab-capture-otherns", owner{pid: deadPid, start: "12345", pidNS: "pid:[1]"}.String(), true},
		{"tsolab-capture-garbled", "pid 1\n", true},
		{"other-dead", owner{pid: deadPid, start: "12345", pidNS: me.pidNS}.String(), true},
	}
	var want []string
	for _, d := range dirs {
		dir := filepath.Join(tmp, d.name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "1.pcapng"), []byte("capture"), 0o600); err != nil {
			t.Fatal(err)
		}
		if d.marker != "" {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(d.marker), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if !d.stays {
			want = append(want, dir)
		}
	}
	removed, err := removeOrphanedCaptureDirs(tmp)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	slices.Sort(want)
	if !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	for _, d := range dirs {
		_, err := os.Stat(filepath.Join(tmp, d.name))
		if exists := err == nil; exists != d.stays {
			t.Errorf("%s: exists %v, want %v", d.name, exists, d.stays)
		}
	}
}

// TestCaptureDirMarked: the directory an agent makes for a run's capture
// files carries its marker, which names this process and parses back.
func TestCaptureDirMarked(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir, err := makeCaptureDir()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		t.Fatal(err)
	}
	me, _ := selfOwner()
	if o, ok := parseOwner(string(b)); !ok || o != me {
		t.Errorf("marker %q parses to %+v (%v), want %+v", b, o, ok, me)
	}
	if removed, err := removeOrphanedCaptureDirs(os.TempDir()); err != nil || len(removed) != 0 {
		t.Errorf("a live agent's directory: removed %v (%v), want it kept", removed, err)
	}
}
