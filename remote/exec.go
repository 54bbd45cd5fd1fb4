package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/sys/unix"
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
