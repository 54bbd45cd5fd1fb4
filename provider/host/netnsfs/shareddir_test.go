package netnsfs_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
)

// privateMountsEnv tells a test process that it is the child
// inPrivateMounts started, in a mount namespace of its own.
const privateMountsEnv = "TSOLAB_NETNSFS_PRIVATE_MOUNTS"

// inPrivateMounts runs the test t again in a child process that has a
// mount namespace of its own (Go's Unshareflags makes every mount in it
// private) with the machine's netnsfs.Dir unmounted there (the copies
// of its mounts; the machine's own are untouched) and a new tmpfs on
// /run, so that Dir is a plain directory on a private mount, as on a
// fresh image where / is private, and nothing the test mounts or binds
// is seen outside. It returns true
// in the child, where the test goes on; in the parent it returns false
// once the child has ended, its output logged and its failure t's.
func inPrivateMounts(t *testing.T) bool {
	t.Helper()
	if os.Getenv(privateMountsEnv) == "1" {
		for range 8 {
			if unix.Unmount(netnsfs.Dir, unix.MNT_DETACH) != nil {
				break // EINVAL: no mount (left) at Dir
			}
		}
		if err := unix.Mount("tsolab-test", "/run", "tmpfs", 0, "mode=0755"); err != nil {
			t.Fatalf("mount a tmpfs on /run: %v", err)
		}
		if err := os.Mkdir(netnsfs.Dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return true
	}
	netnstest.Require(t)
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), privateMountsEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	t.Logf("the test in a mount namespace of its own:\n%s", out)
	if err != nil {
		t.Fatalf("in a mount namespace of its own: %v", err)
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Skip("skipped in the child")
	}
	return false
}

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
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip: " + err.Error())
	}
	if !inPrivateMounts(t) {
		return
	}
	ours, theirs := "tsltest.ours", "tsltest.theirs"
	t.Cleanup(func() { netnsfs.Remove(ours); netnsfs.Remove(theirs) })
	if _, err := netnsfs.Create(ours); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ip", "netns", "add", theirs).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v\n%s", theirs, err, out)
	}
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
	if !inPrivateMounts(t) {
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

// bindByHand binds a new namespace at netnsfs.Path(name) as tools that
// do not make netnsfs.Dir a mount point do (vishvananda/netns, tsolab
// before it did): a file, and the namespace bound on it.
func bindByHand(t *testing.T, name string) {
	t.Helper()
	p := netnsfs.Path(name)
	if err := os.WriteFile(p, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	err := netnsfs.Scratch(func() error {
		return unix.Mount("/proc/thread-self/ns/net", p, "none", unix.MS_BIND, "")
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHiddenNamespaceIsNamed: namespaces bound in netnsfs.Dir while it
// is a plain directory (one bound by hand, then one by netnsfs, which
// leaves Dir as it is rather than bind over the first and hide it) are
// hidden by a later `ip netns add`; Remove then fails with a
// *HiddenError saying what to run, and once Dir is uncovered (the fix it
// names) Remove works.
func TestHiddenNamespaceIsNamed(t *testing.T) {
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip: " + err.Error())
	}
	if !inPrivateMounts(t) {
		return
	}
	old, ours, theirs := "tsltest.old", "tsltest.ours", "tsltest.theirs"
	t.Cleanup(func() {
		unix.Unmount(netnsfs.Dir, unix.MNT_DETACH)
		for _, n := range []string{old, ours, theirs} {
			netnsfs.Remove(n)
		}
	})
	bindByHand(t, old)
	if _, err := netnsfs.Create(ours); err != nil {
		t.Fatal(err)
	}
	if m := mountinfo(t, netnsfs.Dir, false); len(m) > 0 {
		t.Errorf("Create bound over %s with a namespace in it already:\n%s", netnsfs.Dir, strings.Join(m, "\n"))
	}
	for _, n := range []string{old, ours} {
		if err := netnsfs.Hidden(n); err != nil {
			t.Errorf("before `ip netns add`: Hidden(%s) = %v, want nil", n, err)
		}
	}
	if out, err := exec.Command("ip", "netns", "add", theirs).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v\n%s", theirs, err, out)
	}
	for _, n := range []string{old, ours} {
		err := netnsfs.Remove(n)
		var h *netnsfs.HiddenError
		if !errors.As(err, &h) || h.Name != n || !strings.Contains(err.Error(), "umount "+netnsfs.Dir) {
			t.Errorf("Remove(%s) under the later bind: %v, want a *HiddenError naming it and the umount", n, err)
		}
		if err := netnsfs.Hidden(n); err == nil {
			t.Errorf("Hidden(%s) under the later bind: nil", n)
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
