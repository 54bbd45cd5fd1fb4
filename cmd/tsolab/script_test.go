package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/remote/remotetest"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		main() // TestInterrupt's child: the tsolab command itself
	}
	testscript.Main(m, map[string]func(){
		"tsolab": func() {
			os.Exit(processCLI().main(os.Args[1:]))
		},
	})
}

// canNetAdmin reports whether this process may create namespaces.
func canNetAdmin() bool {
	if os.Geteuid() != 0 {
		return false
	}
	var hdr = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[0].Effective&(1<<unix.CAP_NET_ADMIN) != 0
}

// destroyLeftovers destroys every lab under dir that has a state file.
func destroyLeftovers(t *testing.T, dir string) {
	states, _ := filepath.Glob(filepath.Join(dir, "*", ".tsolab", "state.json"))
	for _, st := range states {
		lab := filepath.Dir(filepath.Dir(st))
		var out bytes.Buffer
		c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &out, env: os.Environ()}
		if code := c.main([]string{"destroy", "-auto-approve", lab}); code != exitOK {
			t.Errorf("cleanup: tsolab destroy %s: exit %d\n%s", lab, code, out.String())
		}
	}
}

// TestScript runs the end-to-end CLI scripts in testdata/script. Scripts
// that need namespaces carry [!netadmin] skip lines; under
// TSOLAB_REQUIRE_NETNS=1 the test fails instead when they cannot run.
// UPDATE_SCRIPTS=1 rewrites the golden output in the scripts.
//
// The scripts that need namespaces run the kernel engine, which measures
// CPU and throughput on real sockets: they run one at a time and before
// the others, so no other script's traffic or model run is on the CPU
// while they measure (what -p 1 does for packages). The scripts that need
// no namespaces then run in parallel.
func TestScript(t *testing.T) {
	netadmin := canNetAdmin()
	if !netadmin && os.Getenv("TSOLAB_REQUIRE_NETNS") == "1" {
		t.Fatal("TSOLAB_REQUIRE_NETNS=1 but this process lacks CAP_NET_ADMIN: run the tests as root")
	}
	if os.Getenv("TSOLAB_REQUIRE_NETNS") == "1" {
		requireTools(t)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	alone, shared := splitScripts(t, "testdata/script")
	if len(alone) == 0 || len(shared) == 0 {
		t.Fatalf("scripts needing namespaces %q, others %q: want some of each", alone, shared)
	}
	params := testscript.Params{
		UpdateScripts: os.Getenv("UPDATE_SCRIPTS") == "1",
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "netadmin":
				return netadmin, nil
			case "sshd":
				return installed(remotetest.SSHD), nil
			case "sudo":
				return installed(remotetest.Sudo), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"standin-pair":       standinPair,
			"hold-lock":          holdLock,
			"jsonlines":          jsonLines,
			"handmade-netns":     handmadeNetns,
			"sshd":               startSSHD,
			"cable":              cable,
			"logins":             logins,
			"sshd-user":          sshdUser,
			"sshd-arch":          sshdArch,
			"kill-agent-mid-run": killAgentMidRun,
			"interrupt-mid-run":  interruptMidRun,
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("EXAMPLES", wd+"/../../examples")
			// Whatever a script applied is destroyed when it ends, even
			// when it fails half-way.
			env.Defer(func() { destroyLeftovers(t, env.WorkDir) })
			return nil
		},
	}
	if d, ok := t.Deadline(); ok {
		params.Deadline = d
	}
	params.Files = alone
	unlock := lockMachine(t)
	testscript.RunT(serialT{t}, params)
	unlock()
	params.Files = shared
	testscript.Run(t, params)
}

// scriptTools are the programs the namespace scripts run, with the
// Debian package that has each (.ci/run installs them). Without one a
// script skips, or fails on a bare exec.
var scriptTools = []struct{ bin, pkg string }{
	{"ip", "iproute2"},
	{"ethtool", "ethtool"},
	{"ping", "iputils-ping"},
	{"tshark", "tshark"},
	{"capinfos", "wireshark-common, which tshark depends on"},
}

// requireTools fails the test when a program the namespace scripts need is
// missing: under TSOLAB_REQUIRE_NETNS=1 they must run, not skip.
func requireTools(t *testing.T) {
	t.Helper()
	for _, tool := range scriptTools {
		if _, err := exec.LookPath(tool.bin); err != nil {
			t.Errorf("TSOLAB_REQUIRE_NETNS=1 but %s is not installed: the namespace scripts would skip (apt-get install %s)", tool.bin, tool.pkg)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// needsNetadmin marks a script that needs namespaces.
var needsNetadmin = regexp.MustCompile(`(?m)^\[!netadmin\] skip`)

// splitScripts divides the scripts in dir into those that need
// namespaces and the others.
func splitScripts(t *testing.T, dir string) (alone, shared []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".txtar") && !strings.HasSuffix(e.Name(), ".txt") {
			continue
		}
		file := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if needsNetadmin.Match(b) {
			alone = append(alone, file)
		} else {
			shared = append(shared, file)
		}
	}
	return alone, shared
}

// lockMachine takes a lock that every test process of this package on
// the machine shares, so two `go test` runs at once (two people in one
// checkout, or two checkouts) run their namespace scripts one after the
// other: the scripts' labs have fixed names (tsl.tso-basics.tx), which two
// at once would fight over, and each would measure the other's traffic.
// It returns the unlock.
func lockMachine(t *testing.T) func() {
	t.Helper()
	name := filepath.Join(os.TempDir(), "tsolab-cmd-test-netns.lock")
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("open the machine lock: %v", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Logf("waiting for %s: another test process runs its namespace scripts", name)
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			f.Close()
			t.Fatalf("lock %s: %v", name, err)
		}
	}
	return func() { f.Close() } // closing the file releases the lock
}

// serialT runs testscript's scripts one after another: it is testscript's
// *testing.T adapter with a Parallel that does nothing, so each script's
// t.Run returns when the script has ended.
type serialT struct{ *testing.T }

func (serialT) Parallel() {}

func (serialT) Verbose() bool { return testing.Verbose() }

func (t serialT) Run(name string, f func(testscript.T)) {
	t.T.Run(name, func(t *testing.T) { f(serialT{t}) })
}

// standinPair is the script command `standin-pair A B`: it makes a veth
// pair A–B in the machine's namespace, standing for two ports of the
// machine cabled to each other, and removes it when the script ends
// (deleting either end takes both), wherever it is then: back in the
// machine's namespace, or still in a lab's if its destroy has not run.
func standinPair(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: standin-pair A B")
	}
	for _, name := range args {
		if !strings.HasPrefix(name, "tsl") {
			ts.Fatalf("standin-pair: %q does not start with tsl: test devices are named so", name)
		}
	}
	a := netlink.NewLinkAttrs()
	a.Name = args[0]
	ts.Check(netlink.LinkAdd(&netlink.Veth{LinkAttrs: a, PeerName: args[1], PeerTxQLen: -1}))
	ts.Defer(func() {
		namespaces, _ := netnsfs.List("tsl")
		for _, ns := range append([]string{""}, namespaces...) {
			h, err := netnsfs.Netlink(ns)
			if err != nil {
				continue
			}
			for _, name := range args {
				if l, err := h.LinkByName(name); err == nil {
					h.LinkDel(l)
				}
			}
			h.Close()
		}
	})
}

// holdLock is the script command `hold-lock DIR`: this test process takes
// the state lock of the lab in DIR, as another tsolab would, and holds it
// until the script ends.
func holdLock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: hold-lock DIR")
	}
	lock, err := planner.LockState(ts.MkAbs(args[0]), "held")
	ts.Check(err)
	ts.Defer(func() { lock.Unlock() })
}

// jsonLines is the script command `jsonlines`: the last command's stdout
// is JSON lines and nothing else, the first a version message, as
// docs/json-format.md promises for -json.
func jsonLines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: jsonlines")
	}
	out := ts.ReadFile("stdout")
	if out == "" {
		ts.Fatalf("stdout is empty: -json writes at least a version line")
	}
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			ts.Fatalf("stdout line %d is not JSON (%v): %s", i+1, err, line)
		}
		if i == 0 && m["type"] != "version" {
			ts.Fatalf("stdout line 1 is a %v message, want version", m["type"])
		}
	}
}

// handmadeNetns is the script command `handmade-netns NAME`: it makes the
// namespace NAME the way a user does (ip netns add), with the user's veth
// pair mine0–mine1 inside, and removes it when the script ends.
func handmadeNetns(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: handmade-netns NAME")
	}
	ns := args[0]
	if !strings.HasPrefix(ns, "tsl") {
		ts.Fatalf("handmade-netns: %q does not start with tsl: test namespaces are named so", ns)
	}
	ts.Defer(func() { netnsfs.Remove(ns) })
	for _, cmd := range [][]string{
		{"ip", "netns", "add", ns},
		{"ip", "-n", ns, "link", "add", "mine0", "type", "veth", "peer", "name", "mine1"},
	} {
		if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			ts.Fatalf("%s: %v: %s", strings.Join(cmd, " "), err, out)
		}
	}
}

// installed says whether a program a script needs is there; under
// TSOLAB_REQUIRE_NETNS=1 it says yes, so a missing one fails the script
// instead of skipping it.
func installed(path string) bool {
	if os.Getenv("TSOLAB_REQUIRE_NETNS") == "1" {
		return true
	}
	_, err := os.Stat(path)
	return err == nil
}
