package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/crypto/ssh"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/provider/host/netnsfs"
)

// ExecArg is the first argument of `tsolab agent` that runs one command
// in a namespace of the machine instead of serving the protocol:
// `tsolab agent exec NETNS -- COMMAND [ARGS...]` ("" NETNS: the
// machine's own namespace). It exits with the command's exit status
// (128+N when signal N ended it), as `tsolab exec` does.
const ExecArg = "exec"

// Exec runs argv in the namespace netns of the machine ("" = its own),
// as the agent's user (root, or through sudo -n), over an SSH session of
// its own with stdin, stdout and stderr wired to the given ones, and
// returns its exit status. An error is a session that could not run or
// ended without a status (the connection was lost); it names the
// machine.
func (c *Client) Exec(ctx context.Context, netns string, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	s, err := c.conn.NewSession()
	if err != nil {
		return 0, fmt.Errorf("machine %s: open a session: %w", c.Machine, err)
	}
	defer s.Close()
	s.Stdin, s.Stdout, s.Stderr = stdin, stdout, stderr
	words := []string{"exec"}
	if c.Machine.Sudo {
		words = append(words, "sudo", "-n")
	}
	words = append(words, shellQuote(c.Path), "agent", ExecArg, shellQuote(netns), "--")
	for _, a := range argv {
		words = append(words, shellQuote(a))
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(strings.Join(words, " ")) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		s.Signal(ssh.SIGTERM)
		return 0, fmt.Errorf("machine %s: %w", c.Machine, ctx.Err())
	}
	var ee *ssh.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee) && ee.Signal() != "":
		// The agent itself was killed (it reports a command's signal
		// as 128+N).
		return 128 + int(unix.SignalNum("SIG"+ee.Signal())), nil
	case errors.As(err, &ee):
		return ee.ExitStatus(), nil
	}
	return 0, fmt.Errorf("machine %s: run %s: %w", c.Machine, argv[0], err)
}

// RunIn runs argv in the namespace netns of this machine ("" = its own)
// with the given standard streams and environment (nil: this process's),
// and returns its exit status (128+N when signal N ended it). It is the
// agent's side of Exec, and tsolab exec's on this machine. An error is a
// command that could not start, or ctx interrupted before it started.
//
// SIGTERM and SIGHUP sent to this process go to the command, and this
// process waits for it to end: a command left running in a lab's
// namespace would keep the namespace alive after tsolab destroy. So does
// SIGINT, unless this process is in the foreground process group of its
// terminal: a Ctrl-C there is the terminal's, which sends it to that
// whole group, the command included (it runs in this process's group),
// and a relayed copy would reach the command twice. (A SIGINT sent to
// this process alone while it is in the foreground, by kill, is then not
// passed on: the command runs on, and this process waits for it.)
func RunIn(ctx context.Context, netns string, argv []string, stdin io.Reader, stdout, stderr io.Writer, env []string) (int, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = stdin, stdout, stderr, env
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if ctx.Err() != nil { // a signal came before the relay listened
		return 0, context.Cause(ctx)
	}
	var err error
	if netns == "" {
		err = cmd.Start() // the machine's own namespace
	} else {
		err = netnsfs.Start(netns, cmd)
	}
	if err != nil {
		return 0, err
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				if s == syscall.SIGINT && inForeground() {
					continue // the terminal sent it to the command too
				}
				cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return 128 + int(st.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 0, err
}

// inForeground reports whether this process is in the foreground process
// group of its controlling terminal, whose Ctrl-C signals that group.
func inForeground() bool {
	fd, err := unix.Open("/dev/tty", unix.O_RDONLY|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false // no controlling terminal
	}
	defer unix.Close(fd)
	pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}
