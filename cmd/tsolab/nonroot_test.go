package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/provider/nic"
)

// nobody is the user the tests run tsolab as when they run as root.
const nobody = 65534

// nonRootRig runs the tsolab command (this test binary under the name
// tsolab, as testscript.Main runs it) as a user without root: nobody
// when the tests run as root, as CI does, else the current user. The
// binary, the labs, HOME and TMPDIR live in a directory that user can
// read, and HOME and TMPDIR it can write.
type nonRootRig struct {
	t    *testing.T
	dir  string
	bin  string
	cred *syscall.Credential // nil: run as the current user
}

func newNonRootRig(t *testing.T) *nonRootRig {
	t.Helper()
	dir, err := os.MkdirTemp("", "tsolab-nonroot")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // MkdirTemp makes it 0700
		t.Fatal(err)
	}
	r := &nonRootRig{t: t, dir: dir, bin: filepath.Join(dir, "bin", "tsolab")}
	if os.Geteuid() == 0 {
		r.cred = &syscall.Credential{Uid: nobody, Gid: nobody}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(r.bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if r.cred != nil {
		if err := os.Chown(home, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// lab copies the example NAME where the user can read it.
func (r *nonRootRig) lab(name string) string {
	dst := filepath.Join(r.dir, "labs", name)
	copyDir(r.t, filepath.Join("..", "..", "examples", name), dst)
	return dst
}

// run runs tsolab ARGS as the rig's user: its stdout, stderr and exit code.
func (r *nonRootRig) run(args ...string) (stdout, stderr string, code int) {
	r.t.Helper()
	home := filepath.Join(r.dir, "home")
	cmd := exec.Command(r.bin, args...)
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "TMPDIR=" + home, "PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		r.t.Fatalf("tsolab %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), code
}

// TestWithoutRoot runs what the README promises needs no root as a user
// without it (nobody, when the tests run as root): validate and the sim
// engine's test of examples/neterion-2005 pass, and a kernel-engine test,
// a plan and an apply fail first, before any plan, saying once that they
// need root and what does not.
func TestWithoutRoot(t *testing.T) {
	r := newNonRootRig(t)
	lab := r.lab("neterion-2005")
	if out, errs, code := r.run("validate", lab); code != exitOK || !strings.Contains(out, `Success! The lab "neterion-2005" is valid`) {
		t.Errorf("tsolab validate as uid %d: exit %d, want 0 and Success!\nstdout:\n%s\nstderr:\n%s", r.uid(), code, out, errs)
	}
	out, errs, code := r.run("test", "-engine", "sim", "-no-color", lab)
	if code != exitOK || !strings.Contains(out, "\nExpectations: 6 passed, 0 failed, 0 inconclusive, 0 errors.\n") {
		t.Errorf("tsolab test -engine sim as uid %d: exit %d, want 0 and 6 passed\nstdout:\n%s\nstderr:\n%s", r.uid(), code, out, errs)
	}

	t.Run("kernel", func(t *testing.T) {
		if r.cred == nil {
			if err := netnsfs.Scratch(func() error { return nil }); !errors.Is(err, unix.EPERM) {
				t.Skipf("this user (uid %d) may make a network namespace (%v): the kernel engine needs no root here", os.Geteuid(), err)
			}
		}
		lab := r.lab("tso-basics")
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"test", "-no-color", lab}, "Error: tsolab test on the kernel engine makes network namespaces on this machine, which the kernel refuses this user (operation not permitted)\n\n"},
			// plan and apply once showed the whole plan, then the refusal
			// once per NIC, each with "restore thread namespace: operation
			// not permitted" that told nothing new.
			{[]string{"plan", "-no-color", lab}, "Error: tsolab plan probes the kernel in a scratch network namespace on this machine, which the kernel refuses this user (operation not permitted)\n\n"},
			{[]string{"apply", "-no-color", lab}, "Error: tsolab apply probes the kernel in a scratch network namespace on this machine, which the kernel refuses this user (operation not permitted)\n\n"},
		} {
			out, errs, code := r.run(c.args...)
			if code != exitError || out != "" || !strings.HasPrefix(errs, c.want) || strings.Count(strings.Join(strings.Fields(errs), " "), nic.NeedsRoot) != 1 || strings.Contains(errs, "restore") {
				t.Errorf("tsolab %s of a kernel lab as uid %d: exit %d, want 1, nothing on stdout (no plan), and on stderr first %q, then %q once\nstdout:\n%s\nstderr:\n%s",
					c.args[0], r.uid(), code, c.want, nic.NeedsRoot, out, errs)
			}
		}
	})
}

// uid is the user the rig runs tsolab as.
func (r *nonRootRig) uid() int {
	if r.cred != nil {
		return int(r.cred.Uid)
	}
	return os.Geteuid()
}

// TestStateOfRoot: after sudo tsolab apply, the state is root's (0600),
// and the same user without sudo runs tsolab show or destroy: the error
// names the file and the fix (sudo), not only "permission denied".
func TestStateOfRoot(t *testing.T) {
	r := newNonRootRig(t)
	if r.cred == nil {
		t.Skip("needs root: a state file the user running the tests cannot read is made by root")
	}
	lab := r.lab("tso-basics")
	path := planner.StatePath(lab)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"show", "destroy"} {
		_, errs, code := r.run(cmd, "-no-color", lab)
		want := path + " cannot be read: permission denied. root owns it (tsolab apply ran under sudo): run this command with sudo too."
		if code != exitError || !strings.Contains(strings.Join(strings.Fields(errs), " "), want) {
			t.Errorf("tsolab %s of a root-owned state as uid %d: exit %d, want 1 and %q\nstderr:\n%s", cmd, r.uid(), code, want, errs)
		}
	}
}
