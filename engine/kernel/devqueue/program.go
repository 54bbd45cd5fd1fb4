package devqueue

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"

	"github.com/cilium/ebpf/asm"
)

// Buckets is the number of histogram buckets: bucket i counts units of
// ceil(payload/MSS) == i+1 segments. 1024 covers a 512 KiB BIG TCP unit
// at an MSS of 536; larger units land in the last bucket.
const Buckets = 1024

// Slots of the map value (one per CPU), in 64-bit words. The histogram
// follows the header.
const (
	slotUnits    = iota // send units (data skbs to a watched port)
	slotBytes           // their TCP payload bytes
	slotSegs            // wire segments: gso_segs, or 1 for a non-GSO skb
	slotGSO             // units that were GSO skbs (gso_size > 0)
	slotSingle          // units of exactly one MSS
	slotOther           // other packets on the device (ACKs, other ports, not TCP)
	slotClamped         // units too large for the histogram (in its last bucket)
	slotUnread          // packets whose headers probe_read could not read
	slotRecLost         // packets not recorded: the record ring was full
	slotRecTried        // packets the program set out to record
	headerSlots
)

// valueWords is the size of the map value in 64-bit words.
const valueWords = headerSlots + Buckets

// filter is what the program watches.
type filter struct {
	Ifindex uint32   // net_device.ifindex
	NetNS   uint32   // inode number of the network namespace (ns.inum)
	Ports   []uint16 // TCP destination ports; none = every port
	MSS     uint32   // bytes, for the single-MSS count and the histogram
	Ingress bool     // what the device receives (TCX ingress), not sends
}

// maxPorts bounds the compare chain the program unrolls.
const maxPorts = 64

// Stack slots of the program (offsets from R10).
const (
	stackKey  = -8   // u32 map key 0
	stackTCP  = -32  // 16 bytes: the start of the TCP header
	stackGSO  = -40  // 4 bytes: gso_size, gso_segs
	stackHdr  = -48  // 8 bytes: header bytes from skb->data to the end of TCP
	stackRec  = -56  // 8 bytes: where the record goes in its CPU's ring
	stackFlag = -64  // 4 bytes: 1 = a packet to a watched port (counted)
	stackIP   = -176 // ipRead bytes: the IP header and what follows
	stackMAC  = -88  // 8 bytes: MAC header bytes before skb->data
	stackCPU  = -96  // u32: this CPU, the key of its record head
	stackHead = -112 // 8 bytes: this CPU's record head
)

// ipRead is how much the program reads from the IP header on: an IPv6
// header or an IPv4 one without options, and the 16 bytes of TCP
// header it needs (ports, data offset), in one read; IPv4 with options
// takes a second read for the TCP header. Bytes past a short packet's
// end are read from the rest of its buffer and never used.
const ipRead = 40 + 16

// headerRead is how many header bytes reserve reads: Ethernet, IPv4
// without options and any TCP header (60 bytes at most), or IPv6 and TCP
// with up to 22 bytes of options, which is every header the parse needs
// and every record's but the longest, whose rest record reads.
const headerRead = 96

// maxMAC bounds the MAC header bytes before skb->data a record keeps
// (0 at egress, where skb->data is the MAC header; 14 for Ethernet at
// ingress, where the device pulled it).
const maxMAC = 64

// HeaderMax is the most header bytes a record keeps: Ethernet, IPv4 with
// options or IPv6, and TCP with options (14 + 60 + 60 = 134) fit.
const HeaderMax = 160

// A full record, as the program writes it into its CPU's ring (native
// byte order; the header bytes as they are in the packet). It takes
// recordBytes(caplen) bytes of the ring: its fields, the header bytes
// kept, and padding to 8 bytes (88 bytes for Ethernet, IPv4 and TCP
// with timestamps). A program at a TCX hook (recordProgram) writes
// most of its records short (see shortKind); the reader hands every
// record on as a full one.
const (
	recTime    = 0  // u64: CLOCK_MONOTONIC ns: bpf_ktime_get_ns, or at a TCX hook the skb's TCP stamp (triedAndStamped)
	recLen     = 8  // u32: the whole packet from its MAC header (skb->len plus the MAC header bytes before skb->data)
	recPayload = 12 // s32: TCP payload bytes of the whole packet
	recCapLen  = 16 // u8: header bytes kept, at most HeaderMax; in a short record its kind
	recFlag    = 17 // u8: flagToWatched, flagTemplate
	recHeader  = 18 // HeaderMax bytes at most
	// recordSize is the longest record.
	recordSize = recHeader + HeaderMax
)

// The bits of a full record's flag byte.
const (
	// flagToWatched: the packet went to a watched port (counted), not
	// from one.
	flagToWatched = 1
	// flagTemplate: the record's first templateBytes header bytes are
	// its CPU's template from now on (see shortKind); only
	// recordProgram sets it.
	flagTemplate = 2
)

// recordBytes is the ring bytes a record of caplen header bytes takes.
func recordBytes(caplen int) int { return (recHeader + caplen + 7) &^ 7 }

// A short record is what recordProgram writes for a packet of
// Ethernet (14 bytes), IPv4 without options and TCP with a data offset
// of 5 or 8 words (none or the timestamp option's 12 bytes), whose
// bytes that stay the same in a connection (the Ethernet header, IPv4
// bytes 0-1, 6-9 and 12-19: version, TOS, fragment field, TTL,
// protocol, addresses; the TCP ports) are its CPU's template: those of
// the last full record written with flagTemplate on that CPU. It keeps
// the rest: the time and length as a full record does, IPv4 bytes 2-5
// (total length, ID) and 10-11 (checksum) and TCP bytes 4 to the end of
// its header (sequence and acknowledgment numbers, flags, window,
// checksum, urgent pointer, options), in shortBytes(doff) bytes (48
// with timestamps, against a full record's 88). The reader rebuilds the
// packet's headers byte for byte from the template and these. Its kind
// (the byte at recCapLen) is shortKind | doff, never a full record's
// caplen. A CPU's template is written again, by a full record, at least
// once in every syncBytes of its ring, so that a reader that lost
// records (see recordRing) can rebuild the short ones again from there;
// the short records it cannot rebuild until then are counted lost.
const (
	shortKind  = 0xf0
	shortIP2   = 12 // 4 bytes: IPv4 bytes 2-5 (total length, ID)
	shortIP10  = 17 // 2 bytes: IPv4 bytes 10-11 (header checksum)
	shortTCP4  = 19 // TCP bytes 4 to doff*4
	syncBytes  = 64 << 10
	syncShift  = 16 // log2(syncBytes)
	tmplEth    = 14 // the Ethernet header's bytes, the IPv4 header's offset
	tmplBytes  = tmplEth + 20 + 4
	shortDoff5 = 5
	shortDoff8 = 8
)

// shortBytes is the ring bytes a short record of a TCP header of doff
// words takes (40 or 48).
func shortBytes(doff int) int { return (shortTCP4 + doff*4 - 4 + 7) &^ 7 }

// Hook is where the program runs. The egress hooks see every skb the
// device layer gets, before the qdisc and before validate_xmit_skb cuts
// GSO skbs; the ingress hook every skb the device hands up.
type Hook int

const (
	// HookTCX is a TCX egress program on the device (sch_handle_egress,
	// early in __dev_queue_xmit). It reaches the kernel's sk_buff through
	// the kfunc bpf_cast_to_kern_ctx and always lets the packet go on
	// (TCX_NEXT).
	HookTCX Hook = iota
	// HookTracepoint is a tp_btf program on net:net_dev_queue, a few
	// lines later in __dev_queue_xmit. Tracing programs do not run in
	// every context (see the package documentation): the fallback for
	// kernels without TCX.
	HookTracepoint
	// HookTCXIngress is a TCX ingress program on the device
	// (sch_handle_ingress in __netif_receive_skb_core, after the taps of
	// packet sockets): what the device hands up, after GRO when it
	// aggregates. It reaches the sk_buff as HookTCX does and lets the
	// packet go on. It has no fallback here: without TCX the caller
	// captures otherwise (the engine with an AF_PACKET ring).
	HookTCXIngress
)

// Where says in a sentence where a hook counts, for notes.
func (h Hook) Where() string {
	switch h {
	case HookTCX:
		return "TCX egress, early in __dev_queue_xmit"
	case HookTracepoint:
		return "the net:net_dev_queue tracepoint"
	case HookTCXIngress:
		return "TCX ingress, where the device hands packets up (__netif_receive_skb_core)"
	}
	return h.String()
}

func (h Hook) String() string {
	switch h {
	case HookTCX:
		return "tcx-egress"
	case HookTracepoint:
		return "tp_btf/net_dev_queue"
	case HookTCXIngress:
		return "tcx-ingress"
	}
	return fmt.Sprintf("Hook(%d)", int(h))
}

// tcxNext is the TCX verdict that passes the packet on to the next
// program, or the stack.
const tcxNext = -1

// program builds the counting program for one hook and filter, with
// the counter map's file descriptor and, when rec is not nil, the record
// rings every TCP packet to a watched port is recorded into (its headers,
// its length and time). Registers kept across helper calls: R6 the skb, R7
// skb->head, R8 the payload, R9 the map value.
func program(h Hook, o offsets, f filter, mapFD int, rec *recMaps) (asm.Instructions, error) {
	if f.MSS == 0 || f.MSS > math.MaxInt32 {
		return nil, fmt.Errorf("MSS %d out of range", f.MSS)
	}
	if len(f.Ports) > maxPorts {
		return nil, fmt.Errorf("%d ports to watch, at most %d", len(f.Ports), maxPorts)
	}
	if (h == HookTCXIngress || h == HookTCX) && rec != nil && o.CastToKernCtx != 0 {
		return recordProgram(o, f, mapFD, rec)
	}
	off := func(m member) int16 { return int16(m.Off) }
	word := func(slot int) int16 { return int16(slot * 8) }
	// inc adds src to the 64-bit slot of the map value (R9).
	inc := func(slot int, src asm.Register) asm.Instruction {
		return asm.AddAtomic.Mem(asm.R9, src, asm.DWord, word(slot))
	}
	var insns asm.Instructions
	ret := int32(0)
	switch h {
	case HookTracepoint:
		// R6 = the skb (the tracepoint's only argument).
		insns = append(insns, asm.LoadMem(asm.R6, asm.R1, 0, asm.DWord))
	case HookTCX, HookTCXIngress:
		if o.CastToKernCtx == 0 {
			return nil, errors.New("this kernel has no bpf_cast_to_kern_ctx kfunc for a TCX program")
		}
		// R6 = bpf_cast_to_kern_ctx(__sk_buff): the kernel's sk_buff.
		insns = append(insns, castToKernCtx(o), asm.Mov.Reg(asm.R6, asm.R0))
		ret = tcxNext
	default:
		return nil, fmt.Errorf("unknown hook %v", h)
	}
	insns = append(insns, asm.Instructions{
		// The device: ifindex, then the namespace it lives in.
		asm.LoadMem(asm.R2, asm.R6, off(o.SkbDev), asm.DWord),
		asm.LoadMem(asm.R3, asm.R2, off(o.DevIfindex), asm.Word),
		asm.JNE.Imm(asm.R3, int32(f.Ifindex), "exit"),
		asm.LoadMem(asm.R2, asm.R2, off(o.DevNet), asm.DWord),
		asm.LoadMem(asm.R3, asm.R2, off(o.NetInum), asm.Word),
		asm.JNE.Imm32(asm.R3, int32(f.NetNS), "exit"),
	}...)
	insns = append(insns, countersInR9(mapFD)...)
	insns = append(insns, asm.Instructions{
		// The IP header from skb->network_header: IPv4 (protocol, and
		// IHL for the TCP header's offset) or IPv6 without extension
		// headers. The offset is computed, not read from
		// skb->transport_header, which ingress has not set yet.
		asm.LoadMem(asm.R7, asm.R6, off(o.SkbHead), asm.DWord),
		asm.LoadMem(asm.R3, asm.R6, off(o.SkbProtocol), asm.Half),
		asm.JEq.Imm(asm.R3, int32(hostHalf(0x0800)), "read_ip"),
		asm.JNE.Imm(asm.R3, int32(hostHalf(0x86dd)), "other"),
	}...)
	if rec != nil {
		insns = append(insns, reserve(o, rec)...)
	} else {
		insns = append(insns,
			asm.LoadMem(asm.R3, asm.R6, off(o.SkbNetworkHeader), asm.Half).WithSymbol("read_ip"),
			asm.Add.Reg(asm.R3, asm.R7),
			asm.Mov.Reg(asm.R1, asm.R10),
			asm.Add.Imm(asm.R1, stackIP),
			asm.Mov.Imm(asm.R2, ipRead),
			asm.FnProbeReadKernel.Call(),
			asm.JNE.Imm(asm.R0, 0, "unread"),
		)
	}
	insns = append(insns, asm.Instructions{
		asm.LoadMem(asm.R3, asm.R6, off(o.SkbProtocol), asm.Half),
		asm.LoadMem(asm.R8, asm.R6, off(o.SkbNetworkHeader), asm.Half),
		asm.JNE.Imm(asm.R3, int32(hostHalf(0x0800)), "ipv6"),
		asm.LoadMem(asm.R4, asm.R10, stackIP+9, asm.Byte),
		asm.LoadMem(asm.R5, asm.R10, stackIP, asm.Byte),
		asm.And.Imm(asm.R5, 0x0f),
		asm.LSh.Imm(asm.R5, 2),
		asm.JNE.Imm(asm.R4, 6, "other"), // IPPROTO_TCP
		// R8 = the TCP header's offset from skb->head.
		asm.Add.Reg(asm.R8, asm.R5),
		asm.JNE.Imm(asm.R5, 20, "read_tcp"),
	}...)
	// IPv4 without options: the TCP header was read with it.
	insns = append(insns, copyStack(stackTCP, stackIP+20, 16)...)
	insns = append(insns,
		asm.Ja.Label("tcp"),
		// IPv4 with options: the TCP header is further on.
		asm.Mov.Reg(asm.R3, asm.R7).WithSymbol("read_tcp"),
		asm.Add.Reg(asm.R3, asm.R8),
		asm.Mov.Reg(asm.R1, asm.R10),
		asm.Add.Imm(asm.R1, stackTCP),
		asm.Mov.Imm(asm.R2, 16),
		asm.FnProbeReadKernel.Call(),
		asm.JNE.Imm(asm.R0, 0, "unread"),
		asm.Ja.Label("tcp"),
		asm.LoadMem(asm.R4, asm.R10, stackIP+6, asm.Byte).WithSymbol("ipv6"),
		asm.JNE.Imm(asm.R4, 6, "other"), // IPPROTO_TCP
		asm.Add.Imm(asm.R8, 40),
	)
	insns = append(insns, copyStack(stackTCP, stackIP+40, 16)...)
	insns = append(insns,
		// Header bytes up to the end of TCP: (head + transport_header -
		// data) + doff*4; the payload is skb->len minus that.
		asm.LoadMem(asm.R3, asm.R10, stackTCP+12, asm.Byte).WithSymbol("tcp"),
		asm.RSh.Imm(asm.R3, 4),
		asm.LSh.Imm(asm.R3, 2),
		asm.LoadMem(asm.R4, asm.R6, off(o.SkbData), asm.DWord),
		asm.Mov.Reg(asm.R2, asm.R7),
		asm.Add.Reg(asm.R2, asm.R8),
		asm.Sub.Reg(asm.R2, asm.R4),
		asm.Add.Reg(asm.R2, asm.R3),
		asm.LoadMem(asm.R8, asm.R6, off(o.SkbLen), asm.Word),
		asm.Sub.Reg(asm.R8, asm.R2),
		// Packets to a watched port are counted (flag 1); with a record,
		// packets from one (the server's side on loopback) are recorded
		// too but not counted (flag 0).
		asm.StoreImm(asm.R10, stackFlag, 1, asm.Word),
	)
	next := "counted"
	if rec != nil {
		next = "record"
	}
	if len(f.Ports) > 0 {
		insns = append(insns, asm.LoadMem(asm.R3, asm.R10, stackTCP+2, asm.Half))
		for _, p := range f.Ports {
			insns = append(insns, asm.JEq.Imm(asm.R3, int32(hostHalf(p)), next))
		}
		if rec != nil {
			insns = append(insns, asm.LoadMem(asm.R3, asm.R10, stackTCP, asm.Half))
			for _, p := range f.Ports {
				insns = append(insns, asm.JEq.Imm(asm.R3, int32(hostHalf(p)), "from_port"))
			}
		}
		insns = append(insns, asm.Ja.Label("other"))
		if rec != nil {
			insns = append(insns,
				asm.StoreImm(asm.R10, stackFlag, 0, asm.Word).WithSymbol("from_port"),
				asm.Ja.Label("record"),
			)
		}
	}
	if rec != nil {
		insns = append(insns, record(o, inc)...)
		insns = append(insns,
			asm.LoadMem(asm.R3, asm.R10, stackFlag, asm.Word).WithSymbol("recorded"),
			asm.JEq.Imm(asm.R3, 0, "other"),
		)
		if f.Ingress {
			// A receiver's capture: what its file needs is in the
			// record, and the reader counts the data packets; the
			// units are not counted, the device's GSO fields and
			// the histogram not read (a TSO-off receiver runs this
			// for every wire segment).
			insns = append(insns, asm.Ja.Label("exit"))
			return append(insns, tail(ret, inc)...), nil
		}
	}
	insns = append(insns,
		asm.JSLE.Imm(asm.R8, 0, "other").WithSymbol("counted"),
		// skb_shinfo(skb) = head + end.
		asm.LoadMem(asm.R3, asm.R6, off(o.SkbEnd), asm.Word),
		asm.Add.Reg(asm.R3, asm.R7),
	)
	insns = append(insns, countUnit(o, f, stackGSO, inc)...)
	return append(insns, tail(ret, inc)...), nil
}

// countUnit counts a send unit of R8 payload bytes (positive) whose
// skb_shinfo is at R3, into the counters R9 points at (inc adds to
// one): it reads gso_size and gso_segs to the stack at gsoAt (or goes
// to "unread"), then counts the unit as countGSO does.
func countUnit(o offsets, f filter, gsoAt int16, inc func(int, asm.Register) asm.Instruction) asm.Instructions {
	insns := asm.Instructions{
		asm.Add.Imm(asm.R3, int32(o.ShinfoGSOSize.Off)),
		asm.Mov.Reg(asm.R1, asm.R10),
		asm.Add.Imm(asm.R1, int32(gsoAt)),
		asm.Mov.Imm(asm.R2, 4),
		asm.FnProbeReadKernel.Call(),
		asm.JNE.Imm(asm.R0, 0, "unread"),
		asm.LoadMem(asm.R1, asm.R10, gsoAt, asm.Half),   // gso_size
		asm.LoadMem(asm.R2, asm.R10, gsoAt+2, asm.Half), // gso_segs
	}
	atomic := func(base asm.Register, off int16, src asm.Register) asm.Instructions {
		return asm.Instructions{asm.AddAtomic.Mem(base, src, asm.DWord, off)}
	}
	return append(insns, countGSO(f, atomic)...)
}

// countGSO counts a send unit of R8 payload bytes (positive) with
// gso_size in R1 and gso_segs in R2 into the counters R9 points at,
// each count added to its word by add (base + off += src; it may use
// R0): the unit, its bytes, its wire segments (gso_segs, 1 for a
// non-GSO skb, or ceil(payload/gso_size) for a GSO skb without them),
// GSO units, single-MSS units and the histogram; then it goes to "exit".
func countGSO(f filter, add func(base asm.Register, off int16, src asm.Register) asm.Instructions) asm.Instructions {
	var insns asm.Instructions
	emit := func(ins ...asm.Instruction) { insns = append(insns, ins...) }
	inc := func(slot int, src asm.Register, sym string) {
		a := add(asm.R9, int16(slot*8), src)
		if sym != "" {
			a[0] = a[0].WithSymbol(sym)
		}
		emit(a...)
	}
	emit(
		asm.JNE.Imm(asm.R1, 0, "gso"),
		asm.Mov.Imm(asm.R2, 1),
		asm.Ja.Label("count"),
		asm.Mov.Imm(asm.R3, 1).WithSymbol("gso"),
	)
	inc(slotGSO, asm.R3, "")
	emit(
		asm.JNE.Imm(asm.R2, 0, "count"),
		// A GSO skb without gso_segs: ceil(payload / gso_size).
		asm.Mov.Reg(asm.R2, asm.R8),
		asm.Add.Reg(asm.R2, asm.R1),
		asm.Sub.Imm(asm.R2, 1),
		asm.Div.Reg(asm.R2, asm.R1),
	)
	inc(slotSegs, asm.R2, "count")
	emit(asm.Mov.Imm(asm.R3, 1))
	inc(slotUnits, asm.R3, "")
	inc(slotBytes, asm.R8, "")
	emit(asm.JNE.Imm(asm.R8, int32(f.MSS), "bucket"))
	inc(slotSingle, asm.R3, "")
	emit(
		// Histogram bucket ceil(payload/MSS) - 1, clamped to the last.
		asm.Mov.Reg(asm.R2, asm.R8).WithSymbol("bucket"),
		asm.Add.Imm(asm.R2, int32(f.MSS-1)),
		asm.Div.Imm(asm.R2, int32(f.MSS)),
		asm.Sub.Imm(asm.R2, 1),
		asm.JLE.Imm(asm.R2, Buckets-1, "hist"),
	)
	inc(slotClamped, asm.R3, "")
	emit(
		asm.Mov.Imm(asm.R2, Buckets-1),
		asm.LSh.Imm(asm.R2, 3).WithSymbol("hist"),
		asm.Mov.Reg(asm.R4, asm.R9),
		asm.Add.Reg(asm.R4, asm.R2),
	)
	emit(add(asm.R4, int16(headerSlots*8), asm.R3)...)
	emit(asm.Ja.Label("exit"))
	return insns
}

// castToKernCtx calls the kfunc bpf_cast_to_kern_ctx: R0 = the kernel's
// sk_buff of the __sk_buff in R1 (the verifier turns it into a move).
func castToKernCtx(o offsets) asm.Instruction {
	return asm.Instruction{OpCode: asm.OpCode(asm.JumpClass).SetJumpOp(asm.Call), Src: asm.PseudoKfuncCall, Constant: int64(o.CastToKernCtx)}
}

// countersInR9 looks up this CPU's counters (key 0 of the per-CPU map
// mapFD, at stackKey) into R9, or goes to "exit".
func countersInR9(mapFD int) asm.Instructions {
	return Key0Value(mapFD, stackKey, asm.R9, "exit")
}

// tail is the program's end: the labels "unread" and "other" count the
// packet as such, "exit" returns ret.
func tail(ret int32, inc func(int, asm.Register) asm.Instruction) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Imm(asm.R3, 1).WithSymbol("unread"),
		inc(slotUnread, asm.R3),
		asm.Ja.Label("exit"),
		asm.Mov.Imm(asm.R3, 1).WithSymbol("other"),
		inc(slotOther, asm.R3),
		asm.Mov.Imm(asm.R0, ret).WithSymbol("exit"),
		asm.Return(),
	}
}

// storeArch is the architecture whose store ordering the program's
// record stores rely on (see orderedStore): this process's, which is the
// kernel's; tests load the other variant too.
var storeArch = runtime.GOARCH

// publish stores R2, the new head, into the head R1 points at, ordered
// after the record's stores, for a CPU of architecture goarch (see
// orderedStore). The head has one writer, the program on its CPU.
func publish(goarch string) asm.Instructions {
	return orderedStore(goarch, asm.R1, 0, asm.R2)
}

// orderedStore stores the 64-bit val at ptr+off, ordered after every
// store before it and before every store after it, on a CPU of
// architecture goarch: on x86 (TSO: stores are not reordered with other
// stores) a plain store; elsewhere a plain store between two atomic
// fetch-adds of 0 to the same word, each fully ordered (it uses R5).
func orderedStore(goarch string, ptr asm.Register, off int16, val asm.Register) asm.Instructions {
	if goarch == "amd64" || goarch == "386" {
		return asm.Instructions{asm.StoreMem(ptr, off, val, asm.DWord)}
	}
	return asm.Instructions{
		asm.Mov.Imm(asm.R5, 0),
		fetchAdd(ptr, asm.R5, off),
		asm.StoreMem(ptr, off, val, asm.DWord),
		asm.Mov.Imm(asm.R5, 0),
		fetchAdd(ptr, asm.R5, off),
	}
}

// fetchAdd is a 64-bit atomic fetch-add of src to dst+off, fully
// ordered. cilium/ebpf v0.22 encodes an atomic instruction's operation
// in its immediate from the instruction's Constant, which asm's
// AtomicOp.Mem leaves 0 (BPF_ADD without BPF_FETCH: a relaxed add; an
// Xchg assembled so added instead of exchanging), so the Constant is set
// here.
func fetchAdd(dst, src asm.Register, off int16) asm.Instruction {
	ins := asm.FetchAdd.Mem(dst, src, asm.DWord, off)
	ins.Constant = int64(asm.FetchAdd >> 8)
	return ins
}

// copyStack copies n bytes (a multiple of 4) between 4-aligned stack
// offsets, through R1.
func copyStack(dst, src int16, n int16) asm.Instructions {
	var insns asm.Instructions
	for i := int16(0); i < n; i += 4 {
		insns = append(insns,
			asm.LoadMem(asm.R1, asm.R10, src+i, asm.Word),
			asm.StoreMem(asm.R10, dst+i, asm.R1, asm.Word),
		)
	}
	return insns
}

// reserve (label "read_ip", on the way to the IP header's parse) reads
// the packet's headers, HeaderMax bytes from its MAC header, into the
// place of its record in this CPU's record ring (at the CPU's head, a
// byte position, modulo the ring's size: see record.go), before the
// filter decides whether it is recorded: one read for the record and
// the parse, whose ipRead bytes from the IP header on it copies to the
// stack. A packet that is not recorded leaves the head where it was:
// what was read past it is written over by the next record (the reader
// reads up to the head only, and takes the producer to be writing up
// to recordSize bytes past it). Bytes past a short packet's end come
// from the rest of its buffer and are never kept. It keeps R6-R9 and
// leaves on the stack the ring's head (stackHead), the record
// (stackRec) and the MAC header bytes before skb->data (stackMAC).
func reserve(o offsets, rec *recMaps) asm.Instructions {
	off := func(m member) int16 { return int16(m.Off) }
	insns := asm.Instructions{
		// The MAC header bytes before skb->data: data - (head + mac_header).
		asm.LoadMem(asm.R4, asm.R6, off(o.SkbData), asm.DWord).WithSymbol("read_ip"),
		asm.Sub.Reg(asm.R4, asm.R7),
		asm.LoadMem(asm.R3, asm.R6, off(o.SkbMacHeader), asm.Half),
		asm.Sub.Reg(asm.R4, asm.R3),
		asm.JGT.Imm(asm.R4, maxMAC, "unread"), // no MAC header set: not recorded, not counted
		asm.StoreMem(asm.R10, stackMAC, asm.R4, asm.DWord),
	}
	insns = append(insns, ringSlot(rec, stackCPU, stackHead, stackRec)...)
	insns = append(insns,
		asm.Mov.Reg(asm.R1, asm.R0),
		asm.Add.Imm(asm.R1, recHeader),
		asm.Mov.Imm(asm.R2, headerRead),
		asm.LoadMem(asm.R3, asm.R6, off(o.SkbMacHeader), asm.Half),
		asm.Add.Reg(asm.R3, asm.R7),
		asm.FnProbeReadKernel.Call(),
		asm.JNE.Imm(asm.R0, 0, "unread"),
		// ipRead bytes from the IP header (network_header - mac_header
		// into the headers read) to the stack.
		asm.LoadMem(asm.R3, asm.R6, off(o.SkbNetworkHeader), asm.Half),
		asm.LoadMem(asm.R4, asm.R6, off(o.SkbMacHeader), asm.Half),
		asm.Sub.Reg(asm.R3, asm.R4),
		asm.JGT.Imm(asm.R3, maxMAC, "unread"),
		asm.LoadMem(asm.R1, asm.R10, stackRec, asm.DWord),
		asm.Add.Reg(asm.R1, asm.R3),
	)
	for i := int16(0); i < ipRead; i += 8 {
		insns = append(insns,
			asm.LoadMem(asm.R2, asm.R1, recHeader+i, asm.DWord),
			asm.StoreMem(asm.R10, stackIP+i, asm.R2, asm.DWord),
		)
	}
	return insns
}

// triedAndTimed counts a record set out to be written (slotRecTried of
// R9) and writes the time, bpf_ktime_get_ns, into the record whose
// address is on the stack at recAt, leaving that address in dst.
func triedAndTimed(recAt int16, dst asm.Register) asm.Instructions {
	return asm.Instructions{
		// A plain increment: the program does not nest on a CPU, and
		// Stop reads the map after the program is detached.
		asm.LoadMem(asm.R3, asm.R9, int16(slotRecTried*8), asm.DWord),
		asm.Add.Imm(asm.R3, 1),
		asm.StoreMem(asm.R9, int16(slotRecTried*8), asm.R3, asm.DWord),
		asm.FnKtimeGetNs.Call(),
		asm.LoadMem(dst, asm.R10, recAt, asm.DWord),
		asm.StoreMem(dst, recTime, asm.R0, asm.DWord),
	}
}

// ringSlot finds where this CPU's next record goes: this CPU's head (a
// byte position, in the heads array) and its ring (in the recs array),
// keyed by its number, which it keeps on the stack at cpuAt; it leaves
// the head's address at headAt and the record's, ring + head mod the
// ring's size, at recAt and in R0. Without a ring for this CPU it goes
// to "unrecorded".
func ringSlot(rec *recMaps, cpuAt, headAt, recAt int16) asm.Instructions {
	lookup := func(fd int) asm.Instructions { return Lookup(fd, cpuAt, "unrecorded") }
	insns := asm.Instructions{
		asm.FnGetSmpProcessorId.Call(),
		asm.StoreMem(asm.R10, cpuAt, asm.R0, asm.Word),
	}
	insns = append(insns, lookup(rec.Heads)...)
	insns = append(insns, asm.StoreMem(asm.R10, headAt, asm.R0, asm.DWord))
	insns = append(insns, lookup(rec.Recs)...)
	return append(insns,
		asm.LoadMem(asm.R1, asm.R10, headAt, asm.DWord),
		asm.LoadMem(asm.R3, asm.R1, 0, asm.DWord),
		asm.And.Imm(asm.R3, int32(rec.Size-1)),
		asm.Add.Reg(asm.R0, asm.R3),
		asm.StoreMem(asm.R10, recAt, asm.R0, asm.DWord),
	)
}

// record writes the record of the packet whose headers reserve read
// (label "record", then on to "recorded"): it expects R2 = the header
// bytes from skb->data to the end of TCP and R8 = the payload, and keeps
// R6-R9. The record starts at the MAC header (skb->head +
// skb->mac_header), which is skb->data at egress and at TCX ingress
// (which pushes the Ethernet header back for the program), and keeps
// the header bytes up to the end of TCP, at most HeaderMax. It is
// published by adding its bytes to the head (see record.go); the ring
// has room for a whole record past its end, so a record is never cut
// in two.
func record(o offsets, inc func(int, asm.Register) asm.Instruction) asm.Instructions {
	off := func(m member) int16 { return int16(m.Off) }
	insns := asm.Instructions{
		asm.StoreMem(asm.R10, stackHdr, asm.R2, asm.DWord).WithSymbol("record"),
	}
	insns = append(insns, triedAndTimed(stackRec, asm.R1)...)
	insns = append(insns, asm.Instructions{
		asm.LoadMem(asm.R2, asm.R6, off(o.SkbLen), asm.Word),
		asm.LoadMem(asm.R3, asm.R10, stackMAC, asm.DWord),
		asm.Add.Reg(asm.R2, asm.R3),
		asm.StoreMem(asm.R1, recLen, asm.R2, asm.Word),
		asm.StoreMem(asm.R1, recPayload, asm.R8, asm.Word),
		asm.LoadMem(asm.R2, asm.R10, stackFlag, asm.Word),
		asm.StoreMem(asm.R1, recFlag, asm.R2, asm.Byte),
		// The header bytes from the MAC header, at most HeaderMax.
		asm.LoadMem(asm.R2, asm.R10, stackHdr, asm.DWord),
		asm.Add.Reg(asm.R2, asm.R3),
		asm.JLE.Imm(asm.R2, HeaderMax, "rec_len"),
		asm.Mov.Imm(asm.R2, HeaderMax),
		asm.StoreMem(asm.R1, recCapLen, asm.R2, asm.Byte).WithSymbol("rec_len"),
		// Headers longer than reserve read: the rest of them.
		asm.JLE.Imm(asm.R2, headerRead, "rec_publish"),
		asm.Add.Imm(asm.R1, recHeader+headerRead),
		asm.Sub.Imm(asm.R2, headerRead),
		asm.LoadMem(asm.R3, asm.R6, off(o.SkbMacHeader), asm.Half),
		asm.Add.Reg(asm.R3, asm.R7),
		asm.Add.Imm(asm.R3, headerRead),
		asm.FnProbeReadKernel.Call(),
		asm.LoadMem(asm.R1, asm.R10, stackRec, asm.DWord),
		asm.JEq.Imm(asm.R0, 0, "rec_caplen"),
		// Unreadable: the headers reserve read.
		asm.StoreImm(asm.R1, recCapLen, headerRead, asm.Byte),
		asm.LoadMem(asm.R2, asm.R1, recCapLen, asm.Byte).WithSymbol("rec_caplen"),
		// Written: head += recordBytes(caplen).
		asm.Add.Imm(asm.R2, recHeader+7).WithSymbol("rec_publish"),
		asm.And.Imm(asm.R2, -8),
		asm.LoadMem(asm.R1, asm.R10, stackHead, asm.DWord),
		asm.LoadMem(asm.R3, asm.R1, 0, asm.DWord),
		asm.Add.Reg(asm.R2, asm.R3),
	}...)
	insns = append(insns, publish(storeArch)...)
	return append(insns,
		asm.Ja.Label("recorded"),
		// No ring for this CPU: counted lost, and as other.
		asm.Mov.Imm(asm.R3, 1).WithSymbol("unrecorded"),
		inc(slotRecLost, asm.R3),
		asm.Ja.Label("other"),
	)
}

// hostHalf is the value a 16-bit load of the big-endian (network order)
// v gives on this machine.
func hostHalf(v uint16) uint16 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], v)
	return binary.NativeEndian.Uint16(b[:])
}
