package main

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/remote/remotetest"
)

// startSSHD is the script command `sshd NAME`: a real OpenSSH server in a
// namespace of its own that stands for machine NAME (remotetest.Server),
// stopped when the script ends. It sets the lab variables a machine block
// reads by convention (NAME_address, NAME_identity, NAME_known_hosts, as
// TSOLAB_VAR_ variables) and, for NAME in capitals:
//
//	NAME_KNOWN_HOSTS   the known_hosts file with its host key
//	NAME_CTL           the namespace file of the controller's side, for
//	                   `nsenter --net=$NAME_CTL tsolab ...`
//	NAME_PID           sshd's pid: `nsenter -t $NAME_PID -m -n CMD` runs
//	                   CMD on the machine
//	NAME_DIR           the server's files (the agent is under home/)
//
// Both sides have the cable0 ends of one veth pair (remotetest.Cable).
// `sshd NAME beside OTHER` starts a machine that OTHER's controller
// namespace reaches too (NAME_CTL is OTHER's), without a cable to the
// controller: `cable A B IFNAME` joins two machines.
// When the script ends, what its labs still record is destroyed from the
// controller's side before the server stops, so nothing is left on either
// machine even when the script failed.
func startSSHD(ts *testscript.TestScript, neg bool, args []string) {
	if neg || (len(args) != 1 && (len(args) != 3 || args[1] != "beside")) {
		ts.Fatalf("usage: sshd NAME [beside OTHER]")
	}
	name := args[0]
	var s *remotetest.Server
	var err error
	var other *scriptSSHD
	if len(args) == 3 {
		other = sshdOf(ts, args[2])
		s, err = remotetest.StartInBeside(ts.MkAbs(".sshd-"+name), other.s)
	} else {
		s, err = remotetest.StartIn(ts.MkAbs(".sshd-" + name))
	}
	ts.Check(err)
	vars := map[string]string{
		"TSOLAB_VAR_" + name + "_address":     s.Addr.String(),
		"TSOLAB_VAR_" + name + "_identity":    s.IdentityFile,
		"TSOLAB_VAR_" + name + "_known_hosts": s.KnownHosts,
	}
	all := maps.Clone(vars)
	if other != nil {
		maps.Copy(all, other.vars)
	}
	if len(servers(ts)) == 0 {
		ts.Defer(func() { scriptServers.Delete(ts) }) // last
	}
	scriptServers.Store(ts, append(servers(ts), &scriptSSHD{name: name, s: s, vars: vars}))
	ts.Defer(func() {
		destroyFrom(ts, netnsfs.Path(s.ClientNS), all)
		s.Close()
	})
	for k, v := range vars {
		ts.Setenv(k, v)
	}
	p := strings.ToUpper(name) + "_"
	ts.Setenv(p+"KNOWN_HOSTS", s.KnownHosts)
	ts.Setenv(p+"CTL", netnsfs.Path(s.ClientNS))
	ts.Setenv(p+"PID", strconv.Itoa(s.Pid()))
	ts.Setenv(p+"DIR", filepath.Clean(s.Dir))
}

// scriptSSHD is a server a script started, by the name it gave.
type scriptSSHD struct {
	name   string
	s      *remotetest.Server
	vars   map[string]string // the lab variables that reach it
	logins int               // the logins `logins NAME` counted so far
}

// sshdUser is the script command `sshd-user NAME nopasswd|password`: a
// throwaway login user of machine NAME whose sudo runs tsolab's agent as
// root, without a password or asking for one (remotetest.AddUserIn). It
// sets TSOLAB_VAR_NAME_user to the user; the user goes when the script
// ends.
func sshdUser(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 || (args[1] != "nopasswd" && args[1] != "password") {
		ts.Fatalf("usage: sshd-user NAME nopasswd|password")
	}
	m, remove, err := sshdOf(ts, args[0]).s.AddUserIn(args[0], args[1] == "nopasswd")
	ts.Defer(func() {
		if err := remove(); err != nil {
			ts.Logf("cleanup: %v", err)
		}
	})
	ts.Check(err)
	ts.Setenv("TSOLAB_VAR_"+args[0]+"_user", m.User)
}

// sshdArch is the script command `sshd-arch NAME PERSONALITY|native`:
// it restarts machine NAME's SSH server under setarch(8) PERSONALITY
// (linux32: every session's uname -m says i686, as on a 32-bit x86
// machine), or as the machine itself (native). Sessions it served end.
func sshdArch(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sshd-arch NAME PERSONALITY|native")
	}
	personality := args[1]
	if personality == "native" {
		personality = ""
	}
	s := sshdOf(ts, args[0]).s
	ts.Check(s.RestartSSHDAs(personality))
	if personality != "" {
		// A script that fails meanwhile still destroys what it made
		// there: the machine is itself again before that cleanup.
		ts.Defer(func() {
			if err := s.RestartSSHDAs(""); err != nil {
				ts.Logf("cleanup: %v", err)
			}
		})
	}
}

// logins is the script command `logins NAME`: it prints how many SSH
// logins machine NAME's server accepted since the last `logins NAME`
// (or its start), as its log says: one per connection tsolab made.
func logins(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: logins NAME")
	}
	s := sshdOf(ts, args[0])
	n := strings.Count(s.s.Log(), "Accepted publickey for ")
	fmt.Fprintf(ts.Stdout(), "%d\n", n-s.logins)
	s.logins = n
}

// scriptServers holds each running script's servers ([]*scriptSSHD).
var scriptServers sync.Map

func servers(ts *testscript.TestScript) []*scriptSSHD {
	v, _ := scriptServers.Load(ts)
	l, _ := v.([]*scriptSSHD)
	return l
}

// sshdOf is the server the script started as name.
func sshdOf(ts *testscript.TestScript, name string) *scriptSSHD {
	for _, s := range servers(ts) {
		if s.name == name {
			return s
		}
	}
	ts.Fatalf("no machine %s: start it first (sshd %s)", name, name)
	return nil
}

// cable is the script command `cable A B IFNAME`: a veth pair named
// IFNAME on both sides between machines A and B (remotetest.CableBetween).
func cable(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: cable A B IFNAME")
	}
	ts.Check(remotetest.CableBetween(sshdOf(ts, args[0]).s, sshdOf(ts, args[1]).s, args[2]))
}

// destroyFrom runs tsolab destroy, in the namespace ctl, on every lab of
// the script's work directory whose state records something.
func destroyFrom(ts *testscript.TestScript, ctl string, vars map[string]string) {
	states, _ := filepath.Glob(filepath.Join(ts.Getenv("WORK"), "*", ".tsolab", "state.json"))
	env := os.Environ()
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	for _, st := range states {
		lab := filepath.Dir(filepath.Dir(st))
		cmd := exec.Command("nsenter", "--net="+ctl, "--", "tsolab", "destroy", "-auto-approve", lab)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			ts.Logf("cleanup: tsolab destroy %s: %v\n%s", lab, err, out)
		}
	}
}
