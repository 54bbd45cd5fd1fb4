package netnsfs_test

import (
	"errors"
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
)

func inode(path string) (uint64, error) {
	var st unix.Stat_t
	err := unix.Stat(path, &st)
	return st.Ino, err
}

func TestCreateDoRemove(t *testing.T) {
	netnstest.Require(t)
	prefix := "tsltest." + netnstest.LabID(t) + "."
	netnstest.CheckNoLeftovers(t, prefix)
	name := prefix + "a"
	t.Cleanup(func() { netnsfs.Remove(name) })

	steps := []struct {
		what        string
		do          func() (bool, error)
		wantCreated bool
		wantExists  bool
	}{
		{"create", func() (bool, error) { return netnsfs.Create(name) }, true, true},
		{"create again", func() (bool, error) { return netnsfs.Create(name) }, false, true},
		{"remove", func() (bool, error) { return false, netnsfs.Remove(name) }, false, false},
		{"remove again", func() (bool, error) { return false, netnsfs.Remove(name) }, false, false},
	}
	for _, st := range steps {
		created, err := st.do()
		if err != nil {
			t.Fatalf("%s: %v", st.what, err)
		}
		if created != st.wantCreated {
			t.Errorf("%s: created = %v, want %v", st.what, created, st.wantCreated)
		}
		if ok, err := netnsfs.Exists(name); ok != st.wantExists || err != nil {
			t.Errorf("%s: Exists = %v, %v; want %v", st.what, ok, err, st.wantExists)
		}
	}
}

// TestCreateCompletesLeftFile: an empty file where the mount should be
// (a Create killed before bind-mounting) is completed, not refused.
func TestCreateCompletesLeftFile(t *testing.T) {
	netnstest.Require(t)
	prefix := "tsltest." + netnstest.LabID(t) + "."
	netnstest.CheckNoLeftovers(t, prefix)
	name := prefix + "half"
	t.Cleanup(func() { netnsfs.Remove(name) })
	if err := os.WriteFile(netnsfs.Path(name), nil, 0o444); err != nil {
		t.Fatal(err)
	}
	if ok, _ := netnsfs.Exists(name); ok {
		t.Fatal("an empty file counts as a namespace")
	}
	created, err := netnsfs.Create(name)
	if err != nil || !created {
		t.Fatalf("Create over a left file: created=%v err=%v, want true, nil", created, err)
	}
	if ok, _ := netnsfs.Exists(name); !ok {
		t.Error("namespace missing after Create")
	}
}

func TestDoRunsInsideAndComesBack(t *testing.T) {
	netnstest.Require(t)
	prefix := "tsltest." + netnstest.LabID(t) + "."
	netnstest.CheckNoLeftovers(t, prefix)
	name := prefix + "in"
	t.Cleanup(func() { netnsfs.Remove(name) })
	if _, err := netnsfs.Create(name); err != nil {
		t.Fatal(err)
	}
	want, err := inode(netnsfs.Path(name))
	if err != nil {
		t.Fatal(err)
	}
	home, err := inode("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	var got uint64
	err = netnsfs.Do(name, func() error {
		got, err = inode("/proc/thread-self/ns/net")
		return err
	})
	if err != nil || got != want {
		t.Errorf("inside Do: namespace inode %d (err %v), want %d", got, err, want)
	}
	// A failing function's error comes back, and so does a Goexit.
	errBoom := errors.New("boom")
	if err := netnsfs.Do(name, func() error { return errBoom }); !errors.Is(err, errBoom) {
		t.Errorf("Do error = %v, want %v", err, errBoom)
	}
	// No thread of this process is left in the namespace.
	for range 20 {
		netnsfs.Do(name, func() error { return nil })
	}
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		if ino, err := inode("/proc/self/task/" + task.Name() + "/ns/net"); err == nil && ino != home {
			t.Errorf("thread %s is in namespace %d, want %d", task.Name(), ino, home)
		}
	}
	// Last, as its thread is discarded (on the main thread the runtime
	// parks it for good rather than ending it): a Goexit does not hang Do.
	if err := netnsfs.Do(name, func() error { runtime.Goexit(); return nil }); err == nil {
		t.Error("Do with runtime.Goexit: nil error, want one")
	}
}

func TestNamesThatEscapeAreRefused(t *testing.T) {
	for _, name := range []string{"", ".", "..", "a/b", "../etc"} {
		if _, err := netnsfs.Create(name); err == nil {
			t.Errorf("Create(%q): nil error, want a refusal", name)
		}
		if err := netnsfs.Remove(name); err == nil {
			t.Errorf("Remove(%q): nil error, want a refusal", name)
		}
	}
}
