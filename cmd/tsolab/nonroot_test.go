package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
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
			// The fix names the command that needs root, test's included
			// (it once spoke of plan and apply only).
			fix := strings.Join(strings.Fields(errs), " ")
			if code != exitError || out != "" || !strings.HasPrefix(errs, c.want) || strings.Count(fix, nic.NeedsRoot) != 1 || !strings.Contains(fix, "kernel engine (tsolab run and test)") || strings.Contains(errs, "restore") {
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

// sudoRig runs tsolab through the real sudo as nobody, by a NOPASSWD
// rule for the rig's binary that it writes to /etc/sudoers.d and removes
// at the end. Its home (nobody's) holds the labs and the outputs.
type sudoRig struct {
	*nonRootRig
	home string
}

func newSudoRig(t *testing.T) *sudoRig {
	t.Helper()
	r := newNonRootRig(t)
	if r.cred == nil {
		t.Skip("needs root: runs tsolab through sudo as nobody, by a sudoers rule it writes")
	}
	if _, err := exec.LookPath("sudo"); err != nil {
		if os.Getenv("TSOLAB_REQUIRE_NETNS") == "1" {
			t.Fatal("TSOLAB_REQUIRE_NETNS=1 but sudo is not installed (apt-get install sudo; .ci/run does)")
		}
		t.Skip("sudo is not installed (apt-get install sudo)")
	}
	rule := filepath.Join("/etc/sudoers.d", fmt.Sprintf("tsolab-test-%d", os.Getpid()))
	if err := os.WriteFile(rule, []byte("nobody ALL=(root) NOPASSWD: "+r.bin+"\n"), 0o440); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(rule) })
	if out, err := exec.Command("visudo", "-cf", rule).CombinedOutput(); err != nil {
		t.Fatalf("the sudoers rule in %s: %v: %s", rule, err, out)
	}
	return &sudoRig{nonRootRig: r, home: filepath.Join(r.dir, "home")}
}

// lab copies the example NAME into the home, nobody's.
func (r *sudoRig) lab(name string) string {
	dst := filepath.Join(r.home, "labs", name)
	copyDir(r.t, filepath.Join("..", "..", "examples", name), dst)
	r.giveAll(filepath.Join(r.home, "labs"))
	return dst
}

// giveAll gives dir and everything under it to nobody.
func (r *sudoRig) giveAll(dir string) {
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, nobody, nobody)
	})
	if err != nil {
		r.t.Fatal(err)
	}
}

// sudo runs `sudo -n tsolab ARGS` as nobody in the home; it fails the
// test unless tsolab exits 0 or 3 (an expectation failed: the outputs
// are written all the same).
func (r *sudoRig) sudo(args ...string) {
	r.t.Helper()
	out, errs, code := r.run(append([]string{"--", r.bin}, args...)...)
	if code != exitOK && code != exitFailed {
		r.t.Fatalf("sudo tsolab %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errs)
	}
}

// run runs sudo -n ARGS as nobody.
func (r *sudoRig) run(args ...string) (stdout, stderr string, code int) {
	bin := r.bin
	r.bin = "sudo"
	defer func() { r.bin = bin }()
	return r.nonRootRig.run(append([]string{"-n"}, args...)...)
}

// owners fails the test for every path whose owner is not uid.
func (r *sudoRig) owners(uid int, paths ...string) {
	r.t.Helper()
	for _, p := range paths {
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			r.t.Errorf("%s: %v", p, err)
		} else if int(st.Uid) != uid || int(st.Gid) != uid {
			r.t.Errorf("%s: owner %d:%d, want %d:%d", p, st.Uid, st.Gid, uid, uid)
		}
	}
}

// TestOutputsGoToSudoUser: under the real sudo, in directories the
// invoking user owns, the files tsolab writes (-json, -junit, -report,
// -summary, fmt's rewrite, and on the kernel engine plan -out and
// -capture's directories and files) are that user's; in a directory
// root owns they stay root's (package sudouser's rule).
func TestOutputsGoToSudoUser(t *testing.T) {
	r := newSudoRig(t)
	lab := r.lab("neterion-2005")
	out := filepath.Join(r.home, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	r.giveAll(out)
	mine := []string{filepath.Join(out, "r.json"), filepath.Join(out, "j.xml"), filepath.Join(out, "r.html"), filepath.Join(out, "s.md")}
	roots := filepath.Join(r.dir, "root.json") // r.dir is root's
	r.sudo("test", "-engine", "sim", "-no-color", "-json", mine[0], "-junit", mine[1], "-report", mine[2], "-summary", mine[3], lab)
	r.sudo("test", "-engine", "sim", "-no-color", "-json", roots, lab)
	r.owners(nobody, mine...)
	r.owners(0, roots)

	hclFile := filepath.Join(lab, "unformatted.tsolab.hcl")
	if err := os.WriteFile(hclFile, []byte("variable \"x\" {\ndefault=1\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.giveAll(hclFile)
	r.sudo("fmt", lab)
	r.owners(nobody, hclFile)

	t.Run("kernel", func(t *testing.T) {
		r.t = t
		if !canNetAdmin() {
			t.Skip("needs CAP_NET_ADMIN: plan and the kernel engine make network namespaces")
		}
		lab := r.lab("tso-basics")
		name := fmt.Sprintf("sudo%d", os.Getpid())
		t.Cleanup(func() { exec.Command(r.bin, "destroy", "-auto-approve", "-name", name, lab).Run() })
		planFile := filepath.Join(out, "p.plan")
		r.sudo("plan", "-no-color", "-name", name, "-out", planFile, lab)
		caps := filepath.Join(out, "caps")
		r.sudo("test", "-no-color", "-name", name, "-scenario", "tso=true,mtu=1500", "-repeat", "1", "-capture", caps, lab)
		made := []string{planFile}
		filepath.WalkDir(caps, func(p string, _ fs.DirEntry, err error) error {
			made = append(made, p)
			return err
		})
		if len(made) < 5 { // caps, its scenario, a workload, two NICs' files
			t.Errorf("-capture %s holds %d paths, want at least 4: %q", caps, len(made)-1, made[1:])
		}
		r.owners(nobody, made...)
	})
}
