package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
)

// childEnv, set in the environment of this test binary, makes it the
// tsolab command (main) instead of the tests: TestInterrupt runs it as a
// child process it can signal.
const childEnv = "TSOLAB_TEST_RUN_MAIN"

// TestInterrupt ends a kernel-engine `tsolab test -json -` in each way a
// user or a CI runner does once its workload runs (SIGINT, SIGTERM,
// SIGHUP, and the reader of stdout going away as with `| head`), and
// checks that each ends it as Ctrl-C does: exit 1, the lab's namespaces
// gone, the state written and empty.
func TestInterrupt(t *testing.T) {
	if !canNetAdmin() {
		if os.Getenv("TSOLAB_REQUIRE_NETNS") == "1" {
			t.Fatal("TSOLAB_REQUIRE_NETNS=1 but this process lacks CAP_NET_ADMIN: run the tests as root")
		}
		t.Skip("needs CAP_NET_ADMIN to make namespaces (run as root)")
	}
	unlock := lockMachine(t)
	defer unlock()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		sig  syscall.Signal // 0: close the read end of stdout
		why  string         // the cause the stream reports
		keep bool           // test -keep: the lab stays, recorded
	}{
		{"sigint", syscall.SIGINT, "interrupted by SIGINT (Ctrl-C)", false},
		{"sigterm", syscall.SIGTERM, "interrupted by SIGTERM", false},
		{"sighup", syscall.SIGHUP, "interrupted by SIGHUP", false},
		{"sigpipe", 0, "", false}, // the stream is gone: nothing to read the cause from
		{"sigterm-keep", syscall.SIGTERM, "interrupted by SIGTERM", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "lab")
			copyDir(t, "../../examples/tso-basics", dir)
			labName := "int-" + tc.name
			t.Cleanup(func() { destroyLeftovers(t, filepath.Dir(dir)) })

			args := []string{"test", "-json", "-", "-name", labName, "-scenario", "tso=true,mtu=1500", dir}
			if tc.keep {
				args = append(args, "-keep")
			}
			cmd := exec.Command(exe, args...)
			cmd.Env = append(os.Environ(), childEnv+"=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The event: the workload has started on the applied lab.
			lines := bufio.NewScanner(stdout)
			lines.Buffer(nil, 1<<24)
			var seen []string
			started := false
			for !started && lines.Scan() {
				seen = append(seen, lines.Text())
				started = strings.Contains(lines.Text(), `"type":"workload_start"`)
			}
			if !started {
				cmd.Wait()
				t.Fatalf("the run ended before its workload started:\n%s\nstderr:\n%s", strings.Join(seen, "\n"), stderr.String())
			}
			if ns, _ := netnsfs.List("tsl." + labName + "."); len(ns) != 2 {
				t.Errorf("while the workload runs: namespaces %v, want the lab's two", ns)
			}
			if tc.sig != 0 {
				if err := cmd.Process.Signal(tc.sig); err != nil {
					t.Fatal(err)
				}
				rest, _ := io.ReadAll(stdout)
				seen = append(seen, strings.Split(string(rest), "\n")...)
			} else {
				stdout.Close() // the next write of the child gets EPIPE
			}
			err = cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != exitError {
				t.Errorf("exit: %v, want exit status %d (a signal's default action would end it without cleaning up)\nstderr:\n%s", err, exitError, stderr.String())
			}
			if tc.why != "" {
				stream := strings.Join(seen, "\n")
				for _, want := range []string{`"type":"run_errored"`, tc.why} {
					if !strings.Contains(stream, want) {
						t.Errorf("the stream lacks %s:\n%s", want, stream)
					}
				}
				if destroyed := strings.Contains(stream, `"operation":"destroy"`); destroyed == tc.keep {
					t.Errorf("destroyed %v with -keep %v:\n%s", destroyed, tc.keep, stream)
				}
			}
			if tc.keep {
				// The lab stays, and the state records all of it.
				ns, _ := netnsfs.List("tsl." + labName + ".")
				st, err := planner.ReadState(dir)
				if len(ns) != 2 || err != nil || st == nil || len(st.Resources) != 4 {
					t.Errorf("with -keep: namespaces %v, state %+v (%v); want the lab's two and its 4 resources recorded", ns, st, err)
				}
				return // the cleanup destroys it
			}
			if ns, _ := netnsfs.List("tsl." + labName + "."); len(ns) != 0 {
				t.Errorf("after the interruption: namespaces %v left behind\nstderr:\n%s", ns, stderr.String())
			}
			st, err := planner.ReadState(dir)
			switch {
			case err != nil:
				t.Errorf("state: %v", err)
			case st == nil || len(st.Resources) != 0 || st.Scenario != "":
				t.Errorf("state after the interruption = %+v, want written and empty (the lab destroyed)", st)
			}
		})
	}
}

// copyDir copies the files of src (not its subdirectories) into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
