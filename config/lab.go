package config

import (
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// EngineKind selects how workloads run.
type EngineKind string

const (
	EngineKernel EngineKind = "kernel" // real sockets in real namespaces
	EngineSim    EngineKind = "sim"    // the deterministic TSO model
)

// Lab is a loaded, validated lab directory.
type Lab struct {
	Name        string
	Description string
	Engine      EngineKind // as declared; the CLI's -engine overrides it
	// Measure is how the lab's workloads are measured unless a workload
	// says otherwise; command-line flags win over both.
	Measure Measure
	// Strict: an inconclusive comparison fails the test (as -strict).
	Strict bool
	Dir    string // the lab directory

	// Sources maps each file name to its bytes, for diagnostic snippets.
	Sources map[string][]byte

	Variables []*Variable   // in declaration order, with their final values
	Matrix    []*MatrixAxis // in declaration order; empty means one scenario

	// Scenarios has one entry per matrix cell, in the cartesian order of
	// the axes (the last axis varies fastest). A lab without a matrix has
	// exactly one scenario, named "default".
	Scenarios []*Scenario

	Expects []*Expect

	// Observed are figures measured elsewhere, and Calibrations the
	// model's parameters fitted to some of them (docs/engine.md).
	Observed     []*Observed
	Calibrations []*Calibration
}

// Scenario returns the scenario with the given name, or nil.
func (l *Lab) Scenario(name string) *Scenario {
	for _, s := range l.Scenarios {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Variable is a declared input with its resolved value.
type Variable struct {
	Name        string
	Description string
	Type        cty.Type
	Value       cty.Value
	DeclRange   hcl.Range
}

// MatrixAxis is one list-valued matrix parameter.
type MatrixAxis struct {
	Name   string
	Values []cty.Value
	Range  hcl.Range
}

// MatrixValue is one axis fixed to one value inside a scenario.
type MatrixValue struct {
	Name  string
	Value cty.Value
}

// Scenario is one matrix cell: the whole topology and the workloads with
// every expression evaluated for that cell.
type Scenario struct {
	// Name is the matrix values in declaration order, "tso=false,mtu=9000",
	// or "default" for a lab without a matrix.
	Name   string
	Matrix []MatrixValue

	Machines  []*Machine // the other machines the lab reaches over SSH
	Hosts     []*Host
	Switches  []*Switch
	NICs      []*NIC
	Workloads []*Workload
}

// Machine finds a machine by name.
func (s *Scenario) Machine(name string) *Machine {
	for _, m := range s.Machines {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Host finds a host by name.
func (s *Scenario) Host(name string) *Host {
	for _, h := range s.Hosts {
		if h.Name == name {
			return h
		}
	}
	return nil
}

// NIC finds a NIC by name.
func (s *Scenario) NIC(name string) *NIC {
	for _, n := range s.NICs {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Switch finds a switch by name.
func (s *Scenario) Switch(name string) *Switch {
	for _, w := range s.Switches {
		if w.Name == name {
			return w
		}
	}
	return nil
}

// Workload finds a workload by name.
func (s *Scenario) Workload(name string) *Workload {
	for _, w := range s.Workloads {
		if w.Name == name {
			return w
		}
	}
	return nil
}

// HostKind says whether a host is a namespace tsolab owns or the machine
// itself.
type HostKind string

const (
	HostNamespace HostKind = "netns" // a network namespace tsolab creates and deletes
	HostLocal     HostKind = "local" // the machine's own namespace: configured, never created or deleted
)

// Machine is another machine a lab reaches over SSH (the machine block):
// its hosts live there, made by a tsolab agent (see package remote). It
// holds no secret: the key is the identity file's or the SSH agent's.
type Machine struct {
	Name string
	Reach

	Range hcl.Range // the machine block
}

// Reach is how to reach a machine over SSH: what its machine block says,
// and what a lab's state records of it, so that destroy needs no lab
// file. It holds no secret (no password, no key): the key is read from
// IdentityFile, or asked of the SSH agent, when connecting.
type Reach struct {
	Address      string `json:"address"`                 // an IP address or a DNS name
	Port         int    `json:"port,omitempty"`          // 0 = 22
	User         string `json:"user,omitempty"`          // "" = the user tsolab runs as
	IdentityFile string `json:"identity_file,omitempty"` // "" = the SSH agent at $SSH_AUTH_SOCK
	KnownHosts   string `json:"known_hosts,omitempty"`   // "" = ~/.ssh/known_hosts
	Sudo         bool   `json:"sudo,omitempty"`          // run the agent with sudo -n
}

// Login says whom tsolab logs in as, where: "root@10.1.2.3",
// "tso@[fe80::1]:2222"; "10.1.2.3" when User is "" (the user tsolab
// runs as).
func (r Reach) Login() string {
	addr := r.Address
	if r.Port != 0 && r.Port != 22 {
		addr = net.JoinHostPort(r.Address, strconv.Itoa(r.Port))
	}
	if r.User == "" {
		return addr
	}
	return r.User + "@" + addr
}

// Reaches returns how to reach each machine the scenario declares, by
// name; nil when it declares none.
func (s *Scenario) Reaches() map[string]Reach {
	if len(s.Machines) == 0 {
		return nil
	}
	out := make(map[string]Reach, len(s.Machines))
	for _, m := range s.Machines {
		out[m.Name] = m.Reach
	}
	return out
}

// Host is a machine of the lab.
type Host struct {
	Name string
	Kind HostKind
	// Machine is the machine block the host lives on; "" = the machine
	// tsolab runs on.
	Machine string
	// Sysctl holds "net." sysctls applied inside the host's namespace.
	Sysctl map[string]string

	// The attributes below describe the host to the sim engine. The kernel
	// engine runs the machine's own kernel and reports them as not applicable.

	Stack        string            // stack profile: "linux-2.6.12", "linux-6", "freebsd-10", ...; "" = engine default
	StackOptions map[string]string // profile options, e.g. {"size_goal_modulo" = "false"}
	CPU          string            // CPU cost profile name; "" = engine default
	Cores        int               // CPU cores; 0 = engine default
	// CoresOf names the host whose cores this one runs on ("" = its
	// own): namespaces of one machine, whose veths between them have no
	// wire and receive in the sender's context.
	CoresOf    string
	Bus        Rate // I/O bus limit (PCI-X ~7.5gbit); 0 = none
	DelayedAck bool // receiver delays ACKs (default true)
	// Scheduler names the scheduler model of the CPU profile the host
	// runs ("c1-idle"); "" or "none" = none (FIFO cores).
	Scheduler string

	Range hcl.Range // the host block
	// AttrRanges maps attribute names ("cpu", "scheduler") to where they
	// are set, for errors about their values.
	AttrRanges map[string]hcl.Range
}

// Switch is a Linux bridge in a namespace of its own.
type Switch struct {
	Name string
	// Machine is where the switch lives: the machine of its ports'
	// hosts, which must all be on one ("" = the machine tsolab runs on,
	// and for a switch without ports).
	Machine string
	Range   hcl.Range
}

// NIC is one network interface of a host.
type NIC struct {
	Name string
	Host string // host name

	// Exactly one of Connect, Peer, Device, or none (a NIC that is the
	// peer of another NIC's Peer) is set.
	Connect string // switch name: a veth to the switch
	Peer    string // NIC name: a back-to-back veth pair with that NIC
	Device  string // an existing physical device, adopted (local hosts only)

	Address netip.Prefix  // zero if none
	MTU     int           // 0 = leave as is (1500 for new veths)
	Rate    Rate          // egress shaping (tbf); 0 = none
	Delay   time.Duration // one-way propagation delay; kernel needs sch_netem
	Queue   int64         // egress queue limit in bytes for shaping; 0 = default
	Offload Offloads

	Range hcl.Range // the nic block
	// AttrRanges maps attribute names ("mtu", "offload.tso") to where they
	// were written, for diagnostics raised after loading.
	AttrRanges map[string]hcl.Range
}

// WorkloadKind is what a workload does.
type WorkloadKind string

const (
	Stream   WorkloadKind = "stream"   // bulk transfer
	RR       WorkloadKind = "rr"       // request/response transactions
	Sendfile WorkloadKind = "sendfile" // zero-copy from a file
)

// Workload is traffic the engine runs.
type Workload struct {
	Name   string
	Kind   WorkloadKind
	Client string // host name of the sender
	// Servers are NIC names; with Loopback they are host names and the
	// traffic runs over that host's loopback.
	Servers  []string
	Loopback bool

	Connections int           // per server; default 1
	WriteSize   int           // bytes per write/send call; default 65536
	ReadSize    int           // stream/sendfile: bytes the receiver asks for per read call; default 131072 (iperf3's)
	Duration    time.Duration // run time; zero when Bytes is set
	Bytes       int64         // total payload per connection; zero when Duration is set
	SndBuf      int           // SO_SNDBUF bytes; 0 = system default
	RcvBuf      int           // SO_RCVBUF bytes; 0 = system default
	NoDelay     bool          // TCP_NODELAY
	Cork        bool          // TCP_CORK
	CC          string        // congestion control by name; "" = default

	RequestSize  int // rr: bytes per request
	ResponseSize int // rr: bytes per response
	Concurrency  int // rr: outstanding transactions (connections) per server

	FileSize int64 // sendfile: bytes in the file
	Rate     Rate  // sendfile/stream: pacing rate (SO_MAX_PACING_RATE); 0 = none

	// Measure overrides the lab's Measure for this workload.
	Measure Measure

	Range hcl.Range
}

// DefaultWriteSize and DefaultReadSize are a workload's write and read
// calls when it gives no write_size or read_size (iperf3 reads 128 KiB
// a call): one value for both engines.
const (
	DefaultWriteSize = 65536
	DefaultReadSize  = 128 << 10
)

// WriteCall is the bytes a sender asks to write a call: write_size, or
// DefaultWriteSize.
func (w *Workload) WriteCall() int {
	if w.WriteSize > 0 {
		return w.WriteSize
	}
	return DefaultWriteSize
}

// ReadCall is the bytes a stream or sendfile receiver asks for a call:
// read_size, or DefaultReadSize.
func (w *Workload) ReadCall() int {
	if w.ReadSize > 0 {
		return w.ReadSize
	}
	return DefaultReadSize
}

// MinRunsForCI is the least number of runs with a finite 95% confidence
// interval of the median: fewer give ±Inf (see package outcome).
const MinRunsForCI = 6

// Measure is how many times a workload runs in each scenario. Zero fields
// are not set, and the next level decides: flag, then workload, then lab.
type Measure struct {
	// Repeat is the number of runs per scenario; with Confidence, the
	// most.
	Repeat int
	// Confidence stops a workload's runs once the 95% confidence interval
	// of its main metric is within this many percent of the median
	// (netperf's -I 95,N).
	Confidence float64
	// RepeatAt and ConfidenceAt are the repeat and confidence attributes
	// that set Repeat and Confidence (zero when unset, or set by a flag).
	RepeatAt, ConfidenceAt hcl.Range
}

// Or returns m with its unset fields taken from d.
func (m Measure) Or(d Measure) Measure {
	if m.Repeat == 0 {
		m.Repeat, m.RepeatAt = d.Repeat, d.RepeatAt
	}
	if m.Confidence == 0 {
		m.Confidence, m.ConfidenceAt = d.Confidence, d.ConfidenceAt
	}
	return m
}

// Expect is an expected outcome, evaluated against results.
type Expect struct {
	Name     string
	Workload string
	// When filters scenarios (nil = all). Evaluated with matrix and var.
	When hcl.Expression
	// Condition must be true; evaluated with result, scenario(), baseline,
	// matrix and var.
	Condition hcl.Expression
	Message   string
	Range     hcl.Range
}
