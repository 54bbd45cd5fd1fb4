package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
)

// crashLab is a lab of three hosts on a switch, with a scenario change
// (tso=false) that is one in-place update.
const crashLab = `lab %q {
  engine = "kernel"
}

matrix {
  tso = [true, false]
}

switch "sw" {}
host "tx" {}
host "rx1" {}
host "rx2" {}

nic "tx0" {
  host    = host.tx
  connect = switch.sw
  address = "10.77.9.1/24"
  offload = {
    tso = matrix.tso
  }
}

nic "rx10" {
  host    = host.rx1
  connect = switch.sw
  address = "10.77.9.2/24"
}

nic "rx20" {
  host    = host.rx2
  connect = switch.sw
  address = "10.77.9.3/24"
}
`

// crashRig runs tsolab as a child process (the test binary under the name
// tsolab, see TestMain) on labs of one name, next to bystanders: a
// namespace made by hand under the lab's prefix, and a veth pair from the
// machine's namespace into it. Nothing tsolab does may change them.
type crashRig struct {
	t         *testing.T
	bin       string
	lab       string
	bystander string    // the bystander namespace
	veth      [2]string // the bystander pair: in the machine's namespace, in the bystander namespace
	before    string    // the bystanders as made (snapshot)
}

func newCrashRig(t *testing.T) *crashRig {
	t.Helper()
	if !canNetAdmin() {
		if os.Getenv("TSOLAB_REQUIRE_NETNS") == "1" {
			t.Fatal("TSOLAB_REQUIRE_NETNS=1 but this process lacks CAP_NET_ADMIN: run the tests as root")
		}
		t.Skip("needs CAP_NET_ADMIN to create namespaces (run as root)")
	}
	bindir := t.TempDir()
	bin := filepath.Join(bindir, "tsolab")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, bin); err != nil {
		t.Fatal(err)
	}
	r := &crashRig{t: t, bin: bin, lab: fmt.Sprintf("crash%d", os.Getpid())}
	r.bystander = "tsl." + r.lab + ".bystander"
	r.veth = [2]string{fmt.Sprintf("tslby%da", os.Getpid()), fmt.Sprintf("tslby%db", os.Getpid())}
	t.Cleanup(func() {
		if l, err := netlink.LinkByName(r.veth[0]); err == nil {
			netlink.LinkDel(l)
		}
		netnsfs.Remove(r.bystander)
		left, _ := netnsfs.List("tsl." + r.lab + ".")
		for _, ns := range left {
			t.Errorf("left behind: namespace %s", ns)
			netnsfs.Remove(ns)
		}
	})
	if _, err := netnsfs.Create(r.bystander); err != nil {
		t.Fatal(err)
	}
	h, err := netnsfs.Open(r.bystander)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	a := netlink.NewLinkAttrs()
	a.Name = r.veth[0]
	if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: a, PeerName: r.veth[1], PeerTxQLen: -1, PeerNamespace: netlink.NsFd(int(h))}); err != nil {
		t.Fatal(err)
	}
	r.before = r.snapshot()
	return r
}

// labDir writes a copy of the lab in a new directory.
func (r *crashRig) labDir() string {
	dir := filepath.Join(r.t.TempDir(), "lab")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lab.tsolab.hcl"), fmt.Appendf(nil, crashLab, r.lab), 0o644); err != nil {
		r.t.Fatal(err)
	}
	return dir
}

// snapshot describes the bystanders: the namespace's identity and links,
// and every attribute of the pair a tsolab command could change.
func (r *crashRig) snapshot() string {
	var b strings.Builder
	var st syscall.Stat_t
	if err := syscall.Stat(netnsfs.Path(r.bystander), &st); err != nil {
		return "bystander namespace: " + err.Error()
	}
	fmt.Fprintf(&b, "namespace %s inode %d\n", r.bystander, st.Ino)
	describe := func(l netlink.Link) {
		a := l.Attrs()
		fmt.Fprintf(&b, "  %s index %d type %s mtu %d flags %v mac %s alias %q master %d\n",
			a.Name, a.Index, l.Type(), a.MTU, a.Flags, a.HardwareAddr, a.Alias, a.MasterIndex)
	}
	if l, err := netlink.LinkByName(r.veth[0]); err != nil {
		fmt.Fprintf(&b, "  %s: %v\n", r.veth[0], err)
	} else {
		describe(l)
	}
	h, err := netnsfs.Netlink(r.bystander)
	if err != nil {
		return b.String() + err.Error()
	}
	defer h.Close()
	links, err := h.LinkList()
	if err != nil {
		return b.String() + err.Error()
	}
	sort.Slice(links, func(i, j int) bool { return links[i].Attrs().Index < links[j].Attrs().Index })
	for _, l := range links {
		describe(l)
	}
	return b.String()
}

// run runs tsolab with args, killing itself at kill point kill (0: never).
// It returns the output and the exit code, or killed when the process
// died of SIGKILL.
func (r *crashRig) run(kill int, args ...string) (out string, code int, killed bool) {
	cmd := exec.Command(r.bin, args...)
	cmd.Env = os.Environ()
	if kill > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", killAfterOpsEnv, kill))
	}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return buf.String(), 0, false
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return buf.String(), -1, true
		}
		return buf.String(), exit.ExitCode(), false
	}
	r.t.Fatalf("tsolab %s: %v", strings.Join(args, " "), err)
	return "", 0, false
}

// must runs tsolab with args and fails the test unless it exits with want.
func (r *crashRig) must(want int, args ...string) string {
	r.t.Helper()
	out, code, killed := r.run(0, args...)
	if killed || code != want {
		r.t.Errorf("tsolab %s: exit %d (killed %v), want %d\n%s", strings.Join(args, " "), code, killed, want, out)
	}
	return out
}

// converge is what must hold after any crash: one more apply (with
// scenario args), then plan -detailed-exitcode says no changes, then
// destroy leaves no namespace, link or namespace file of the lab, and the
// bystanders as they were.
func (r *crashRig) converge(dir string, scenario ...string) {
	r.t.Helper()
	r.must(exitOK, append(append([]string{"apply", "-auto-approve"}, scenario...), dir)...)
	r.must(exitOK, append(append([]string{"plan", "-detailed-exitcode"}, scenario...), dir)...)
	r.must(exitOK, "destroy", "-auto-approve", dir)
	r.checkClean(dir)
}

// checkClean checks that nothing of the lab is left but the bystanders,
// unchanged, and that the lab's state records nothing.
func (r *crashRig) checkClean(dirs ...string) {
	r.t.Helper()
	left, err := netnsfs.List("tsl." + r.lab + ".")
	if err != nil {
		r.t.Error(err)
	}
	if len(left) != 1 || left[0] != r.bystander {
		r.t.Errorf("namespace files in %s: %v, want only the bystander %s", netnsfs.Dir, left, r.bystander)
	}
	if out, err := exec.Command("ip", "netns", "list").CombinedOutput(); err != nil {
		r.t.Errorf("ip netns list: %v: %s", err, out)
	}
	links, err := netlink.LinkList()
	if err != nil {
		r.t.Error(err)
	}
	for _, l := range links {
		if strings.HasPrefix(l.Attrs().Alias, "tsolab:"+r.lab+":") {
			r.t.Errorf("link %s of the lab left in the machine's namespace", l.Attrs().Name)
		}
	}
	for _, dir := range dirs {
		if st, err := planner.ReadState(dir); err != nil || st != nil && len(st.Resources) > 0 {
			r.t.Errorf("state of %s after destroy: %v, %+v", dir, err, st)
		}
	}
	if now := r.snapshot(); now != r.before {
		r.t.Errorf("bystanders changed:\nbefore:\n%s\nnow:\n%s", r.before, now)
	}
}

// TestCrashes kills tsolab (SIGKILL, from the process itself: see
// killAfterOpsEnv) at every kill point of an apply, of an in-place update
// (a scenario change) and of a destroy of a real lab of three hosts on a
// switch, in turn, until the command completes; after each kill, the lab
// must converge (crashRig.converge) and the bystanders stay as they were.
func TestCrashes(t *testing.T) {
	r := newCrashRig(t)
	defer lockMachine(t)()
	dir := r.labDir()
	update := []string{"-scenario", "tso=false"}
	phases := []struct {
		name    string
		prepare []string // the lab this command starts from
		cmd     []string
		recover []string // the scenario of the apply after the kill
	}{
		{"apply", nil, []string{"apply", "-auto-approve"}, nil},
		{"update", []string{"apply", "-auto-approve"}, append([]string{"apply", "-auto-approve"}, update...), update},
		{"destroy", []string{"apply", "-auto-approve"}, []string{"destroy", "-auto-approve"}, nil},
	}
	start := time.Now()
	total := 0
	for _, ph := range phases {
		n := 1
		for ; ; n++ {
			if n > 200 {
				t.Fatalf("%s: still killed at kill point %d: the command never completes", ph.name, n)
			}
			if ph.prepare != nil {
				r.must(exitOK, append(ph.prepare, dir)...)
			}
			out, code, killed := r.run(n, append(ph.cmd, dir)...)
			if !killed {
				if code != exitOK {
					t.Fatalf("%s with kill point %d (never reached): exit %d\n%s", ph.name, n, code, out)
				}
				if ph.prepare == nil || ph.name == "update" {
					r.must(exitOK, "destroy", "-auto-approve", dir)
				}
				r.checkClean(dir)
				break
			}
			r.converge(dir, ph.recover...)
			if t.Failed() {
				t.Fatalf("%s killed at kill point %d did not converge", ph.name, n)
			}
		}
		if n == 1 {
			t.Errorf("%s: no kill point: the hook counts nothing", ph.name)
		}
		t.Logf("%s: killed at each of its %d kill points in turn; each converged", ph.name, n-1)
		total += n - 1
	}
	t.Logf("covered %d kill points in %s", total, time.Since(start).Round(time.Second))
}

// TestCrashesTwoCopies starts applies of two copies of the lab (two
// directories, one lab name) at once, a few times: at most one gets the
// lab, the other stops with the error naming the other copy, and after
// both are destroyed the lab converges from either copy, bystanders
// untouched.
func TestCrashesTwoCopies(t *testing.T) {
	r := newCrashRig(t)
	defer lockMachine(t)()
	a, b := r.labDir(), r.labDir()
	for round := range 4 {
		type result struct {
			out  string
			code int
		}
		results := make(chan result, 2)
		for _, dir := range []string{a, b} {
			go func() {
				out, code, _ := r.run(0, "apply", "-auto-approve", dir)
				results <- result{out, code}
			}()
		}
		won := 0
		for range 2 {
			res := <-results
			switch {
			case res.code == exitOK:
				won++
			case !strings.Contains(res.out, "belongs to another copy of lab "+r.lab):
				t.Errorf("round %d: an apply failed for another reason than the other copy: exit %d\n%s", round, res.code, res.out)
			}
		}
		t.Logf("round %d: %d of the two applies completed", round, won)
		if won > 1 {
			t.Errorf("round %d: both copies' applies completed: they share the lab's namespaces", round)
		}
		r.must(exitOK, "destroy", "-auto-approve", a)
		r.must(exitOK, "destroy", "-auto-approve", b)
		r.checkClean(a, b)
		r.converge([]string{a, b}[round%2])
		if t.Failed() {
			t.Fatalf("round %d did not converge", round)
		}
	}
}

// TestCrashesLockHeld: while another process holds a lab's lock, an
// apply of the lab is refused, and one killed meanwhile (SIGKILL, at
// once, or at its first kill point) changes nothing: no namespace, no
// state, the holder's lock file as the holder wrote it. Once the lock is
// released the lab converges.
func TestCrashesLockHeld(t *testing.T) {
	r := newCrashRig(t)
	defer lockMachine(t)()
	dir := r.labDir()
	lock, err := planner.LockState(dir, r.lab)
	if err != nil {
		t.Fatal(err)
	}
	lockFile := filepath.Join(dir, planner.StateDir, "lock")
	held, err := os.ReadFile(lockFile)
	if err != nil {
		t.Fatal(err)
	}
	if out, code, killed := r.run(1, "apply", "-auto-approve", dir); killed || code != exitError || !strings.Contains(out, "another tsolab holds the lock") {
		t.Errorf("apply with the lock held: exit %d (killed %v), want refused\n%s", code, killed, out)
	}
	for range 5 {
		cmd := exec.Command(r.bin, "apply", "-auto-approve", dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmd.Process.Kill()
		cmd.Wait()
	}
	if now, err := os.ReadFile(lockFile); err != nil || !bytes.Equal(now, held) {
		t.Errorf("lock file after the killed applies: %q, %v; want the holder's %q", now, err, held)
	}
	if st, err := planner.ReadState(dir); st != nil || err != nil {
		t.Errorf("state after applies refused the lock: %+v, %v; want none", st, err)
	}
	r.checkClean()
	lock.Unlock()
	r.converge(dir)
}
