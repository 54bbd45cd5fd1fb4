package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/tsolab/tsolab/planner"
)

// A command ends early the same way whatever asks it to: Ctrl-C
// (SIGINT), a CI runner cancelling the job (SIGTERM), the terminal or
// SSH session going away (SIGHUP, unless the command was started with
// it ignored, as nohup does), or the reader of its stdout going away
// (`tsolab test -json - lab | head`: EPIPE). Each cancels the command's
// work: an apply stops starting changes and records what it made, a run
// stops its workload, and test then destroys the lab it applied (unless
// -keep), writes the state and exits 1.
//
// What a command does to undo its work (test's destroy of the lab it
// applied) is cleanup: neither the first interruption nor stdout
// breaking stops it, only a second interrupt signal does, and then what
// is left stays recorded in the state for tsolab destroy. Either way
// the command says on stderr what it removed or what remains.

// hangupIgnored is whether the process was started with SIGHUP ignored
// (nohup): read before anything asks for the signal, which would undo
// the ignoring.
var hangupIgnored = signal.Ignored(syscall.SIGHUP)

// interruptSignals are the signals that interrupt a command.
func interruptSignals() []os.Signal {
	if hangupIgnored {
		return []os.Signal{os.Interrupt, syscall.SIGTERM}
	}
	return []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
}

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

// watch registers cancel until the returned func is called; after
// stdout broke there is nothing to watch.
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

// interrupts are one command's contexts, cancelled by interruptions
// with an *interruptError as their cause.
type interrupts struct {
	// work is cancelled by the first interruption: an interrupt signal,
	// or stdout breaking when the command watches it.
	work context.Context
	// cleanup is cancelled by the second interrupt signal only: the
	// context of what undoes the work.
	cleanup context.Context
	stop    func()
}

// onInterruptSignal, when set (a test hook, signalAtOpEnv), is called
// after each interrupt signal has cancelled what it cancels, with that
// signal's number in interruptsReceived.
var onInterruptSignal func(n int64)

// interruptsReceived counts the interrupt signals this process has taken
// from the runtime, each counted before it cancels anything: a test hook
// that reads it before sending a signal knows the number its own will
// get (signalAtOpEnv).
var interruptsReceived atomic.Int64

// watchInterrupts returns the contexts of a command; with stdout, a
// broken stdout interrupts its work too. Call stop when the command
// ends.
func (c *cli) watchInterrupts(stdout bool) *interrupts {
	work, cancelWork := context.WithCancelCause(context.Background())
	cleanup, cancelCleanup := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, interruptSignals()...)
	unwatch := func() {}
	if w, ok := c.stdout.(*stdoutWatch); ok && stdout {
		unwatch = w.watch(cancelWork)
	}
	done := make(chan struct{})
	go func() {
		for n := 1; ; n++ {
			select {
			case s := <-sigs:
				received := interruptsReceived.Add(1)
				cancelWork(&interruptError{signalName(s)})
				if n > 1 {
					cancelCleanup(&interruptError{signalName(s) + ", a second interrupt"})
				}
				if onInterruptSignal != nil {
					onInterruptSignal(received)
				}
			case <-done:
				return
			}
		}
	}()
	return &interrupts{work: work, cleanup: cleanup, stop: func() {
		signal.Stop(sigs)
		unwatch()
		close(done)
		cancelWork(context.Canceled)
		cancelCleanup(context.Canceled)
	}}
}

// signalContext returns a context cancelled by the first interruption
// (an interrupt signal, or stdout breaking) after it was made; call the
// returned func when the command ends.
func (c *cli) signalContext() (context.Context, context.CancelFunc) {
	ir := c.watchInterrupts(true)
	return ir.work, ir.stop
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

// reportRecorded says on stderr what the state of dir records after a
// command was interrupted: nothing, or its resources and the command
// that removes them (and, with finish, the one that completes them).
func (c *cli) reportRecorded(dir string, finish bool) {
	st, err := planner.ReadState(dir)
	if err != nil {
		fmt.Fprintf(c.stderr, "tsolab: the state in %s cannot be read (%v): what the command made is unknown; see tsolab state list %s\n", dir, err, dir)
		return
	}
	if st == nil || len(st.Resources) == 0 {
		fmt.Fprintf(c.stderr, "tsolab: nothing is left of the lab: the state in %s records no resources\n", dir)
		return
	}
	addrs := make([]string, len(st.Resources))
	for i, r := range st.Resources {
		addrs[i] = r.Addr.String()
	}
	noun := "resources stay"
	if len(addrs) == 1 {
		noun = "resource stays"
	}
	fmt.Fprintf(c.stderr, "tsolab: %d %s, recorded in %s: %s\n", len(addrs), noun, planner.StatePath(dir), strings.Join(addrs, ", "))
	if finish {
		scenario := ""
		if st.Scenario != "" {
			scenario = " -scenario " + st.Scenario
		}
		fmt.Fprintf(c.stderr, "  tsolab apply -name %s%s %s completes the lab; ", st.Lab, scenario, dir)
	} else {
		fmt.Fprint(c.stderr, "  ")
	}
	fmt.Fprintf(c.stderr, "tsolab destroy %s removes what is recorded\n", dir)
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
