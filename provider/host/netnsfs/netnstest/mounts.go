package netnstest

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/provider/host/netnsfs"
)

// privateMountsEnv tells a test process that it is the child
// InPrivateMounts started, in a mount namespace of its own.
const privateMountsEnv = "TSOLAB_NETNSTEST_PRIVATE_MOUNTS"

// InPrivateMounts runs the top-level test t again in a child process
// that has a mount namespace of its own (Go's Unshareflags makes every
// mount in it private), with the machine's netnsfs.Dir unmounted there
// (the copies of its mounts; the machine's own are untouched) and a new
// tmpfs on /run, so that Dir is a plain directory on a private mount, as
// on a fresh image whose / is private, and nothing the test binds or
// mounts is seen outside: its namespaces go when the child ends. It
// returns true in the child, where the test goes on; in the parent it
// returns false once the child has ended, its output logged, its failure
// t's and its skip t's.
func InPrivateMounts(t *testing.T) bool {
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
	Require(t)
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

// BindByHand binds a new namespace at netnsfs.Path(name) as tools that
// leave netnsfs.Dir as it is do (vishvananda/netns; tsolab before it
// made Dir a mount point): a file, and the namespace bound on it.
func BindByHand(t testing.TB, name string) {
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

// HideUnderIPNetnsAdd runs `ip netns add name`, which binds netnsfs.Dir
// over itself when it is no mount point (hiding, where / is private, the
// namespaces bound in it before): for tests in InPrivateMounts. It skips
// t where there is no ip.
func HideUnderIPNetnsAdd(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip: " + err.Error())
	}
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v\n%s", name, err, out)
	}
}
