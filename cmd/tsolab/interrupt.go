package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// A command ends early the same way whatever asks it to: Ctrl-C
// (SIGINT), a CI runner cancelling the job (SIGTERM), the terminal or
// SSH session going away (SIGHUP), or the reader of its stdout going
// away (`tsolab test -json - lab | head`: EPIPE). Each cancels the
// command's context: an apply stops starting changes and records what
// it made, a run stops its workload, and test then destroys the lab it
// applied (unless -keep), writes the state and exits 1.

// interruptSignals are the signals that interrupt a command.
var interruptSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// interruptError is the cause of a context cancelled by an interruption.
type interruptError struct{ why string }

func (e *interruptError) Error() string { return "interrupted by " + e.why }

// processCLI is the cli of the tsolab process: its stdout is watched for
// a reader that went away. Writes to a broken stdout then fail with
// EPIPE instead of killing the process with SIGPIPE, so the command can
// clean up before it exits.
func processCLI() *cli {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	return &cli{stdin: os.Stdin, stdout: &stdoutWatch{w: os.Stdout}, stderr: os.Stderr, env: os.Environ()}
}

// stdoutWatch passes writes to w; the first that fails with EPIPE
// cancels the contexts registered then (the commands running), once.
type stdoutWatch struct {
	w io.Writer

	mu      sync.Mutex
	broken  bool                             // guarded by mu
	cancels map[*int]context.CancelCauseFunc // guarded by mu
}

func (s *stdoutWatch) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		s.mu.Lock()
		cancels := s.cancels
		s.broken, s.cancels = true, nil
		s.mu.Unlock()
		for _, cancel := range cancels {
			cancel(&interruptError{"a closed stdout (broken pipe)"})
		}
	}
	return n, err
}

// watch registers cancel until the returned func is called. A context
// made after stdout broke is not cancelled by it: the destroy that
// cleans up after an interrupted run must run to its end.
func (s *stdoutWatch) watch(cancel context.CancelCauseFunc) (unwatch func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken {
		return func() {}
	}
	if s.cancels == nil {
		s.cancels = map[*int]context.CancelCauseFunc{}
	}
	key := new(int)
	s.cancels[key] = cancel
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.cancels, key)
	}
}

// signalContext returns a context cancelled by the first interruption
// (an interrupt signal, or stdout breaking) after it was made, with an
// *interruptError as its cause; later signals are ignored until the
// returned func is called.
func (c *cli) signalContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, interruptSignals...)
	unwatch := func() {}
	if w, ok := c.stdout.(*stdoutWatch); ok {
		unwatch = w.watch(cancel)
	}
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			cancel(&interruptError{signalName(s)})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		unwatch()
		close(done)
		cancel(context.Canceled)
	}
}

// signalName is SIGTERM for syscall.SIGTERM.
func signalName(s os.Signal) string {
	if n, ok := s.(syscall.Signal); ok {
		switch n {
		case syscall.SIGINT:
			return "SIGINT (Ctrl-C)"
		case syscall.SIGTERM:
			return "SIGTERM"
		case syscall.SIGHUP:
			return "SIGHUP"
		}
	}
	return fmt.Sprint(s)
}

// interrupted returns err explained by ctx's interruption, when ctx was
// interrupted: "interrupted by SIGTERM: ...".
func interrupted(ctx context.Context, err error) error {
	var ie *interruptError
	if err == nil || !errors.As(context.Cause(ctx), &ie) {
		return err
	}
	return fmt.Errorf("%w: %v", ie, err)
}
