package kernel

import (
	"context"
	"io"
	"net/netip"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine/kernel/capture"
	"github.com/tsolab/tsolab/result"
)

// Worker is one machine's part of a workload's run: the sockets of the
// hosts that live there, the threads that send and receive on them, the
// send-unit counters and captures of their NICs, and the machine's CPU
// accounting. The engine drives one Worker per machine a workload
// touches and does not know where it runs: NewLocalWorker's runs in this
// process (every host on this machine: one Worker holds both ends),
// package remote's on another machine, through its agent, whose
// LocalWorker does the same work there.
//
// The calls come in this order: Listen, Dial and Accept per server
// endpoint (Job.Endpoints, by index), Start (the server machines' before
// the client's), Progress, Stop and Wait while the run goes, Finish once
// (after Wait, or with Failed set after a failure), Close always.
type Worker interface {
	// Listen opens endpoint ep's listening socket in its server host's
	// namespace and returns its port.
	Listen(ctx context.Context, ep int) (uint16, error)
	// Dial opens n client connections to endpoint ep at port from the
	// client host's namespace; the first returns the sender's MSS.
	Dial(ctx context.Context, ep int, port uint16, n int) (mss int, err error)
	// Accept takes n connections on endpoint ep's listener.
	Accept(ctx context.Context, ep int, n int) error
	// Start opens the counters and captures of taps and recv (the sender
	// NICs and, with capture files, the server NICs on this machine),
	// snapshots the CPU accounting and lets the workers go.
	Start(ctx context.Context, req StartRequest) error
	// Progress reads what the run has done so far, for the sampler.
	Progress(ctx context.Context) (Progress, error)
	// Stop shuts the clients' sending side at a stream's deadline, or
	// every socket down (Abort) so that blocked workers return.
	Stop(ctx context.Context, how Stop) error
	// Wait returns when every worker on the machine has ended.
	Wait(ctx context.Context) (WaitReply, error)
	// Finish stops the counters and captures and reports what the
	// machine measured and reads back (offloads, provenance) of nics and
	// hosts. Capture files come back as the engine's Options.Capture
	// names them.
	Finish(ctx context.Context, req FinishRequest) (Report, error)
	// Close frees the sockets, counters and files; it is safe after any
	// call, and more than once.
	Close() error
}

// WorkerFactory returns the Worker of another machine (the lab's machine
// block name) for one run of job; capture opens the controller's capture
// files (Options.Capture), nil when there are none.
type WorkerFactory func(ctx context.Context, machine string, job Job, capture CaptureFunc) (Worker, error)

// CaptureFunc opens a capture file: Options.Capture's form.
type CaptureFunc func(CaptureTarget) (w io.WriteCloser, name string, err error)

// Job is what every Worker of a run knows of it: the workload, its
// endpoints, and the engine's options that apply on each machine.
type Job struct {
	Scenario   string
	Repetition int
	Workload   *config.Workload
	Endpoints  []Endpoint

	DisableCapture   bool
	Counter          Counter
	Capture          bool // capture files are written (Options.Capture)
	CaptureRingBytes int
	CaptureMaxBytes  int64
}

// Endpoint is one server of a workload and where its client and capture
// live.
type Endpoint struct {
	Server    string     // the NIC (or, on loopback, host) named in servers
	ServerNS  string     // namespace of the server host ("" = the process's)
	ClientNS  string     // namespace of the client host
	Addr      netip.Addr // address the server listens on
	CaptureNS string     // namespace of the sender NIC
	CaptureIf string     // the sender NIC's interface name
	SenderNIC string     // offload key of the sender NIC
	RecvIf    string     // the server NIC's interface name; "" on loopback
	// ClientMachine and ServerMachine are the machine blocks the client
	// and server hosts live on; "" = this machine.
	ClientMachine, ServerMachine string
	// ServerHost is the server NIC's host; ClientAddr the address of the
	// client's NIC on the route to Addr (127.0.0.1 on loopback). The
	// engine deletes the cached TCP metrics of ClientAddr in the
	// server's namespace and of Addr in the client's before connecting
	// (forgetPeers).
	ServerHost string
	ClientAddr netip.Addr
}

// TapSpec is one NIC whose packets a Worker counts or captures.
type TapSpec struct {
	NS, Ifname, Key string
	Dir             capture.Direction
	Ports           []uint16
}

// StartRequest starts a Worker's part of the run.
type StartRequest struct {
	MSS  int
	Taps []TapSpec // sender NICs: their send units are counted
	Recv []TapSpec // server NICs, captured with capture files only
}

// Progress is a Worker's part of one sample.
type Progress struct {
	Received int64 // tcpi_bytes_received summed over its sockets
	// Cwnd is the first client socket's congestion window (HasCwnd: the
	// Worker holds the client sockets).
	Cwnd    float64
	HasCwnd bool
	// Units and UnitBytes are the eBPF counters' running totals
	// (Counting: they run on every sender NIC of the Worker).
	Units, UnitBytes int64
	Counting         bool
}

// Stop is how Worker.Stop stops the run.
type Stop int

const (
	StopSending Stop = iota // shut the clients' sending side (the deadline)
	Abort                   // shut every socket down
)

// WaitReply is how a Worker's workers ended.
type WaitReply struct {
	// Elapsed runs from Start's letting the workers go to the last
	// worker's end, on the Worker's clock.
	Elapsed time.Duration
	// Err is the first worker's error ("" = none).
	Err string
}

// FinishRequest ends a Worker's part of the run.
type FinishRequest struct {
	// Failed, when not "", says why the run failed: the capture files
	// that hold packets are finished saying so, the others discarded.
	Failed string
	NICs   []NICRef  // read back their offloads and provenance
	Hosts  []HostRef // read back their TCP sysctls
}

// NICRef names an interface to read back.
type NICRef struct {
	Name, Host, NS, Ifname string
}

// HostRef names a host to read back.
type HostRef struct {
	Name, NS string
}

// TapReport is what a Report says of one tap: its counts and capture
// file (File, named by the Worker until it brings the file back).
type TapReport = tapResult

// Report is what one Worker measured.
type Report struct {
	Kernel string // uname -r of the machine
	// Boot is the machine's boot ID: two Workers with the same one share
	// a kernel, and its CPU accounting is counted once.
	Boot     string
	Received int64            // payload read by its workers
	CPU      [2]time.Duration // its workers' thread CPU by side
	// Process is the CPU time of every thread of the Worker's process
	// over the run; Outside and Softirqd as in measurement.
	Process, Outside, Softirqd time.Duration
	TCP                        [2]tcpTotals
	Latencies                  []time.Duration
	Taps, Recv                 []tapResult
	BPFErr, RecvBPFErr         string
	Offloads                   map[string]map[string]bool
	NICs                       []result.NIC
	Sysctls                    map[string]map[string]string
	Notes                      []string
	// CC is the congestion control the Worker's client sockets ran
	// (clientCongestion); "" when it holds none.
	CC string
	// TCPMetricsDeleted holds, by host, the addresses whose cached TCP
	// metrics the Worker deleted before connecting (an earlier
	// connection had left them).
	TCPMetricsDeleted map[string][]string
	// Load is how busy the machine was over the run (Machine unset).
	Load result.Load
}
