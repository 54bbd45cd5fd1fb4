package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

// killAgentMidRun is the script command `kill-agent-mid-run NAME CMD
// ARGS...`: it runs CMD (a `tsolab run -json -` or `test -json -`, which
// streams a workload_progress line every second of a run) and, at its
// first workload_progress line, kills (SIGKILL) every agent process
// running from machine NAME's agent directory ($NAME_DIR/home/.cache/
// tsolab/agent), by pid. It waits for CMD to end and writes its output
// to killed.stdout and killed.stderr. The command fails when no run
// progressed (nothing was killed) or CMD succeeded anyway.
func killAgentMidRun(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: kill-agent-mid-run NAME CMD [ARGS...]")
	}
	dir := filepath.Join(ts.Getenv(strings.ToUpper(args[0])+"_DIR"), "home", ".cache", "tsolab", "agent") + "/"
	killed, werr := atFirstProgress(ts, "killed", args[0], args[1:], func(*os.Process) int { return killAgents(ts, dir) })
	if killed == 0 {
		ts.Fatalf("no workload progressed: no agent was killed")
	}
	if werr == nil {
		ts.Fatalf("%s succeeded with its machine's agent killed mid-run", args[1])
	}
}

// interruptMidRun is the script command `interrupt-mid-run SIG NAME CMD
// ARGS...`: it runs CMD (a `tsolab run -json -` or `test -json -` of a
// lab with machine NAME) and sends it SIG (INT, TERM or HUP) at its first
// workload_progress line, as a user's Ctrl-C or a cancelled CI job
// would. It waits for CMD to end and writes its output to
// interrupted.stdout and interrupted.stderr. The command fails when no
// run progressed or CMD succeeded anyway.
func interruptMidRun(ts *testscript.TestScript, neg bool, args []string) {
	sigs := map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "HUP": syscall.SIGHUP}
	if neg || len(args) < 3 || sigs[args[0]] == 0 {
		ts.Fatalf("usage: interrupt-mid-run INT|TERM|HUP NAME CMD [ARGS...]")
	}
	sent, werr := atFirstProgress(ts, "interrupted", args[1], args[2:], func(p *os.Process) int {
		ts.Check(p.Signal(sigs[args[0]]))
		return 1
	})
	if sent == 0 {
		ts.Fatalf("no workload progressed: nothing was interrupted")
	}
	if werr == nil {
		ts.Fatalf("%s succeeded though interrupted mid-run", args[2])
	}
}

// atFirstProgress runs CMD ARGS (cmdArgs) in the script's directory, with
// the environment that reaches machine name, and calls act with its
// process at its first workload_progress line. It waits for CMD to end,
// writes its output to PREFIX.stdout and PREFIX.stderr, and returns what
// act returned (0 when no run progressed) and how CMD ended.
func atFirstProgress(ts *testscript.TestScript, prefix, name string, cmdArgs []string, act func(*os.Process) int) (int, error) {
	cmd := exec.Command(cmdArgs[0], cmdArgs[1:]...)
	cmd.Dir = ts.Getenv("WORK")
	for _, k := range []string{"PATH", "HOME", "TSOLAB_VAR_" + name + "_address", "TSOLAB_VAR_" + name + "_identity", "TSOLAB_VAR_" + name + "_known_hosts"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	var stdout bytes.Buffer
	acted := 0
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		stdout.Write(sc.Bytes())
		stdout.WriteByte('\n')
		if acted == 0 && strings.Contains(sc.Text(), `"type":"workload_progress"`) {
			acted = act(cmd.Process)
		}
	}
	werr := cmd.Wait()
	ts.Check(os.WriteFile(ts.MkAbs(prefix+".stdout"), stdout.Bytes(), 0o644))
	ts.Check(os.WriteFile(ts.MkAbs(prefix+".stderr"), stderr.Bytes(), 0o644))
	return acted, werr
}

// killAgents kills every process whose executable is under dir and
// returns how many.
func killAgents(ts *testscript.TestScript, dir string) int {
	exes, _ := filepath.Glob("/proc/[0-9]*/exe")
	n := 0
	for _, exe := range exes {
		target, err := os.Readlink(exe)
		if err != nil || !strings.HasPrefix(target, dir) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(exe)))
		if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
			ts.Logf("killed agent %d (%s)", pid, target)
			n++
		}
	}
	return n
}
