package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

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
// When the script ends, what its labs still record is destroyed from the
// controller's side before the server stops, so nothing is left on either
// machine even when the script failed.
func startSSHD(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sshd NAME")
	}
	name := args[0]
	s, err := remotetest.StartIn(ts.MkAbs(".sshd-" + name))
	ts.Check(err)
	vars := map[string]string{
		"TSOLAB_VAR_" + name + "_address":     s.Addr.String(),
		"TSOLAB_VAR_" + name + "_identity":    s.IdentityFile,
		"TSOLAB_VAR_" + name + "_known_hosts": s.KnownHosts,
	}
	ts.Defer(func() {
		destroyFrom(ts, netnsfs.Path(s.ClientNS), vars)
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
