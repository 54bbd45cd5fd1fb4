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
// after each interrupt signal has cancelled what it cancels, or was kept
// for the next part of the command, with that signal's number in
// interruptsReceived.
var onInterruptSignal func(n int64)

// interruptsReceived counts the interrupt signals this process has taken
// from the runtime, each counted before it cancels anything: a test hook
// that reads it before sending a signal knows the number its own will
// get (signalAtOpEnv).
var interruptsReceived atomic.Int64

// signalWatch takes the interrupt signals for the whole of a command
// that acts on them (commandWatches), from its start to its end, so that
// none takes Go's default action, the end of the process without its
// cleanup, in the gaps between the parts of the command that watch them
// (watchInterrupts: the plan and apply of apply, the runs and destroy of
// test, each engine of test -engine kernel,sim). A signal that comes in
// a gap is kept, and the next part starts interrupted; one that comes
// after the last part is said on stderr as the command ends (end).
type signalWatch struct {
	sigs  chan os.Signal
	taken chan struct{} // closed once every signal sent to sigs is taken

	mu      sync.Mutex
	parts   map[*int]func(os.Signal) // the watching parts; guarded by mu
	pending []os.Signal              // taken while no part watched; guarded by mu
}

// startSignalWatch starts taking the interrupt signals.
func startSignalWatch() *signalWatch {
	w := &signalWatch{sigs: make(chan os.Signal, 4), taken: make(chan struct{}), parts: map[*int]func(os.Signal){}}
	signal.Notify(w.sigs, interruptSignals()...)
	go func() {
		defer close(w.taken)
		for s := range w.sigs {
			w.take(s)
		}
	}()
	return w
}

// take passes signal s to every watching part, or keeps it for the next.
func (w *signalWatch) take(s os.Signal) {
	received := interruptsReceived.Add(1)
	w.mu.Lock()
	parts := make([]func(os.Signal), 0, len(w.parts))
	for _, p := range w.parts {
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		w.pending = append(w.pending, s)
	}
	w.mu.Unlock()
	for _, p := range parts {
		p(s)
	}
	if onInterruptSignal != nil {
		onInterruptSignal(received)
	}
}

// watch makes part the receiver of the signals to come, after it has
// been given those kept since the last part stopped; unwatch ends that.
func (w *signalWatch) watch(part func(os.Signal)) (unwatch func()) {
	w.mu.Lock()
	kept := w.pending
	w.pending = nil
	key := new(int)
	w.parts[key] = part
	w.mu.Unlock()
	for _, s := range kept {
		part(s)
	}
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.parts, key)
	}
}

// end stops taking signals and says on stderr which came after the
// command's last part had stopped watching: the command ran to its end.
func (w *signalWatch) end(stderr io.Writer) {
	signal.Stop(w.sigs)
	close(w.sigs) // Stop has returned: nothing sends to it any more
	<-w.taken
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.pending {
		fmt.Fprintf(stderr, "tsolab: %s came as the command ended, its work done: nothing was stopped\n", signalName(s))
	}
}

// commandWatches are the commands that act on interruptions: each
// stops its work and cleans up (apply, test), or ends what it runs
// (exec). The others end as a signal's default action ends a process:
// they leave nothing behind.
var commandWatches = map[string]bool{
	"plan": true, "apply": true, "destroy": true, "run": true, "test": true,
	"exec": true, "inspect": true, "calibrate": true,
}

// runCommand runs cmd, named name, with args, and closes its machines;
// interrupt signals are taken from its start to its end when it acts on
// them.
func (c *cli) runCommand(name string, cmd command, args []string) int {
	if commandWatches[name] {
		c.signals = startSignalWatch()
		defer func() {
			passPhase(phaseEnd)
			c.signals.end(c.stderr)
			c.signals = nil
		}()
		passPhase(phaseStart)
	}
	code := cmd.run(c, args)
	c.closeMachines()
	return code
}

// watchInterrupts returns the contexts of a part of a command; with
// stdout, a broken stdout interrupts its work too. Call stop when the
// part ends.
func (c *cli) watchInterrupts(stdout bool) *interrupts {
	passPhase(phaseWatch)
	work, cancelWork := context.WithCancelCause(context.Background())
	cleanup, cancelCleanup := context.WithCancelCause(context.Background())
	w, endWatch := c.signals, func() {}
	if w == nil { // a part run outside main (tests, the agent's exec)
		w = startSignalWatch()
		endWatch = func() { w.end(c.stderr) }
	}
	var mu sync.Mutex
	n := 0 // the interrupt signals this part took; guarded by mu
	unwatchSignals := w.watch(func(s os.Signal) {
		mu.Lock()
		n++
		second := n > 1
		mu.Unlock()
		cancelWork(&interruptError{signalName(s)})
		if second {
			cancelCleanup(&interruptError{signalName(s) + ", a second interrupt"})
		}
	})
	unwatch := func() {}
	if sw, ok := c.stdout.(*stdoutWatch); ok && stdout {
		unwatch = sw.watch(cancelWork)
	}
	return &interrupts{work: work, cleanup: cleanup, stop: func() {
		unwatchSignals()
		unwatch()
		endWatch()
		cancelWork(context.Canceled)
		cancelCleanup(context.Canceled)
		passPhase(phaseUnwatch)
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
