package netnsfs_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
)

// mountinfo returns the mounts of the calling process's mount namespace
// whose mount point is path (when under is set: is in the directory
// path), each as its line of /proc/self/mountinfo.
func mountinfo(t *testing.T, path string, under bool) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		if !under && f[4] == path || under && strings.HasPrefix(f[4], path+"/") {
			out = append(out, line)
		}
	}
	return out
}

// TestLaterIPNetnsAddHidesNothing: a namespace tsolab binds while
// netnsfs.Dir is a plain directory on a private mount, then `ip netns
// add` of another name (which binds Dir over itself when it is no mount
// point), and both are still removed through their names, leaving no
// nsfs mount hidden under Dir.
func TestLaterIPNetnsAddHidesNothing(t *testing.T) {
	if !netnstest.InPrivateMounts(t) {
		return
	}
	ours, theirs := "tsltest.ours", "tsltest.theirs"
	t.Cleanup(func() { netnsfs.Remove(ours); netnsfs.Remove(theirs) })
	if _, err := netnsfs.Create(ours); err != nil {
		t.Fatal(err)
	}
	netnstest.HideUnderIPNetnsAdd(t, theirs)
	for _, n := range []string{ours, theirs} {
		if err := netnsfs.Remove(n); err != nil {
			t.Errorf("Remove(%s) after `ip netns add %s`: %v", n, theirs, err)
		}
	}
	if left, _ := netnsfs.List("tsltest."); len(left) > 0 {
		t.Errorf("listed after Remove: %v", left)
	}
	if m := mountinfo(t, netnsfs.Dir, true); len(m) > 0 {
		t.Errorf("mounts left under %s:\n%s", netnsfs.Dir, strings.Join(m, "\n"))
	}
}

// TestDirBecomesASharedMountOnce: the first namespace bound makes
// netnsfs.Dir a shared mount of itself, as `ip netns add` does; later
// ones add no mount over it.
func TestDirBecomesASharedMountOnce(t *testing.T) {
	if !netnstest.InPrivateMounts(t) {
		return
	}
	names := []string{"tsltest.s1", "tsltest.s2"}
	for _, n := range names {
		t.Cleanup(func() { netnsfs.Remove(n) })
		if _, err := netnsfs.Create(n); err != nil {
			t.Fatal(err)
		}
		m := mountinfo(t, netnsfs.Dir, false)
		if len(m) != 1 || !strings.Contains(m[0], " shared:") {
			t.Errorf("after Create(%s): mounts at %s:\n%s\nwant one, shared", n, netnsfs.Dir, strings.Join(m, "\n"))
		}
	}
}

// TestHiddenNamespaceIsNamed: namespaces bound in netnsfs.Dir while it
// is a plain directory (one bound by hand, then one by netnsfs, which
// leaves Dir as it is rather than bind over the first and hide it) are
// hidden by a later `ip netns add`; Remove then fails with a
// *HiddenError saying what to run, Create of the name refuses to bind
// another over it, and once Dir is uncovered (the fix it names) Remove
// works.
func TestHiddenNamespaceIsNamed(t *testing.T) {
	if !netnstest.InPrivateMounts(t) {
		return
	}
	old, ours, theirs := "tsltest.old", "tsltest.ours", "tsltest.theirs"
	t.Cleanup(func() {
		unix.Unmount(netnsfs.Dir, unix.MNT_DETACH)
		for _, n := range []string{old, ours, theirs} {
			netnsfs.Remove(n)
		}
	})
	netnstest.BindByHand(t, old)
	if _, err := netnsfs.Create(ours); err != nil {
		t.Fatal(err)
	}
	if m := mountinfo(t, netnsfs.Dir, false); len(m) > 0 {
		t.Errorf("Create bound over %s with a namespace in it already:\n%s", netnsfs.Dir, strings.Join(m, "\n"))
	}
	for _, n := range []string{old, ours} {
		if h, err := netnsfs.Hidden(n); h != nil || err != nil {
			t.Errorf("before `ip netns add`: Hidden(%s) = %v, %v; want nil, nil", n, h, err)
		}
	}
	netnstest.HideUnderIPNetnsAdd(t, theirs)
	for _, n := range []string{old, ours} {
		err := netnsfs.Remove(n)
		var h *netnsfs.HiddenError
		if !errors.As(err, &h) || h.Name != n || !strings.Contains(err.Error(), "umount "+netnsfs.Dir) {
			t.Errorf("Remove(%s) under the later bind: %v, want a *HiddenError naming it and the umount", n, err)
		}
		if h, err := netnsfs.Hidden(n); h == nil || h.Name != n {
			t.Errorf("Hidden(%s) under the later bind: %v, %v; want its HiddenError", n, h, err)
		}
		if _, err := netnsfs.Create(n); !errors.As(err, &h) {
			t.Errorf("Create(%s) over the hidden one: %v, want a *HiddenError", n, err)
		}
	}
	if err := unix.Unmount(netnsfs.Dir, unix.MNT_DETACH); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{old, ours} {
		if err := netnsfs.Remove(n); err != nil {
			t.Errorf("Remove(%s) once %s is uncovered: %v", n, netnsfs.Dir, err)
		}
	}
}
