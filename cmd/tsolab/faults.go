package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
)

// killAfterOpsEnv is a hook for the fault-injection test (crash_test.go)
// and for nothing else: with TSOLAB_TEST_KILL_AFTER_OPS=N, tsolab kills
// itself with SIGKILL at the Nth kill point of its provider operations,
// leaving the lab exactly as a crash or a kill -9 there would. Every
// Create, Update and Delete call is two kill points: when it starts (the
// state has recorded what it is about to do) and when it returns (before
// the state records the outcome); and so is every step inside one that
// leaves a namespace file without a namespace (netnsfs.Between). With
// calls in parallel, the others are cut wherever they are. Validate and
// Read change nothing and are not counted. It is read by every command;
// one that makes no provider operation never reaches a kill point.
const killAfterOpsEnv = "TSOLAB_TEST_KILL_AFTER_OPS"

// opKiller counts kill points and kills the process at the chosen one.
type opKiller struct {
	at     int64
	passed atomic.Int64
}

// faults is the kill hook of this process, set from killAfterOpsEnv; nil
// without it.
var faults *opKiller

// setFaults reads killAfterOpsEnv from env; a value that is not a
// positive count is an error.
func setFaults(env []string) error {
	for _, kv := range env {
		v, ok := strings.CutPrefix(kv, killAfterOpsEnv+"=")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return fmt.Errorf("%s=%q: want a positive count of kill points (a test hook: leave it unset)", killAfterOpsEnv, v)
		}
		faults = &opKiller{at: n}
		netnsfs.Between = faults.point
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, signalAtOpEnv+"="); ok {
			s, err := parseSignalAt(v)
			if err != nil {
				return err
			}
			signaler = s
		}
	}
	return nil
}

// signalAtOpEnv is a hook for the interruption tests (interrupt_test.go)
// and for nothing else: with TSOLAB_TEST_SIGNAL_AT_OP=OP:SIG (SIG INT,
// TERM or HUP), the first time the command passes OP it sends the
// process SIG and goes on once the command has taken it (or after
// signalWait, when nothing takes it), so the signal lands there, as a
// user's Ctrl-C at that moment would. OP is a provider call (create,
// update or delete: as it starts) or a boundary between the parts of a
// command (phaseStart, phaseWatch, phaseUnwatch, phaseEnd).
const signalAtOpEnv = "TSOLAB_TEST_SIGNAL_AT_OP"

// The boundaries between the parts of a command that watch interrupt
// signals (watchInterrupts), where a signal once took Go's default
// action: the command's start and end (runCommand), and just before a
// part watches and just after it stopped.
const (
	phaseStart   = "start"
	phaseWatch   = "watch"
	phaseUnwatch = "unwatch"
	phaseEnd     = "end"
)

// passPhase passes the boundary named phase, for the signal hook.
func passPhase(phase string) {
	if signaler != nil {
		signaler.at(phase)
	}
}

// signalWait bounds the wait for a command to act on the hook's signal.
const signalWait = 10 * time.Second

// opSignaler sends the signal of signalAtOpEnv at the first call of op.
type opSignaler struct {
	op      string // a provider call or a phase (signalAtOpEnv)
	sig     unix.Signal
	once    sync.Once
	handled chan int64 // the number of each interrupt signal acted on
}

// signaler is the signal hook of this process, set from signalAtOpEnv;
// nil without it.
var signaler *opSignaler

func parseSignalAt(v string) (*opSignaler, error) {
	op, name, _ := strings.Cut(v, ":")
	sigs := map[string]unix.Signal{"INT": unix.SIGINT, "TERM": unix.SIGTERM, "HUP": unix.SIGHUP}
	sig, ok := sigs[name]
	ops := []string{"create", "update", "delete", phaseStart, phaseWatch, phaseUnwatch, phaseEnd}
	if !slices.Contains(ops, op) || !ok {
		return nil, fmt.Errorf("%s=%q: want OP:SIG, OP one of %s, SIG INT, TERM or HUP (a test hook: leave it unset)", signalAtOpEnv, v, strings.Join(ops, ", "))
	}
	s := &opSignaler{op: op, sig: sig, handled: make(chan int64, 8)}
	onInterruptSignal = func(n int64) {
		select {
		case s.handled <- n:
		default:
		}
	}
	return s, nil
}

// at sends the signal the first time op is passed and waits for it to
// be taken: for the signal numbered after those received before it, not
// for an earlier signal's token (a second interrupt sent while the first
// one's was still unread went on at once, and the destroy could finish
// before its signal was taken).
func (s *opSignaler) at(op string) {
	if op != s.op {
		return
	}
	s.once.Do(func() {
		want := interruptsReceived.Load() + 1
		unix.Kill(os.Getpid(), s.sig)
		deadline := time.After(signalWait)
		for {
			select {
			case n := <-s.handled:
				if n >= want {
					return
				}
			case <-deadline:
				return
			}
		}
	})
}

// point passes one kill point, and kills the process if it is the chosen
// one.
func (k *opKiller) point() {
	if k.passed.Add(1) != k.at {
		return
	}
	unix.Kill(os.Getpid(), unix.SIGKILL)
	select {} // SIGKILL is not handled: nothing runs after it
}

// withFaults wraps every provider in provs with the kill hook, when set.
func withFaults(provs map[provider.Kind]provider.Interface) map[provider.Kind]provider.Interface {
	for k, p := range provs {
		if faults != nil {
			p = killingProvider{Interface: p, k: faults}
		}
		if signaler != nil {
			p = signalingProvider{Interface: p, s: signaler}
		}
		provs[k] = p
	}
	return provs
}

// signalingProvider passes the signal hook at each change.
type signalingProvider struct {
	provider.Interface
	s *opSignaler
}

func (p signalingProvider) Create(ctx context.Context, req provider.CreateRequest) provider.CreateResponse {
	p.s.at("create")
	return p.Interface.Create(ctx, req)
}

func (p signalingProvider) Update(ctx context.Context, req provider.UpdateRequest) provider.UpdateResponse {
	p.s.at("update")
	return p.Interface.Update(ctx, req)
}

func (p signalingProvider) Delete(ctx context.Context, req provider.DeleteRequest) provider.DeleteResponse {
	p.s.at("delete")
	return p.Interface.Delete(ctx, req)
}

// killingProvider passes a kill point before and after each change.
type killingProvider struct {
	provider.Interface
	k *opKiller
}

func (p killingProvider) Create(ctx context.Context, req provider.CreateRequest) provider.CreateResponse {
	p.k.point()
	defer p.k.point()
	return p.Interface.Create(ctx, req)
}

func (p killingProvider) Update(ctx context.Context, req provider.UpdateRequest) provider.UpdateResponse {
	p.k.point()
	defer p.k.point()
	return p.Interface.Update(ctx, req)
}

func (p killingProvider) Delete(ctx context.Context, req provider.DeleteRequest) provider.DeleteResponse {
	p.k.point()
	defer p.k.point()
	return p.Interface.Delete(ctx, req)
}
