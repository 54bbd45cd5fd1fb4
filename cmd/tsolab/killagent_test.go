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
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Dir = ts.Getenv("WORK")
	for _, k := range []string{"PATH", "HOME", "TSOLAB_VAR_" + args[0] + "_address", "TSOLAB_VAR_" + args[0] + "_identity", "TSOLAB_VAR_" + args[0] + "_known_hosts"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	var stdout bytes.Buffer
	killed := 0
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		stdout.Write(sc.Bytes())
		stdout.WriteByte('\n')
		if killed == 0 && strings.Contains(sc.Text(), `"type":"workload_progress"`) {
			killed = killAgents(ts, dir)
		}
	}
	werr := cmd.Wait()
	ts.Check(os.WriteFile(ts.MkAbs("killed.stdout"), stdout.Bytes(), 0o644))
	ts.Check(os.WriteFile(ts.MkAbs("killed.stderr"), stderr.Bytes(), 0o644))
	if killed == 0 {
		ts.Fatalf("no workload progressed: no agent was killed")
	}
	if werr == nil {
		ts.Fatalf("%s succeeded with its machine's agent killed mid-run", args[1])
	}
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
