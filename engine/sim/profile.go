package sim

import (
	"fmt"
	"math/bits"
	"sort"
	"strings"

	"github.com/tsolab/tsolab/config"
)

// nagleMode is tp->nonagle: how the Nagle test treats a small buffer.
type nagleMode uint8

const (
	nagleOn   nagleMode = 0 // Nagle with Minshall's variant applies
	nagleOff  nagleMode = 1 // TCP_NAGLE_OFF: TCP_NODELAY
	nagleCork nagleMode = 2 // TCP_NAGLE_CORK: TCP_CORK, hold small buffers
	naglePush nagleMode = 4 // TCP_NAGLE_PUSH: this call must push everything it may
)

// stopReason is why one pass of the output path stopped with data unsent.
type stopReason uint8

const (
	stopNone     stopReason = iota
	stopCwnd                // the congestion window is full (tcp_cwnd_test)
	stopRwnd                // the receive window is full (tcp_snd_wnd_test)
	stopNagle               // Nagle/Minshall held a small buffer (tcp_nagle_test; FreeBSD's silly-window test)
	stopDefer               // TSO deferral waited for a larger send (tcp_tso_should_defer)
	stopSplit               // a send was cut short of its buffer to fit the windows (tso_fragment; FreeBSD's trim)
	stopSndbuf              // the application waited for send-buffer space (sk_stream_wait_memory)
	stopPacing              // the pacing rate held the next send (SO_MAX_PACING_RATE)
	stopTSQ                 // TCP Small Queues held the next send (tcp_small_queue_check)
	stopAutocork            // tcp_push left a small tail for the TSQ handler (tcp_should_autocork)
	numStopReasons
)

var stopNames = [numStopReasons]string{"", "cwnd", "rwnd", "nagle", "defer", "split", "sndbuf", "pacing", "tsq", "autocork"}

func (r stopReason) String() string { return stopNames[r] }

// profile is one stack profile: a named choice of strategies. Nothing in
// the model asks "which profile is this"; it calls the strategy.
type profile struct {
	name    string
	goal    sizeGoal         // how large tcp_sendmsg builds a buffer
	output  outputPath       // tcp_write_xmit or FreeBSD's tcp_output
	push    pushPolicy       // __tcp_push_pending_frames
	acks    ackPolicy        // the receiver's ACK policy
	cc      congestionChoice // congestion control of one connection, and those a workload may name
	use     windowUse        // whether the window is used: cwnd growth, tcp_cwnd_validate
	wake    wakePolicy       // when a writer blocked on the send buffer wakes
	bufs    sockbufPolicy    // socket buffer sizes, autosizing and window scale
	layout  skbLayout        // where tcp_sendmsg puts the payload (select_size): DMA buffers a unit
	softGSO bool             // sk_can_gso on an SG+CSUM device without TSO (2.6.27's software GSO)
	// gsoAlways: TCP builds GSO super-packets whatever the device's
	// flags (sk_setup_caps sets NETIF_F_GSO unconditionally since Linux
	// 4.19, "tcp: switch to GSO being always on"); the device flags only
	// decide whether the NIC or validate_xmit_skb cuts them.
	gsoAlways bool
	gro       bool // the receive path coalesces (GRO); otherwise only hardware LRO does
	initCw    func(mss int64) int64
	rtoMin    int64 // minimum RTO, ns (TCP_RTO_MIN, FreeBSD tcp_rexmit_min)
	loMTU     int   // MTU of the loopback device
	divides   bool  // tcp_current_mss divides by the MSS (charged as CPUProfile.Divide)
	// tsq is TCP Small Queues (tsq.go; Linux 3.6 and later), nil
	// where the stack has none.
	tsq *smallQueues
	// ithreads: the NIC's interrupt handler runs in a kernel thread
	// that the interrupt wakes (FreeBSD's ithreads: ixgbe's queue
	// handler is not a filter), so a host's scheduler delays and charges
	// it as any woken thread; Linux runs NAPI in softirq context on the
	// interrupted core, which no scheduler wakes.
	ithreads bool
	// slice is how long the kernel's scheduler lets a runnable thread
	// wait behind the one running on its core (sched.go).
	slice timeslice
	// localCongestion: a unit the sender's own queue (its NIC's qdisc,
	// a shaper's) has no room for is not sent: __tcp_transmit_skb gets
	// NET_XMIT_DROP, calls tcp_enter_cwr and returns the error, and
	// tcp_write_xmit stops with the buffer at the send head (Linux
	// 2.6.12's tcp_transmit_skb already did). Without it (FreeBSD, whose
	// ENOBUFS rule, snd_cwnd = one segment, is not modelled) the queue
	// drops the frames and they are lost.
	localCongestion bool
}

// holds reports whether the stack has offload f at all. A device flag
// for a feature the stack lacks is never in force, and results do not
// report it: GSO came with Linux 2.6.18 (2.6.27 here) and GRO with 2.6.29
// (linux-6 here); FreeBSD has neither, only the NIC's LRO.
func (p *profile) holds(f config.Offload) bool {
	switch f {
	case offGSO:
		return p.softGSO || p.gsoAlways
	case offGRO:
		return p.gro
	}
	return true
}

// buildsGSO reports whether TCP builds multi-segment buffers for a NIC
// with offloads off (sk_can_gso): with TSO, with software GSO where the
// stack has it and the device does SG and checksums, or always (linux-6).
func (p *profile) buildsGSO(off config.OffloadSet) bool {
	return off.Has(offTSO) || p.gsoAlways || p.softGSO && off.Has(offGSO) && off.Has(offSG) && off.Has(offTxCsum)
}

// coalesces reports whether the receive path merges frames on a NIC with
// offloads off: the NIC's LRO, or GRO where the stack has it.
func (p *profile) coalesces(off config.OffloadSet) bool {
	return off.Has(offLRO) || p.holds(offGRO) && off.Has(offGRO)
}

// sockbufPolicy is how a stack sizes a socket's buffers.
type sockbufPolicy interface {
	// defaults are the send and receive buffers of a socket whose
	// workload sets none, and whether that send buffer autosizes.
	defaults() (snd, rcv int64, autoSnd bool)
	// refuse says why setsockopt(opt, size) leaves the buffer as it
	// was, for a note, or "" when it grants size.
	refuse(opt string, size int64, host string) string
	// sndAutosize grows an autosizing send buffer as tcp_output does.
	sndAutosize(s *sender, sendwin, off int64)
	// sndExpand grows an autosizing send buffer as Linux does when the
	// connection is made and when an ACK frees room for a writer that
	// found it full (tcp_sndbuf_expand).
	sndExpand(ep *endpoint)
	// wscale is the window scale a receiver with buffer rcv asks for.
	wscale(rcv int64) uint
	// rcvAutoMax is the most a receive buffer the workload does not set
	// grows to (Linux's DRS, rcvSpaceAdjust), 0 when it stays as it is.
	rcvAutoMax() int64
	// mssRound is the send and receive buffers once the connection's
	// MSS (the segment's payload) is known.
	mssRound(snd, rcv, mss int64) (int64, int64)
}

// linuxSockbufs: the send buffer stays as set, or, with sndMax (the
// profile's tcp_wmem[2]), starts at snd (tcp_wmem[1]) and grows by
// tcp_sndbuf_expand when the workload does not set it (sndExpand); the
// receive buffer stays as set too, or, with rcvMax (the profile's
// tcp_rmem[2]), starts at rcv (tcp_rmem[1]) and grows by DRS when the
// workload does not set it. The window scale follows the receive buffer
// (world.sockbufs: the largest it may grow to).
type linuxSockbufs struct{ snd, sndMax, rcv, rcvMax int64 }

func (b linuxSockbufs) defaults() (int64, int64, bool)    { return b.snd, b.rcv, b.sndMax > 0 }
func (linuxSockbufs) refuse(string, int64, string) string { return "" }
func (linuxSockbufs) sndAutosize(*sender, int64, int64)   {}
func (b linuxSockbufs) rcvAutoMax() int64                 { return b.rcvMax }
func (linuxSockbufs) wscale(rcv int64) uint               { return windowScale(rcv) }

// sndExpand is tcp_sndbuf_expand (net/ipv4/tcp_input.c), run by
// tcp_init_buffer_space when the connection is made and by tcp_new_space
// when an ACK frees room for a writer that found the buffer full
// (SOCK_NOSPACE) while fewer segments are in flight than the cwnd
// (tcp_should_expand_sndbuf): the buffer grows to 2 x max(TCP_INIT_CWND,
// cwnd) x per_mss, at most tcp_wmem[2], and never shrinks. per_mss is the
// worst case of an MSS in an skb of its own: max(mss_clamp, mss_cache)
// with MAX_TCP_HEADER and skb_shared_info, rounded up to a power of two,
// and struct sk_buff; 2 is CUBIC's (and Reno's) factor (no
// ca_ops->sndbuf_expand). per_mss is 2304 bytes at MTU 1500 and 16640 at
// MTU 9000 on this machine's kernel (6.18, x86-64): `ss -tinm` in
// examples/kernel-calibration's sender namespace behind the tbf gave
// sk_sndbuf (tb) = 2 x cwnd x that in every sample (cwnd 228-516 and
// 40-50; docs/engine.md, The writer's sleep), so MAX_TCP_HEADER and the
// aligned skb_shared_info (320) come to at most 588 bytes: MAX_TCP_HEADER
// 256 (a 320 would make it 4352). The kernel's sk_sndbuf bounds
// sk_wmem_queued, the queue's truesize; the model's bounds its payload,
// which for the write queue's 64 KB skbs is 2% less (skbOverhead a
// buffer).
func (b linuxSockbufs) sndExpand(ep *endpoint) {
	s := &ep.snd
	if !s.sndAuto {
		return
	}
	const maxTCPHeader, shinfo, skbStruct = 256, 320, 256 // x86-64, SKB_DATA_ALIGNed
	perMSS := int64(1) << bits.Len64(uint64(ep.mss+tcpOptLen+maxTCPHeader+shinfo-1))
	perMSS += skbStruct
	if mem := 2 * max(10, s.cwnd) * perMSS; s.sndBuf < mem {
		s.sndBuf = min(mem, b.sndMax)
	}
}

func (linuxSockbufs) mssRound(snd, rcv, _ int64) (int64, int64) {
	return snd, rcv
}

// bsdSockbufs is FreeBSD's socket-buffer configuration from its sysctls:
// the sizes tcp_attach reserves for a new socket (soreserve with
// net.inet.tcp.sendspace and recvspace: defaults, not fixed sizes), send
// buffer autosizing in tcp_output (sendbuf_auto, _inc, _max; on unless the
// application sets SO_SNDBUF), and kern.ipc.maxsockbuf (sb_max), which
// bounds every sbreserve, the mbuf accounting (sb_mbmax) and the window
// scale the receiver asks for.
type bsdSockbufs struct {
	sendspace, recvspace int64
	sendAuto             bool
	sendInc, sendMax     int64
	maxsockbuf           int64
}

// What one received frame costs a FreeBSD socket buffer's mbuf accounting
// (sballoc's sb_mbcnt): an mbuf (MSIZE) and a 2 KB cluster (MCLBYTES).
const (
	bsdMSIZE    = 256
	bsdMCLBYTES = 2048
)

// maxAdj is sb_max_adj: the largest buffer sbreserve_locked grants,
// sb_max scaled by MCLBYTES / (MSIZE + MCLBYTES).
func (b *bsdSockbufs) maxAdj() int64 { return b.maxsockbuf * bsdMCLBYTES / (bsdMSIZE + bsdMCLBYTES) }

func (b *bsdSockbufs) defaults() (int64, int64, bool) {
	return b.sendspace, b.recvspace, b.sendAuto
}

// refuse: sbreserve grants no more than sb_max_adj; setsockopt fails with
// ENOBUFS and the socket keeps its default.
func (b *bsdSockbufs) refuse(opt string, size int64, host string) string {
	if size <= b.maxAdj() {
		return ""
	}
	return fmt.Sprintf("%s %d on host %s is more than kern.ipc.maxsockbuf lets sbreserve grant (%d): FreeBSD's setsockopt fails with ENOBUFS and the socket keeps its default; raise stack_options.maxsockbuf",
		opt, size, host, b.maxAdj())
}

// wscale follows sb_max (syncache_add, tcp_connect: the least scale that
// reaches sb_max), not the buffer.
func (b *bsdSockbufs) wscale(int64) uint { return windowScale(b.maxsockbuf) }

// mssRound mirrors tcp_mss (sys/netinet/tcp_input.c), run when the SYN
// or SYN-ACK brings the peer's MSS: "Make the socket buffers an integral
// number of mss units". Each buffer of at least one segment is rounded up
// to whole segments (at most sb_max), and sbreserve_locked grants that
// unless it exceeds sb_max_adj. The hostcache's sendpipe and recvpipe,
// which would first replace a buffer of the default size, are not
// modelled (the seed 003 runs expired the hostcache). An autosizing send
// buffer then grows from the rounded size and stops at sendbuf_max,
// which need not be whole segments.
func (b *bsdSockbufs) mssRound(snd, rcv, mss int64) (int64, int64) {
	return b.roundUp(snd, mss), b.roundUp(rcv, mss)
}

func (b *bsdSockbufs) roundUp(buf, mss int64) int64 {
	if mss <= 0 || buf < mss {
		return buf
	}
	n := min((buf+mss-1)/mss*mss, b.maxsockbuf)
	if n <= buf || n > b.maxAdj() {
		return buf
	}
	return n
}

// rcvAutoMax: recvbuf_auto is not modelled (docs/engine.md).
func (b *bsdSockbufs) rcvAutoMax() int64 { return 0 }

// check mirrors tcp_attach's soreserve: a sendspace or recvspace beyond
// sb_max_adj makes every TCP socket fail with ENOBUFS.
func (b *bsdSockbufs) check() error {
	for _, sp := range []struct {
		name string
		v    int64
	}{{"sendspace", b.sendspace}, {"recvspace", b.recvspace}} {
		if sp.v > b.maxAdj() {
			return fmt.Errorf("stack option %s = %d exceeds what kern.ipc.maxsockbuf = %d lets sbreserve grant (%d): FreeBSD's soreserve fails and socket() returns ENOBUFS; raise maxsockbuf to at least %d",
				sp.name, sp.v, b.maxsockbuf, b.maxAdj(), (sp.v*(bsdMSIZE+bsdMCLBYTES)+bsdMCLBYTES-1)/bsdMCLBYTES)
		}
	}
	return nil
}

// sndAutosize mirrors the send buffer autosizing of FreeBSD 10's
// tcp_output: one step of sendbuf_inc when the peer's window is at least
// 4/5 of the buffer, the buffer is 7/8 full, below sendbuf_max, and the
// send window covers the unsent data; a step sbreserve refuses (beyond
// sb_max_adj) switches autosizing off.
func (b *bsdSockbufs) sndAutosize(s *sender, sendwin, off int64) {
	cc := s.writeSeq - s.sndUna // sb_cc
	if s.sndWnd/4*5 < s.sndBuf || cc < s.sndBuf/8*7 || cc >= b.sendMax || sendwin < cc-off {
		return
	}
	n := min(s.sndBuf+b.sendInc, b.sendMax)
	if n > b.maxAdj() {
		s.sndAuto = false
		return
	}
	s.sndBuf = n
}

// sndExpand: FreeBSD grows the send buffer in tcp_output (sndAutosize).
func (*bsdSockbufs) sndExpand(*endpoint) {}

// optKind is the type of a stack option's value.
type optKind uint8

const (
	optBool optKind = iota // "true" or "false"
	optSize                // a byte count
)

func (k optKind) String() string { return [...]string{"bool", "size"}[k] }

// stackOption is one `stack_options` key a profile accepts, with its
// default (a bool default is 0 or 1).
type stackOption struct {
	kind optKind
	def  int64
}

// freebsdOptions are FreeBSD 10's socket-buffer sysctls, by their last
// name component, with FreeBSD 10's defaults (sys/netinet/tcp_usrreq.c,
// tcp_output.c, tcp_input.c; sys/sys/sockbuf.h SB_MAX).
var freebsdOptions = map[string]stackOption{
	"sendspace":    {optSize, 32768},   // net.inet.tcp.sendspace
	"recvspace":    {optSize, 65536},   // net.inet.tcp.recvspace
	"sendbuf_auto": {optBool, 1},       // net.inet.tcp.sendbuf_auto
	"sendbuf_inc":  {optSize, 8192},    // net.inet.tcp.sendbuf_inc
	"sendbuf_max":  {optSize, 2097152}, // net.inet.tcp.sendbuf_max
	"maxsockbuf":   {optSize, 2097152}, // kern.ipc.maxsockbuf (SB_MAX)
}

// parseStackOptions checks opts against the known options of stack name
// and returns every known option's value, defaults filled in.
func parseStackOptions(name string, known map[string]stackOption, opts map[string]string) (map[string]int64, error) {
	set := map[string]int64{}
	for k, o := range known {
		set[k] = o.def
	}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		o, ok := known[k]
		if !ok {
			if len(known) == 0 {
				return nil, fmt.Errorf("stack %q takes no stack_options, got %q", name, k)
			}
			names := make([]string, 0, len(known))
			for n := range known {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("stack %q has no option %q: use one of %s", name, k, strings.Join(names, ", "))
		}
		v := opts[k]
		switch o.kind {
		case optBool:
			switch v {
			case "true":
				set[k] = 1
			case "false":
				set[k] = 0
			default:
				return nil, fmt.Errorf("stack option %s = %q: write \"true\" or \"false\"", k, v)
			}
		case optSize:
			n, err := config.ParseSize(v)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("stack option %s = %q: write a positive byte count like 1048576 or \"1MiB\"", k, v)
			}
			set[k] = n
		}
	}
	return set, nil
}

// stackDef defines one stack profile: its name, the stack_options it
// takes (with their defaults), the CPU profile of a host on it that names
// none, and how its strategies are built from the options.
type stackDef struct {
	name    string
	options map[string]stackOption
	cpu     string
	build   func(name string, set map[string]int64) (*profile, error)
}

// stacks is every stack profile the model knows, in the order StackNames
// lists them.
var stacks = []stackDef{
	{name: "freebsd-10", options: freebsdOptions, cpu: "xeon-2016", build: freebsd},
	{name: "freebsd-11", options: freebsdOptions, cpu: "xeon-2016", build: freebsd},
	{name: "linux-2.6.12", options: map[string]stackOption{"ucopy_delack": {optBool, 0}}, cpu: "opteron-2005", build: linux2612},
	{name: "linux-2.6.13", cpu: "opteron-2005", build: linux2613},
	{name: "linux-2.6.27", options: map[string]stackOption{"size_goal_modulo": {optBool, 1}, "tso_defer": {optBool, 1}}, cpu: "xeon-2008", build: linux2627},
	{name: "linux-6", options: map[string]stackOption{"tso_defer": {optBool, 1}}, cpu: "modern", build: linux6},
	{name: "super-tso-v2", cpu: "opteron-2005", build: linux2613},
}

// stackDefOf finds a stack's definition, or nil.
func stackDefOf(name string) *stackDef {
	for i := range stacks {
		if stacks[i].name == name {
			return &stacks[i]
		}
	}
	return nil
}

// newProfile builds a profile by name with the host's stack_options.
func newProfile(name string, opts map[string]string) (*profile, error) {
	def := stackDefOf(name)
	if def == nil {
		return nil, fmt.Errorf("unknown stack %q: use one of %s", name, strings.Join(StackNames(), ", "))
	}
	set, err := parseStackOptions(name, def.options, opts)
	if err != nil {
		return nil, err
	}
	return def.build(name, set)
}

// StackNames lists the stack profiles the model knows.
func StackNames() []string {
	out := make([]string, len(stacks))
	for i, d := range stacks {
		out[i] = d.name
	}
	return out
}

// defaultCPU is the cpu profile for a stack when the host names none.
func defaultCPU(stack string) string {
	if d := stackDefOf(stack); d != nil {
		return d.cpu
	}
	return "modern"
}

// linux2612 is linux-2.6.12. Option ucopy_delack is its receive side
// before "[TCP]: Fix stretch ACK performance killer when doing ucopy"
// (314324121f9b, 2.6.12-rc5; seed 001's receivers ran it as
// tcp_ack26.diff, seed 000's 2.6.11.5 receiver did not): linuxAcks.
func linux2612(name string, set map[string]int64) (*profile, error) {
	return &profile{
		name:   name,
		goal:   largeMSS2612{winDivisor: 8},
		output: &linuxOutput{test: wholeSkbTest{}, deferral: noDefer{}, split: cutToLargeMSS{}, largeMSS: true},
		push:   legacyPush{clobberNonagle: true, validateAlways: true},
		acks:   &linuxAcks{decByPcount: false, ato: 40e6, ucopyDelack: set["ucopy_delack"] != 0},
		cc:     linuxCongestion("reno", false),
		use:    inFlightUse{},
		wake:   linuxWake{},
		bufs:   linuxSockbufs{snd: 131072, rcv: 174760},
		layout: skbLayout{pages: pagesNever},
		initCw: linuxInitCwnd, rtoMin: 200e6, loMTU: 16436,
		slice:           o1Slice,
		localCongestion: true,
	}, nil
}

// linux2613 is linux-2.6.13, and super-tso-v2: linux-2.6.13's output path
// with the Super TSO patch's deferral (wholeSkbDefer) and skb layout
// (all in pages on any SG route, as patch 1/9; linux-2.6.13 pages only
// with TSO, after "Fix send-side cpu utiliziation regression"), the patch seed
// 001's Neterion rows measured on 2.6.12-rc4, and the original Super TSO
// of seed 000 (Miller: the regression is in both versions; nothing in the
// seeds tells them apart, so one profile stands for both). Size goal and
// split are the merged scheme's (c1b4a7e69576: xmit_size_goal "always set
// to a multiple of MSS"; tcp_write_xmit chops the buffer at send time).
func linux2613(name string, _ map[string]int64) (*profile, error) {
	var d deferral = heffnerDefer{divisor: 3}
	layout := skbLayout{pages: pagesGSO}
	if name == "super-tso-v2" {
		d = wholeSkbDefer{}
		layout = skbLayout{pages: pagesSG}
	}
	return &profile{
		name:   name,
		goal:   xmitSizeGoal{gsoMax: 65535, modulo: true},
		output: &linuxOutput{test: quotaTest{}, deferral: d, split: windowAllowsTrim{}},
		push:   plainPush{},
		acks:   &linuxAcks{decByPcount: true, ato: 40e6},
		cc:     linuxCongestion("reno", false),
		use:    inFlightUse{},
		wake:   linuxWake{},
		bufs:   linuxSockbufs{snd: 131072, rcv: 174760},
		layout: layout,
		initCw: linuxInitCwnd, rtoMin: 200e6, loMTU: 16436,
		slice:           o1Slice,
		localCongestion: true,
	}, nil
}

func linux2627(name string, set map[string]int64) (*profile, error) {
	var d deferral = noDefer{}
	if set["tso_defer"] != 0 {
		d = heffnerDefer{divisor: 3, tickCap: 8e6}
	}
	return &profile{
		name:    name,
		goal:    xmitSizeGoal{gsoMax: 65536 - 1, modulo: set["size_goal_modulo"] != 0},
		output:  &linuxOutput{test: quotaTest{}, deferral: d, split: mssSplitPoint{}},
		push:    plainPush{},
		acks:    &linuxAcks{decByPcount: true, ato: 40e6},
		cc:      linuxCongestion("cubic", false),
		use:     inFlightUse{},
		wake:    linuxWake{},
		bufs:    linuxSockbufs{snd: 4194304, rcv: 4194304},
		layout:  skbLayout{pages: pagesGSO},
		softGSO: true,
		initCw:  linuxInitCwnd, rtoMin: 200e6, loMTU: 16436,
		divides:         set["size_goal_modulo"] != 0,
		slice:           cfsSlice,
		localCongestion: true,
	}, nil
}

func linux6(name string, set map[string]int64) (*profile, error) {
	var d deferral = noDefer{}
	if set["tso_defer"] != 0 {
		d = eventDefer{divisor: 3}
	}
	return &profile{
		name:    name,
		goal:    gsoSegsGoal{},
		output:  &linuxOutput{test: quotaTest{finOneSeg: true, halfCwnd: true}, deferral: d, autosize: true, split: mssSplitPoint{nagle: true}, minshallPcount: true},
		push:    autocorkPush{},
		acks:    &linuxAcks{decByPcount: true, ato: 40e6, growWindow: true},
		cc:      linuxCongestion("cubic", true),
		use:     usageSeqUse{initCw: 10},
		wake:    linuxWake{},
		bufs:    linuxSockbufs{snd: 16384, sndMax: 4194304, rcv: 131072, rcvMax: 6291456}, // tcp_wmem[1], [2]; tcp_rmem[1], [2]
		layout:  skbLayout{pages: pagesGSO},
		softGSO: true, gsoAlways: true, gro: true,
		tsq:    &smallQueues{limitOutputBytes: 4 << 20},
		initCw: func(int64) int64 { return 10 }, rtoMin: 200e6, loMTU: 65536,
		slice:           eevdfSlice,
		localCongestion: true,
	}, nil
}

// freebsd is freebsd-10 and freebsd-11, which differ in where the TSO
// trim happens.
func freebsd(name string, set map[string]int64) (*profile, error) {
	var trim tsoTrim = trimBefore{}
	if name == "freebsd-11" {
		trim = trimAfter{}
	}
	bufs := &bsdSockbufs{
		sendspace: set["sendspace"], recvspace: set["recvspace"],
		sendAuto: set["sendbuf_auto"] != 0, sendInc: set["sendbuf_inc"], sendMax: set["sendbuf_max"],
		maxsockbuf: set["maxsockbuf"],
	}
	if err := bufs.check(); err != nil {
		return nil, err
	}
	return &profile{
		name:   name,
		goal:   unboundedGoal{},
		output: &freebsdOutput{trim: trim},
		push:   plainPush{},
		acks:   &freebsdAcks{delack: 100e6, sbMax: bufs.maxsockbuf},
		cc:     congestionChoice{def: "newreno", byName: []namedCC{{"newreno", func() congestion { return &newrenoBytes{} }}}},
		use:    inFlightUse{}, // newrenoBytes keeps its own test (CCF_CWND_LIMITED)
		wake:   freebsdWake{lowat: 2048},
		bufs:   bufs,
		layout: skbLayout{pages: pagesSG},
		initCw: freebsdInitCwnd, rtoMin: 30e6, loMTU: 16384,
		ithreads: true,
		slice:    uleSlice,
	}, nil
}

// linuxInitCwnd mirrors tcp_init_cwnd of 2.6 (RFC 3390 by MSS).
func linuxInitCwnd(mss int64) int64 {
	switch {
	case mss > 1460:
		return 2
	case mss > 1095:
		return 3
	}
	return 4
}

// freebsdInitCwnd mirrors tcp_mss's initial window with tcp_do_rfc3390:
// min(4*mss, max(2*mss, 4380)) bytes.
func freebsdInitCwnd(mss int64) int64 {
	return min(4*mss, max(2*mss, 4380))
}

// ---- size goal ----

// sizeGoal is how many payload bytes tcp_sendmsg puts in one buffer.
type sizeGoal interface {
	goal(ep *endpoint) int64
}

// largeMSS2612 mirrors tcp_current_mss(sk, 1) of 2.6.12: with TSO the
// "large MSS" is the real MSS times min(64 KB / MSS, cwnd / tso_win_divisor),
// bounded by half the largest window the peer offered. tcp_write_xmit cuts
// buffers to it, so it is both the size goal and the send limit.
type largeMSS2612 struct{ winDivisor int64 }

func (g largeMSS2612) goal(ep *endpoint) int64 {
	s := &ep.snd
	if !s.gso {
		return ep.mss
	}
	large := int64(65535 - 40 - tcpOptLen)
	if s.maxWnd > 0 && large > s.maxWnd/2 {
		large = max(s.maxWnd/2, 68-tcpOptLen-20)
	}
	factor := large / ep.mss
	limit := max(1, s.cwnd/g.winDivisor)
	factor = max(1, min(factor, limit))
	return ep.mss * factor
}

// xmitSizeGoal mirrors tcp_current_mss's xmit_size_goal of 2.6.13-2.6.27:
// the GSO maximum less headers, bounded by half the peer's largest window
// (tcp_bound_to_half_wnd), rounded down to a multiple of the MSS unless the
// modulo is switched off (seed 004's experiment).
type xmitSizeGoal struct {
	gsoMax int64
	modulo bool
}

func (g xmitSizeGoal) goal(ep *endpoint) int64 {
	s := &ep.snd
	if !s.gso {
		return ep.mss
	}
	goal := g.gsoMax - 40 - tcpOptLen
	if s.maxWnd > 0 && goal > s.maxWnd/2 {
		goal = max(s.maxWnd/2, 68-tcpOptLen-20)
	}
	if g.modulo {
		goal -= goal % ep.mss
	}
	return max(goal, ep.mss)
}

// gsoSegsGoal mirrors tcp_xmit_size_goal of Linux 6.x: the socket's GSO
// maximum (sk_gso_max_size, the device's less MAX_TCP_HEADER + 1 since
// sk_setup_caps takes it off), bounded by half the peer's largest window
// (tcp_bound_to_half_wnd), in whole segments (tp->gso_segs). "Note :
// tcp_tso_autosize() will eventually split this later": tcp_write_xmit
// sends at most tcp_tso_segs of it at a time (quotaTest.autosize).
type gsoSegsGoal struct{}

func (gsoSegsGoal) goal(ep *endpoint) int64 {
	s := &ep.snd
	if !s.gso {
		return ep.mss
	}
	goal := int64(skGSOMaxSize)
	if s.maxWnd > 536 && goal > s.maxWnd/2 { // TCP_MSS_DEFAULT
		goal = max(s.maxWnd/2, 68-hdrLen+20)
	}
	return max(goal/ep.mss*ep.mss, ep.mss)
}

// skGSOMaxSize is sk_gso_max_size of a TCP socket on a device with the
// legacy GSO maximum (65536): less MAX_TCP_HEADER (320 on x86-64) and 1.
const skGSOMaxSize = 65536 - 320 - 1

// tsoSegs mirrors tcp_tso_segs with tcp_tso_autosize of Linux 6.x: the
// segments tcp_write_xmit puts in one unit, about a millisecond of the
// pacing rate (sk_pacing_rate >> sk_pacing_shift, 10) plus, for close
// peers, the min_rtt allowance (sk_gso_max_size >> (min_rtt in us >>
// tcp_tso_rtt_log, 9)), at most sk_gso_max_size, at least
// tcp_min_tso_segs (2).
func (ep *endpoint) tsoSegsGoal() int64 { return ep.autosize(ep.snd.pacedBytes(ep.mss)) }

// autosize is tsoSegsGoal for a sender whose pacing rate is paced bytes
// a pacing shift (pacedBytes).
func (ep *endpoint) autosize(paced int64) int64 {
	s := &ep.snd
	bytes := paced
	if r := s.minRTT / 1000 >> 9; r < 32 {
		bytes += skGSOMaxSize >> r
	}
	bytes = min(bytes, skGSOMaxSize)
	return max(bytes/ep.mss, 2)
}

// unboundedGoal is FreeBSD's sbappendstream: the socket buffer is one byte
// stream; tcp_output decides every send's length.
type unboundedGoal struct{}

func (unboundedGoal) goal(*endpoint) int64 { return 1 << 62 }

// ---- send tests ----

// sendTest decides whether the send head may go now; quota is how many
// segments the congestion window allows.
type sendTest interface {
	allow(ep *endpoint, b *skb, mssNow int64, nonagle nagleMode) (quota int64, stop stopReason)
}

// wholeSkbTest mirrors tcp_snd_test of 2.6.12 (include/net/tcp.h before
// patch 3/9): Nagle against the large MSS, and the whole buffer must fit in
// the congestion window (in_flight + pcount - 1 < cwnd, FIN excepted) and
// the receive window.
type wholeSkbTest struct{}

func (wholeSkbTest) allow(ep *endpoint, b *skb, mssNow int64, nonagle nagleMode) (int64, stopReason) {
	s := &ep.snd
	pcount := ep.tsoSegs(b)
	if nonagle&naglePush == 0 && !b.fin && nagleCheck(s, b.len() < mssNow, nonagle) {
		return 0, stopNagle
	}
	inFlight := s.inFlight()
	s.finRule = inFlight+pcount-1 >= s.cwnd && b.fin
	if inFlight+pcount-1 >= s.cwnd && !b.fin {
		return 0, stopCwnd
	}
	if b.end > s.sndUna+s.sndWnd {
		return 0, stopRwnd
	}
	return max(1, s.cwnd-inFlight), stopNone
}

// quotaTest mirrors tcp_snd_test's parts as tcp_write_xmit calls them since
// 2.6.13: tcp_cwnd_test (quota = cwnd - in_flight; 1 for a FIN, or since
// 2.6.2x only for a one-segment FIN: finOneSeg; with halfCwnd, Linux
// 6.x's, at most half the cwnd, "to ensure we have at least 2 GSO packets
// in flight"), tcp_snd_wnd_test (the first segment fits the receive
// window) and, for a one-segment buffer only, tcp_nagle_test.
type quotaTest struct{ finOneSeg, halfCwnd bool }

func (t quotaTest) allow(ep *endpoint, b *skb, mssNow int64, nonagle nagleMode) (int64, stopReason) {
	s := &ep.snd
	quota := s.cwnd - s.inFlight()
	if t.halfCwnd && quota > 0 {
		quota = min(quota, max(s.cwnd>>1, 1))
	}
	s.finRule = false
	if b.fin && (!t.finOneSeg || ep.tsoSegs(b) == 1) {
		s.finRule = quota <= 0
		quota = 1
	}
	if quota <= 0 {
		return 0, stopCwnd
	}
	end := b.end
	if b.len() > mssNow {
		end = b.seq + mssNow
	}
	if end > s.sndUna+s.sndWnd {
		return 0, stopRwnd
	}
	if ep.tsoSegs(b) == 1 && nonagle&naglePush == 0 && !b.fin && nagleCheck(s, b.len() < mssNow, nonagle) {
		return 0, stopNagle
	}
	return quota, stopNone
}

// nagleCheck mirrors tcp_nagle_check: a partial buffer waits when corked,
// or (Nagle on) while a small segment is unacknowledged
// (tcp_minshall_check).
func nagleCheck(s *sender, partial bool, nonagle nagleMode) bool {
	if !partial {
		return false
	}
	if nonagle&nagleCork != 0 {
		return true
	}
	return nonagle == nagleOn && s.packetsOut > 0 && s.sndSml > s.sndUna && s.sndSml <= s.sndNxt
}

// ---- deferral ----

// deferral is the TSO Nagle test: hold a multi-segment buffer back to
// send a larger one later.
type deferral interface {
	// shouldDefer says whether to hold b, and whether it is held for the
	// congestion window (tcp_tso_should_defer's is_cwnd_limited).
	// maxSegs is the pass's tcp_tso_segs (linuxOutput.autosize), else 0.
	shouldDefer(ep *endpoint, b *skb, now int64, isLast bool, maxSegs int64) (hold, forCwnd bool)
}

// noDefer sends whatever the windows allow (2.6.12 had no deferral; the
// tso_defer=false option short-circuits it as in seed 004).
type noDefer struct{}

func (noDefer) shouldDefer(*endpoint, *skb, int64, bool, int64) (bool, bool) { return false, false }

// heffnerDefer mirrors tcp_tso_should_defer of 2.6.13-2.6.27 (John
// Heffner's algorithm): send when a full 64 KB frame fits or at least
// 1/tso_win_divisor of the window is free; otherwise wait for an ACK.
// tickCap > 0 adds 2.6.27's "defer for less than two clock ticks".
type heffnerDefer struct {
	divisor int64
	tickCap int64 // ns; 0 = no cap (2.6.13)
}

func (d heffnerDefer) shouldDefer(ep *endpoint, b *skb, now int64, _ bool, _ int64) (bool, bool) {
	return d.hold(ep, b, now), false
}

func (d heffnerDefer) hold(ep *endpoint, b *skb, now int64) bool {
	s := &ep.snd
	if b.fin || s.ca != caOpen {
		return s.sendNow()
	}
	if d.tickCap > 0 && s.tsoDeferredAt >= 0 && now-s.tsoDeferredAt > d.tickCap {
		return s.sendNow()
	}
	sendWin := s.sndUna + s.sndWnd - b.seq
	congWin := (s.cwnd - s.inFlight()) * ep.mss
	limit := min(sendWin, congWin)
	if limit >= 65536 {
		return s.sendNow()
	}
	chunk := min(s.sndWnd, s.cwnd*ep.mss) / d.divisor
	if limit >= chunk {
		return s.sendNow()
	}
	if s.tsoDeferredAt < 0 {
		s.tsoDeferredAt = now
	}
	return true
}

// wholeSkbDefer is the TSO deferral of the Super TSO patch (v1 and v2,
// May 2005) before John Heffner's algorithm replaced it, as the
// super-tso-v2 profile models it. The patch itself is in no source this
// project could read (docs/engine.md, seeds 001 and 000, lists what was
// searched); what is known of it: the scheme as merged ("[TCP]: Move to
// new TSO segmenting scheme", c1b4a7e69576, 2.6.13) builds buffers of
// xmit_size_goal and lets tcp_write_xmit "defer in order to wait for more
// ACKs to arrive and thus allow larger TSO frames to be emitted"; the
// merged tcp_tso_should_defer (net/ipv4/tcp_output.c of 2.6.13-2.6.17) is
// marked "This algorithm is from John Heffner" and adds the escapes
// heffnerDefer has (a 64 KB frame fits, or 1/tso_win_divisor of the
// window is free), after Heffner asked in seed 000 why the patch lost
// throughput. What remains without those escapes is the rule kept here:
// hold a multi-segment buffer while the windows (min of send window and
// cwnd quota) do not take it whole and an ACK is still to come (something
// in flight). It holds in recovery too: the merged series' "[TCP]: Never
// TSO defer under periods of congestion" (Linux 2.6.13-rc3's shortlog,
// committed after "Move to new TSO segmenting scheme") is what added
// tcp_tso_should_defer's icsk_ca_state != TCP_CA_Open escape, so the
// scheme before it deferred whatever the congestion state. A FIN goes at
// once (the merged function's first test; nothing later can join it).
type wholeSkbDefer struct{}

func (wholeSkbDefer) shouldDefer(ep *endpoint, b *skb, _ int64, _ bool, _ int64) (bool, bool) {
	s := &ep.snd
	if b.fin || s.packetsOut == 0 {
		return false, false
	}
	sendWin := s.sndUna + s.sndWnd - b.seq
	congWin := (s.cwnd - s.inFlight()) * ep.mss
	return min(sendWin, congWin) < b.len(), false
}

// eventDefer mirrors tcp_tso_should_defer of linux-6: no deferral in
// recovery, when the last send is more than 1 ms old, when a full unit
// (the pass's tcp_tso_segs) or the whole buffer in mid-queue fits, when 1/3 of the window is free, or
// when the next ACK is more than half an RTT away. What it holds it holds
// for the congestion window (is_cwnd_limited) when that is the smaller
// window and too small for the buffer; a FIN goes unless a window holds it.
type eventDefer struct{ divisor int64 }

func (d eventDefer) shouldDefer(ep *endpoint, b *skb, now int64, isLast bool, maxSegs int64) (bool, bool) {
	s := &ep.snd
	if s.ca >= caRecovery { // icsk_ca_state >= TCP_CA_Recovery: CWR defers
		return false, false
	}
	if now-s.lastSend > 1e6 {
		return false, false
	}
	sendWin := s.sndUna + s.sndWnd - b.seq
	congWin := (s.cwnd - s.inFlight()) * ep.mss
	limit := min(sendWin, congWin)
	if limit >= maxSegs*ep.mss {
		return false, false
	}
	if !isLast && limit >= b.len() {
		return false, false
	}
	chunk := min(s.sndWnd, s.cwnd*ep.mss) / d.divisor
	if limit >= chunk {
		return false, false
	}
	if s.wq.head >= s.wq.sendHead {
		return false, false
	}
	if now-s.wq.q[s.wq.head].sentAt < s.srtt/2 {
		return false, false
	}
	if congWin < sendWin {
		if congWin <= b.len() {
			return true, true
		}
	} else if sendWin <= b.len() {
		return true, false
	}
	return !b.fin, false
}

// ---- split ----

// splitter is how much of the send head goes now (tso_fragment cuts the
// rest off into a new buffer).
type splitter interface {
	limit(ep *endpoint, b *skb, mssNow, quota int64, isLast bool, nonagle nagleMode) int64
}

// cutToLargeMSS mirrors 2.6.12's tcp_write_xmit: tcp_fragment a buffer
// longer than the large MSS to it; the send test already required the
// whole buffer to fit the windows.
type cutToLargeMSS struct{}

func (cutToLargeMSS) limit(_ *endpoint, _ *skb, mssNow, _ int64, _ bool, _ nagleMode) int64 {
	return mssNow
}

// windowAllowsTrim mirrors 2.6.13's tcp_write_xmit with tcp_window_allows:
// a multi-segment buffer is cut to min(receive window, quota * MSS) and,
// when it fits whole, its sub-MSS tail is trimmed off to wait.
type windowAllowsTrim struct{}

func (windowAllowsTrim) limit(ep *endpoint, b *skb, mss, quota int64, _ bool, _ nagleMode) int64 {
	if ep.tsoSegs(b) <= 1 {
		return mss
	}
	s := &ep.snd
	limit := min(s.sndUna+s.sndWnd-b.seq, mss*quota)
	if b.len() < limit {
		if trim := b.len() % mss; trim != 0 {
			limit = b.len() - trim
		}
	}
	return limit
}

// mssSplitPoint mirrors tcp_mss_split_point: a buffer in mid-queue goes up
// to quota * MSS; the tail buffer is cut to what the receive window allows,
// rounded down to whole segments (2.6.27, the second modulo of seed 004) or,
// with nagle (linux-6), keeping the partial last segment when Nagle allows.
type mssSplitPoint struct{ nagle bool }

func (m mssSplitPoint) limit(ep *endpoint, b *skb, mss, quota int64, isLast bool, nonagle nagleMode) int64 {
	if ep.tsoSegs(b) <= 1 {
		return mss
	}
	s := &ep.snd
	window := s.sndUna + s.sndWnd - b.seq
	maxLen := mss * quota
	if maxLen <= window && !isLast {
		return maxLen
	}
	needed := min(b.len(), window)
	if maxLen <= needed {
		return maxLen
	}
	partial := needed % mss
	if m.nagle && !(nonagle&naglePush == 0 && nagleCheck(s, partial != 0, nonagle)) {
		return needed
	}
	return needed - partial
}

// ---- push ----

// pushPolicy is __tcp_push_pending_frames: what tcp_sendmsg's push does.
type pushPolicy interface {
	push(ep *endpoint, now int64, nonagle nagleMode, cpu *core)
}

// legacyPush mirrors __tcp_push_pending_frames of 2.6.12 with its two
// bugs as switches, so each fix can be applied on its own:
// clobberNonagle (fixed by patch 9/9): when the send head is not the last
// buffer, nonagle becomes TCP_NAGLE_PUSH for the whole tcp_write_xmit
// pass, so the tail buffer escapes Nagle; validateAlways (fixed by patch
// 6/9): tcp_cwnd_validate runs whether or not anything was sent.
type legacyPush struct{ clobberNonagle, validateAlways bool }

func (p legacyPush) push(ep *endpoint, now int64, nonagle nagleMode, cpu *core) {
	s := &ep.snd
	if s.wq.unsent() {
		if p.clobberNonagle && !s.wq.isLast(s.wq.sendHead) {
			nonagle = naglePush
		}
		ep.output(now, nonagle, cpu)
	}
	if p.validateAlways {
		s.cwndValidate(now)
	}
}

// plainPush mirrors __tcp_push_pending_frames after patches 6/9 and 9/9:
// call tcp_write_xmit with nonagle as given; it validates the cwnd when it
// sends.
type plainPush struct{}

func (plainPush) push(ep *endpoint, now int64, nonagle nagleMode, cpu *core) {
	if ep.snd.wq.unsent() {
		ep.output(now, nonagle, cpu)
	}
}

// autocorkPush mirrors tcp_push of Linux 3.14 and later ("tcp: auto
// corking", net/ipv4/tcp.c of 6.x): before __tcp_push_pending_frames,
// tcp_should_autocork holds the write queue's tail when it is below the
// size goal, the retransmit queue is not empty (tcp_rtx_queue_empty) and
// the socket has more than the tail's truesize below TCP
// (sk_wmem_alloc): tcp_push sets TSQ_THROTTLED and returns, so the next
// free runs the TSQ handler, which sends it (tcp_tsq_handler), and a
// write before that appends to it. Only tcp_sendmsg's push autocorks;
// ACKs send through tcp_data_snd_check. tcp_sendmsg pushes a buffer that
// reached the size goal as it fills (tcp_push_one), so the model's pass
// for a corked push sends the buffers before the tail and stops there
// (stopAutocork). net.ipv4.tcp_autocorking is 1 by default.
type autocorkPush struct{}

func (autocorkPush) push(ep *endpoint, now int64, nonagle nagleMode, cpu *core) {
	s := &ep.snd
	if !s.wq.unsent() {
		return
	}
	s.corked = ep.shouldAutocork(now)
	ep.output(now, nonagle, cpu)
	s.corked = false
}

// shouldAutocork is tcp_should_autocork for the write queue's tail at
// now, arming the TSQ handler as tcp_push does when it holds the tail.
// (A tail with the FIN is the shutdown's, which tcp_send_fin pushes.)
func (ep *endpoint) shouldAutocork(now int64) bool {
	s := &ep.snd
	t := s.wq.tail()
	if t.fin || s.wq.sendHead == s.wq.head || t.len() >= ep.prof.goal.goal(ep) { // the size goal, a divide, last
		return false
	}
	s.releaseWmem(now)
	if s.wmem <= t.len()+skbOverhead {
		return false
	}
	ep.markThrottled()
	return true
}

// ---- wake ----

// wakePolicy says when a writer blocked on a full send buffer may go on.
type wakePolicy interface {
	canWrite(ep *endpoint, blocked bool) bool
}

// linuxWake mirrors sk_stream_write_space: wake when free space is at
// least half of what is queued (sk_stream_min_wspace).
type linuxWake struct{}

func (linuxWake) canWrite(ep *endpoint, blocked bool) bool {
	queued := ep.snd.writeSeq - ep.snd.sndUna
	free := ep.snd.sndBuf - queued
	if !blocked {
		return free > 0
	}
	return free >= queued/2 && free > 0
}

// freebsdWake mirrors sosend_generic's wait (sys/kern/uipc_socket.c):
// `if (space < resid + clen && (atomic || space < so->so_snd.sb_lowat ||
// space < clen)) sbwait()`, so a call goes on when sbspace covers what is
// left of it or reaches the low-water mark (so_snd.sb_lowat). resid is the
// whole remaining count of the write(2): for a call not yet started it is
// the next write's size, not zero, so a new write that finds less than
// sb_lowat free sleeps until an ACK frees more, leaving the send buffer
// short of sb_hiwat meanwhile.
type freebsdWake struct{ lowat int64 }

func (w freebsdWake) canWrite(ep *endpoint, _ bool) bool {
	a := &ep.app
	free := ep.snd.sndBuf - (ep.snd.writeSeq - ep.snd.sndUna)
	resid := a.callRemain
	if resid == 0 {
		resid = min(a.writeSize, a.pending)
	}
	return free >= min(w.lowat, resid) && free > 0
}

// congestionChoice is a stack's congestion control: the one a
// connection gets and those a workload may name (`cc`).
type congestionChoice struct {
	def    string    // the stack's default
	byName []namedCC // in the order an error lists them
}

// namedCC is one congestion control by the name `cc` gives it.
type namedCC struct {
	name string
	make func() congestion
}

// linuxCongestion is a Linux stack's choice, reno and cubic, with def the
// default. hystart says the stack's CUBIC has HyStart (Linux 2.6.29 and
// later: linux-6 here).
func linuxCongestion(def string, hystart bool) congestionChoice {
	return congestionChoice{def: def, byName: []namedCC{
		{"reno", func() congestion { return &reno{} }},
		{"cubic", func() congestion {
			if hystart {
				return &cubic{hy: &hyStart{}}
			}
			return &cubic{}
		}},
	}}
}

// named is the congestion control a connection runs: the workload's
// `cc` (name), or the stack's default when name is "".
func (c congestionChoice) named(name string) string {
	if name == "" {
		return c.def
	}
	return name
}

// connection is the congestion control of a new connection: the
// workload's `cc` (name), or the stack's default when name is "".
func (c congestionChoice) connection(stack, name string) (congestion, error) {
	name = c.named(name)
	var names []string
	for _, n := range c.byName {
		if n.name == name {
			return n.make(), nil
		}
		names = append(names, fmt.Sprintf("%q", n.name))
	}
	return nil, fmt.Errorf("stack %s has no congestion control %q: use %s", stack, name, strings.Join(names, " or "))
}
