package kernel

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/engine/kernel/capture"
	"github.com/tsolab/tsolab/result"
)

// Counter is how the engine counts send units on the sender's NIC.
type Counter int

const (
	// CounterAuto counts with eBPF where the device layer gets the skbs (package devqueue)
	// and falls back to the AF_PACKET ring, with a Note naming why, when
	// the program cannot be loaded (no BTF, no CAP_BPF/CAP_PERFMON).
	CounterAuto Counter = iota
	// CounterBPF counts with eBPF only; a run fails when it cannot load.
	CounterBPF
	// CounterRing counts with the AF_PACKET ring only (package capture):
	// software-GSO units are seen already cut, and the tap clones every
	// packet it sees.
	CounterRing
	// CounterBoth counts with eBPF and runs the ring beside it to
	// cross-check the wire segments and the interface counter.
	CounterBoth
)

func (c Counter) String() string {
	switch c {
	case CounterAuto:
		return "auto"
	case CounterBPF:
		return "bpf"
	case CounterRing:
		return "ring"
	case CounterBoth:
		return "bpf+ring"
	}
	return fmt.Sprintf("Counter(%d)", int(c))
}

// ParseCounter reads a Counter from its String form.
func ParseCounter(s string) (Counter, error) {
	for c := CounterAuto; c <= CounterBoth; c++ {
		if c.String() == s {
			return c, nil
		}
	}
	return 0, fmt.Errorf("unknown send-unit counter %q: use auto, bpf, ring or bpf+ring", s)
}

// bpf reports whether the counter tries the eBPF program.
func (c Counter) bpf() bool { return c != CounterRing }

// DefaultStallTimeout is Options.StallTimeout when not set: far beyond
// any pause of a working TCP flow in a lab (its RTO backs off from 200 ms),
// short enough that a broken run fails well inside a CI job.
const DefaultStallTimeout = 10 * time.Second

// Options configure the kernel engine.
type Options struct {
	// DisableCapture turns every send-unit counter off, eBPF and
	// AF_PACKET (to measure what counting costs). The send-unit metrics
	// are then 0 and a Note says why.
	DisableCapture bool
	// Counter chooses how send units are counted (CounterAuto: eBPF,
	// else the AF_PACKET ring).
	Counter Counter
	// StallTimeout ends a run that has received nothing for this long
	// (the path broke: a namespace or link vanished, a peer died) with an
	// error instead of waiting on it forever; 0 = DefaultStallTimeout, or
	// the time ten 64 KB units take at the lab's slowest rate when longer.
	StallTimeout time.Duration
	// CaptureRingBytes sizes each capture ring; 0 = capture.DefaultRingBytes.
	CaptureRingBytes int
	// TempDir holds the files sendfile workloads send; "" = os.TempDir().
	TempDir string
	// Remote gives the Worker of each other machine a workload's hosts
	// live on (package remote's, through the machine's agent); nil = a
	// workload with a host on another machine is an error.
	Remote WorkerFactory
	// Capture, when not nil, writes pcapng files, headers only: one file
	// per run and captured NIC, the sender's NIC (its TCP as handed to the
	// device, recorded by the eBPF counter before software GSO; from the
	// AF_PACKET ring when eBPF does not count) and the servers' NICs
	// (incoming TCP as the device hands it up, recorded by the same eBPF
	// program at their TCX ingress, or from the AF_PACKET ring when that
	// cannot load under CounterAuto or the counter is CounterRing; not on
	// loopback, where the sender's file holds both directions). It is called as the counters open and
	// returns where to write the file and its name for
	// WorkloadResult.Captures; the engine closes the writer. (A file of
	// another machine's NIC is written there and copied into the writer
	// when the run ends: Options.Remote gets this function.) A run that
	// fails finishes the files that hold packets (their statistics block
	// names the failure, and the run's error names the files) and
	// discards the others (CaptureDiscarder). It cannot be combined with
	// DisableCapture.
	Capture func(CaptureTarget) (w io.WriteCloser, name string, err error)
	// CaptureMaxBytes caps each capture file: packets after the first
	// that would take it beyond are counted but not written
	// (CaptureFile.Cut); 0 = no cap.
	CaptureMaxBytes int64

	// noBPF (tests only, see export_test.go) fails the eBPF programs of
	// a direction with its error before they load, so that a kernel
	// with TCX tests the fallback to the ring too.
	noBPF func(capture.Direction) error
}

// CaptureDiscarder is a capture writer that can take its file back: the
// engine calls Discard instead of Close on a file a failed run never
// wrote, so no empty file is left behind.
type CaptureDiscarder interface {
	io.WriteCloser
	Discard() error
}

// CaptureTarget says what one capture file will hold, for
// Options.Capture to choose its name.
type CaptureTarget struct {
	Scenario, Workload string
	Repetition         int    // 0-based, as in RunRequest
	NIC                string // the lab's NIC, or lo@HOST for an undeclared loopback
	Interface          string // the device name inside its namespace
	Namespace          string // "" = the process's
	Direction          capture.Direction
}

// Engine runs workloads on the running kernel. It is safe to call Run
// from one goroutine at a time (workloads of a lab run one after another,
// so their measurements do not disturb each other).
type Engine struct {
	opts Options
}

var _ engine.Engine = (*Engine)(nil)

// New returns a kernel engine.
func New(opts Options) *Engine {
	if opts.TempDir == "" {
		opts.TempDir = os.TempDir()
	}
	return &Engine{opts: opts}
}

// Name is "kernel".
func (e *Engine) Name() string { return string(config.EngineKernel) }

// Run runs one workload of an applied scenario once and measures it.
func (e *Engine) Run(ctx context.Context, req engine.RunRequest) (*result.WorkloadResult, error) {
	w := req.Workload
	if w == nil || req.Scenario == nil {
		panic("kernel.Engine.Run: RunRequest needs Scenario and Workload")
	}
	if e.opts.Capture != nil && e.opts.DisableCapture {
		return nil, fmt.Errorf("kernel engine: Options.Capture writes what the send-unit counters see, and DisableCapture turns them off: choose one")
	}
	eps, err := resolve(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w.Range, err)
	}
	x := &execution{eng: e, req: req, w: w, job: Job{
		Scenario: req.Scenario.Name, Repetition: req.Repetition, Workload: w, Endpoints: eps,
		DisableCapture: e.opts.DisableCapture, Counter: e.opts.Counter, Capture: e.opts.Capture != nil,
		CaptureRingBytes: e.opts.CaptureRingBytes, CaptureMaxBytes: e.opts.CaptureMaxBytes,
	}}
	res, err := x.execute(ctx)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// hostMachine is the machine block a host lives on; "" = this machine.
func hostMachine(req engine.RunRequest, host string) string {
	if h := req.Scenario.Host(host); h != nil {
		return h.Machine
	}
	return ""
}

// hostNS is the namespace a host lives in.
func hostNS(req engine.RunRequest, host string) string {
	if h := req.Scenario.Host(host); h != nil && h.Kind == config.HostLocal {
		return ""
	}
	return req.Naming.HostNS(host)
}

// ifName is a NIC's interface name inside its host.
func ifName(n *config.NIC) string {
	if n.Device != "" {
		return n.Device
	}
	return n.Name
}

// loopbackNIC finds a NIC declared for the loopback device of a host
// (`nic "lo" { host = host.X  device = "lo" }`).
func loopbackNIC(sc *config.Scenario, host string) *config.NIC {
	for _, n := range sc.NICs {
		if n.Host == host && ifName(n) == "lo" {
			return n
		}
	}
	return nil
}

// loopbackKey is the offload key of a loopback device no NIC declares.
func loopbackKey(host string) string { return "lo@" + host }

// resolve maps a workload's servers to endpoints.
func resolve(req engine.RunRequest) ([]Endpoint, error) {
	sc, w := req.Scenario, req.Workload
	if sc.Host(w.Client) == nil {
		return nil, fmt.Errorf("client host %q is not in the scenario", w.Client)
	}
	if len(w.Servers) == 0 {
		return nil, fmt.Errorf("no servers: list at least one NIC in servers")
	}
	var eps []Endpoint
	for _, s := range w.Servers {
		if w.Loopback {
			if s != w.Client {
				return nil, fmt.Errorf("loopback server host %q is not the client host %q: loopback traffic stays inside one host", s, w.Client)
			}
			ns := hostNS(req, s)
			key := loopbackKey(s)
			if n := loopbackNIC(sc, s); n != nil {
				key = n.Name
			}
			m := hostMachine(req, s)
			lo := netip.MustParseAddr("127.0.0.1")
			eps = append(eps, Endpoint{
				Server: s, ServerNS: ns, ClientNS: ns, ClientMachine: m, ServerMachine: m,
				Addr: lo, ServerHost: s, ClientAddr: lo,
				CaptureNS: ns, CaptureIf: "lo", SenderNIC: key,
			})
			continue
		}
		nic := sc.NIC(s)
		if nic == nil {
			return nil, fmt.Errorf("server NIC %q is not in the scenario", s)
		}
		if !nic.Address.IsValid() {
			return nil, fmt.Errorf("server NIC %q has no address: give it one", s)
		}
		addr := nic.Address.Addr()
		snd := sc.Route(w.Client, nic)
		if snd == nil {
			return nil, fmt.Errorf("client host %q has no NIC with an address to reach %s", w.Client, addr)
		}
		eps = append(eps, Endpoint{
			Server: s, ServerNS: hostNS(req, nic.Host), ClientNS: hostNS(req, w.Client),
			ServerMachine: hostMachine(req, nic.Host), ClientMachine: hostMachine(req, w.Client),
			Addr: addr, ServerHost: nic.Host, ClientAddr: snd.Address.Addr(),
			CaptureNS: hostNS(req, w.Client), CaptureIf: ifName(snd), SenderNIC: snd.Name,
			RecvIf: ifName(nic),
		})
	}
	return eps, nil
}

// kernelRelease is uname -r.
func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}
