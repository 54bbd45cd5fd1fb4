package remote

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// An agent writes a run's capture files in a directory of its own
// (tsolab-capture-*, in the machine's temporary directory) until the
// controller fetches them, and removes it when the run's worker closes
// or the controller goes away. An agent killed with SIGKILL removes
// nothing: so each directory carries a marker file naming the agent that
// made it, and every agent, as it starts (the next command that reaches
// the machine: plan, apply, run, test, destroy), removes the directories
// whose agent is gone. A directory without the marker, or with one that
// does not parse, is not tsolab's to remove and stays.

// capturePrefix begins the name of an agent's capture directory.
const capturePrefix = "tsolab-capture-"

// ownerFile is the marker file in a capture directory: ownerMagic, then
// the pid of the agent that made it, that process's start time (field
// 22 of /proc/PID/stat, so a pid used again by another process is told
// apart) and its pid namespace (whose pids the other two are).
const (
	ownerFile  = ".tsolab-agent"
	ownerMagic = "tsolab agent capture directory"
)

// owner is the process a capture directory belongs to.
type owner struct {
	pid   int
	start string // /proc/PID/stat's starttime, in clock ticks since boot
	pidNS string // /proc/self/ns/pid's link, like pid:[4026531836]
}

func (o owner) String() string {
	return fmt.Sprintf("%s\npid %d\nstart %s\npidns %s\n", ownerMagic, o.pid, o.start, o.pidNS)
}

// self is this process as a capture directory's owner.
func selfOwner() (owner, error) {
	start, err := processStart(os.Getpid())
	if err != nil {
		return owner{}, err
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return owner{}, err
	}
	return owner{pid: os.Getpid(), start: start, pidNS: ns}, nil
}

// processStart returns the start time of process pid (field 22 of
// /proc/PID/stat), or an error when there is no such process.
func processStart(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", err
	}
	// The command name, field 2, is in parentheses and may hold spaces:
	// the fields after it start at the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return "", fmt.Errorf("/proc/%d/stat: %d fields after the command name, want 20 or more", pid, len(f))
	}
	return f[19], nil // field 22: 3 is f[0]
}

// parseOwner reads a marker file's text; false when it is not one.
func parseOwner(text string) (owner, bool) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != 4 || lines[0] != ownerMagic {
		return owner{}, false
	}
	var o owner
	var pid string
	for i, key := range []string{"pid", "start", "pidns"} {
		v, ok := strings.CutPrefix(lines[i+1], key+" ")
		if !ok || v == "" {
			return owner{}, false
		}
		switch key {
		case "pid":
			pid = v
		case "start":
			o.start = v
		case "pidns":
			o.pidNS = v
		}
	}
	n, err := strconv.Atoi(pid)
	if err != nil || n <= 0 {
		return owner{}, false
	}
	o.pid = n
	return o, true
}

// makeCaptureDir makes a capture directory in the machine's temporary
// directory, marked as this process's.
func makeCaptureDir() (string, error) {
	me, err := selfOwner()
	if err != nil {
		return "", fmt.Errorf("capture files: who this agent is: %w", err)
	}
	dir, err := os.MkdirTemp("", capturePrefix)
	if err != nil {
		return "", fmt.Errorf("capture files: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(me.String()), 0o600); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("capture files: %w", err)
	}
	return dir, nil
}

// removeOrphanedCaptureDirs removes the capture directories in tmp whose
// agent is gone: marked by an agent of this pid namespace whose process
// no longer runs. It returns the directories it removed.
func removeOrphanedCaptureDirs(tmp string) ([]string, error) {
	me, err := selfOwner()
	if err != nil {
		return nil, err
	}
	dirs, err := filepath.Glob(filepath.Join(tmp, capturePrefix+"*"))
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // no marker: not made by an agent, or being made
		}
		o, ok := parseOwner(string(b))
		if !ok || o.pidNS != me.pidNS {
			continue // not ours to judge: its pid means another process here
		}
		if start, err := processStart(o.pid); err == nil && start == o.start {
			continue // its agent runs
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, dir)
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("remove capture directories of agents that are gone: %v", errs)
	}
	return removed, nil
}
