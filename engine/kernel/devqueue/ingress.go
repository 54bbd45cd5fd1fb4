package devqueue

import (
	"github.com/cilium/ebpf/asm"
)

// Offsets in struct __sk_buff (include/uapi/linux/bpf.h), the context a
// TCX program is handed: the verifier turns loads of these into loads of
// the sk_buff, and data and data_end into packet pointers the program may
// read through after comparing them.
const (
	ctxLen     = 0  // u32: skb->len
	ctxData    = 76 // u32: skb->data, a packet pointer
	ctxDataEnd = 80 // u32: the end of the linear data, a packet pointer
	// ctxTstamp is skb->tstamp (u64). A program that reads
	// ctxTstampType as well is handed it as the skb holds it, also at
	// ingress (where the kernel otherwise hides a delivery time from a
	// program, net/core/filter.c bpf_convert_tstamp_read).
	ctxTstamp = 152
	// ctxGSOSegs and ctxGSOSize are skb_shinfo(skb)->gso_segs and
	// gso_size (u32 here, u16 in the kernel).
	ctxGSOSegs = 164
	ctxGSOSize = 176
	// ctxTstampType is skb->tstamp_type (u8; BPF_SKB_CLOCK_*), the
	// clock ctxTstamp is of.
	ctxTstampType = 180
	// clockMonotonic is BPF_SKB_CLOCK_MONOTONIC (SKB_CLOCK_MONOTONIC):
	// skb->tstamp is a CLOCK_MONOTONIC time, bpf_ktime_get_ns's clock.
	clockMonotonic = 1
)

// Stack slots of recordProgram.
const (
	inStackCPU  = -16 // u32: this CPU, the key of its record head
	inStackHdr  = -24 // u64: header bytes from the MAC header to the end of TCP
	inStackFlag = -32 // u32: 1 = to a watched port (counted), 0 = from one
	inStackHead = -40 // u64: this CPU's record head
	inStackRec  = -48 // u64: where the record goes in its CPU's ring
	inStackTmpl = -56 // u32: 1 = Ethernet and IPv4 without options (a template's packet), else 0
)

// A CPU's head line (its value in the heads array, headStride bytes):
// the head, then recordProgram's template (see shortKind):
// the head at the full record that set it, and its words.
const (
	lineHead     = 0 // u64: the head
	lineTmplHead = 8 // u64: the head at the template's full record
)

// tmplWords are the template's words, the bytes of a short record's
// packet that are its CPU's template's: where each is in the packet
// (from the MAC header), its size, and where recordProgram
// keeps it in its CPU's head line (after lineTmplHead).
var tmplWords = []struct {
	pkt, line int16
	size      asm.Size
}{
	{0, 16, asm.DWord},  // Ethernet: destination, source
	{8, 24, asm.DWord},  // Ethernet: source, type; IPv4: version and IHL, TOS
	{20, 40, asm.Word},  // IPv4: fragment field, TTL, protocol
	{26, 32, asm.DWord}, // IPv4: addresses
	{34, 44, asm.Word},  // TCP: ports
}

// recordProgram builds a capture program at TCX, with a record: for
// every TCP packet to or from a watched port, a record of its headers,
// length and time in this CPU's ring. A receiver's (TCX ingress,
// f.Ingress) counts nothing but what the record accounting needs
// (packets it set out to record, packets without a ring, other packets,
// unreadable ones); a sender's (TCX egress) counts its send units as
// program does (see recorded). It is the program a TSO-off receiver
// runs for every wire segment, 1.3-1.8 M times a second here, on the
// core that also sends (on a veth pair the sender's CPU runs the
// receiver's softirq), so it does the least it can:
//
//   - no device check: a TCX program runs for the one device it is
//     attached to;
//   - the headers are parsed where they are, in the skb's linear data
//     (direct packet access through __sk_buff's data and data_end),
//     not copied to the stack first; a packet whose IP and TCP headers
//     are not in the linear data counts as unread;
//   - the record's header bytes, as many as the packet has up to the
//     end of TCP (at most HeaderMax), are copied once the packet is
//     known to be recorded, by the program's own loads and stores when
//     they are in the linear data and at most fastCopy bytes (see
//     copyHeaders), else with bpf_skb_load_bytes;
//   - the time is the skb's own, skb->tstamp, when it is a
//     CLOCK_MONOTONIC time (tstamp_type): a plain load, no clock read
//     (see triedAndStamped); bpf_ktime_get_ns only for a packet without
//     one (the clock read was the one call that was most of what the
//     program cost, 24-35 ns of a ~1200 ns TSO-off packet here).
//
// At TCX ingress skb->data is the MAC header (tcx_run pushes the header
// the device pulled for the program), and at TCX egress too
// (__dev_queue_xmit resets the MAC header to it), so a record starts at
// data and its length is skb->len. Registers kept across helper calls:
// R6 the __sk_buff, R7 the kernel's sk_buff, R8 the payload, R9 the
// counters.
func recordProgram(o offsets, f filter, mapFD int, rec *recMaps) (asm.Instructions, error) {
	off := func(m member) int16 { return int16(m.Off) }
	inc := func(slot int, src asm.Register) asm.Instruction {
		return asm.AddAtomic.Mem(asm.R9, src, asm.DWord, int16(slot*8))
	}
	insns := asm.Instructions{asm.Mov.Reg(asm.R6, asm.R1), castToKernCtx(o), asm.Mov.Reg(asm.R7, asm.R0)}
	insns = append(insns, countersInR9(mapFD)...)
	insns = append(insns, asm.Instructions{
		// R4 = the IP header's offset from the MAC header, at most maxMAC.
		asm.LoadMem(asm.R3, asm.R7, off(o.SkbProtocol), asm.Half),
		asm.LoadMem(asm.R4, asm.R7, off(o.SkbNetworkHeader), asm.Half),
		asm.LoadMem(asm.R5, asm.R7, off(o.SkbMacHeader), asm.Half),
		asm.Sub.Reg(asm.R4, asm.R5),
		asm.JGT.Imm(asm.R4, maxMAC, "unread"), // no MAC header set
		// R2 = the IP header, R1 = the end of the linear data.
		asm.LoadMem(asm.R2, asm.R6, ctxData, asm.Word),
		asm.LoadMem(asm.R1, asm.R6, ctxDataEnd, asm.Word),
		asm.Add.Reg(asm.R2, asm.R4),
		asm.JEq.Imm(asm.R3, int32(hostHalf(0x0800)), "ipv4"),
		asm.JNE.Imm(asm.R3, int32(hostHalf(0x86dd)), "other"),
		// IPv6 without extension headers: TCP 40 bytes on.
		asm.Mov.Reg(asm.R5, asm.R2),
		asm.Add.Imm(asm.R5, 40+20),
		asm.JGT.Reg(asm.R5, asm.R1, "unread"),
		asm.LoadMem(asm.R3, asm.R2, 6, asm.Byte),
		asm.JNE.Imm(asm.R3, 6, "other"), // IPPROTO_TCP
		asm.Add.Imm(asm.R2, 40),
		asm.Add.Imm(asm.R4, 40),
		asm.StoreImm(asm.R10, inStackTmpl, 0, asm.Word),
		asm.Ja.Label("tcp"),
		// IPv4: TCP IHL*4 bytes on.
		asm.Mov.Reg(asm.R5, asm.R2).WithSymbol("ipv4"),
		asm.Add.Imm(asm.R5, 20),
		asm.JGT.Reg(asm.R5, asm.R1, "unread"),
		asm.LoadMem(asm.R3, asm.R2, 9, asm.Byte),
		asm.JNE.Imm(asm.R3, 6, "other"), // IPPROTO_TCP
		asm.LoadMem(asm.R3, asm.R2, 0, asm.Byte),
		asm.And.Imm(asm.R3, 0x0f),
		asm.LSh.Imm(asm.R3, 2),
		asm.JLT.Imm(asm.R3, 20, "other"), // not an IPv4 header
		// A template's packet: Ethernet, IPv4 without options.
		asm.StoreImm(asm.R10, inStackTmpl, 0, asm.Word),
		asm.JNE.Imm(asm.R3, 20, "ipv4_tcp"),
		asm.JNE.Imm(asm.R4, tmplEth, "ipv4_tcp"),
		asm.StoreImm(asm.R10, inStackTmpl, 1, asm.Word),
		asm.Add.Reg(asm.R2, asm.R3).WithSymbol("ipv4_tcp"),
		asm.Add.Reg(asm.R4, asm.R3),
		// R2 = the TCP header, R4 its offset from the MAC header.
		asm.Mov.Reg(asm.R5, asm.R2).WithSymbol("tcp"),
		asm.Add.Imm(asm.R5, 20),
		asm.JGT.Reg(asm.R5, asm.R1, "unread"),
		// R4 = header bytes up to the end of TCP; R8 = the payload.
		asm.LoadMem(asm.R3, asm.R2, 12, asm.Byte),
		asm.RSh.Imm(asm.R3, 4),
		asm.LSh.Imm(asm.R3, 2),
		asm.Add.Reg(asm.R4, asm.R3),
		asm.StoreMem(asm.R10, inStackHdr, asm.R4, asm.DWord),
		asm.LoadMem(asm.R8, asm.R6, ctxLen, asm.Word),
		asm.Sub.Reg(asm.R8, asm.R4),
		// Packets to a watched port are counted (flag 1), packets
		// from one recorded but not counted (flag 0).
		asm.StoreImm(asm.R10, inStackFlag, 1, asm.Word),
	}...)
	if len(f.Ports) > 0 {
		insns = append(insns, asm.LoadMem(asm.R3, asm.R2, 2, asm.Half))
		for _, p := range f.Ports {
			insns = append(insns, asm.JEq.Imm(asm.R3, int32(hostHalf(p)), "record"))
		}
		insns = append(insns, asm.LoadMem(asm.R3, asm.R2, 0, asm.Half))
		for _, p := range f.Ports {
			insns = append(insns, asm.JEq.Imm(asm.R3, int32(hostHalf(p)), "from_port"))
		}
		insns = append(insns,
			asm.Ja.Label("other"),
			asm.StoreImm(asm.R10, inStackFlag, 0, asm.Word).WithSymbol("from_port"),
		)
	}
	// The record: at this CPU's head mod the ring's size.
	slot := ringSlot(rec, inStackCPU, inStackHead, inStackRec)
	slot[0] = slot[0].WithSymbol("record")
	insns = append(insns, slot...)
	insns = append(insns, triedAndStamped(inStackRec, asm.R3)...)
	insns = append(insns,
		asm.LoadMem(asm.R2, asm.R6, ctxLen, asm.Word),
		asm.StoreMem(asm.R3, recLen, asm.R2, asm.Word),
	)
	insns = append(insns, shortRecord()...)
	insns = append(insns,
		asm.StoreMem(asm.R3, recPayload, asm.R8, asm.Word).WithSymbol("full"),
		asm.LoadMem(asm.R2, asm.R10, inStackFlag, asm.Word),
		asm.StoreMem(asm.R3, recFlag, asm.R2, asm.Byte),
		// The header bytes, at most HeaderMax (the parse found at
		// least 40: the verifier is shown they are not none).
		asm.LoadMem(asm.R4, asm.R10, inStackHdr, asm.DWord),
		asm.JLE.Imm(asm.R4, HeaderMax, "rec_len"),
		asm.Mov.Imm(asm.R4, HeaderMax),
		asm.JLT.Imm(asm.R4, 1, "exit").WithSymbol("rec_len"),
		asm.StoreMem(asm.R3, recCapLen, asm.R4, asm.Byte),
		asm.Add.Imm(asm.R3, recHeader),
	)
	insns = append(insns, copyHeaders()...)
	insns = append(insns,
		// Written: head += recordBytes(caplen).
		asm.LoadMem(asm.R3, asm.R10, inStackRec, asm.DWord).WithSymbol("copied"),
		asm.LoadMem(asm.R2, asm.R3, recCapLen, asm.Byte),
		asm.Add.Imm(asm.R2, recHeader+7),
		asm.And.Imm(asm.R2, -8),
		asm.LoadMem(asm.R1, asm.R10, inStackHead, asm.DWord),
		asm.LoadMem(asm.R3, asm.R1, lineHead, asm.DWord),
		asm.Add.Reg(asm.R2, asm.R3),
	)
	insns = append(insns, setTemplate()...)
	pub := publish(storeArch)
	pub[0] = pub[0].WithSymbol("publish")
	insns = append(insns, pub...)
	insns = append(insns, recorded(f)...)
	insns = append(insns,
		// No ring for this CPU: counted lost, and as other.
		asm.Mov.Imm(asm.R3, 1).WithSymbol("unrecorded"),
		inc(slotRecLost, asm.R3),
		asm.Ja.Label("other"),
	)
	return append(insns, tail(tcxNext, inc)...), nil
}

// triedAndStamped is triedAndTimed (for recordProgram: R6 the
// __sk_buff) with the time taken from the skb where it has a
// CLOCK_MONOTONIC one: skb->tstamp when skb->tstamp_type says so and it
// is not 0, else bpf_ktime_get_ns. TCP stamps every skb it sends
// (__tcp_transmit_skb: skb_set_delivery_type_by_clockid(skb,
// tp->tcp_wstamp_ns, CLOCK_MONOTONIC), its departure time, EDT), and a
// veth keeps that stamp into the peer's namespace (skb_scrub_packet
// clears only a stamp of no type, skb_clear_tstamp) up to IP's local
// delivery (skb_clear_delivery_time), after TCX ingress. So a sender's
// records carry the time TCP gave the packet to depart (tcp_wstamp_ns:
// the stack's clock as read at the start of the tcp_write_xmit that
// sent it, or, paced for sch_fq, when fq will let it go, which is after
// the hook), and a receiver's behind a veth carry the same time, the
// sender's; a packet TCP did not stamp (a device's receive time, a
// CLOCK_REALTIME one from netstamp, none) the time the program ran.
func triedAndStamped(recAt int16, dst asm.Register) asm.Instructions {
	return asm.Instructions{
		asm.LoadMem(asm.R3, asm.R9, int16(slotRecTried*8), asm.DWord),
		asm.Add.Imm(asm.R3, 1),
		asm.StoreMem(asm.R9, int16(slotRecTried*8), asm.R3, asm.DWord),
		asm.LoadMem(asm.R0, asm.R6, ctxTstampType, asm.Byte),
		asm.JNE.Imm(asm.R0, clockMonotonic, "clock"),
		asm.LoadMem(asm.R0, asm.R6, ctxTstamp, asm.DWord),
		asm.JNE.Imm(asm.R0, 0, "stamped"),
		asm.FnKtimeGetNs.Call().WithSymbol("clock"),
		asm.LoadMem(dst, asm.R10, recAt, asm.DWord).WithSymbol("stamped"),
		asm.StoreMem(dst, recTime, asm.R0, asm.DWord),
	}
}

// fastCopy is the most header bytes copyHeaders copies with loads and
// stores of its own: eight words and the word that ends the headers,
// which Ethernet, IPv4 and TCP with timestamps (66 bytes) take.
const fastCopy = 72

// copyHeaders copies the R4 header bytes (1 to HeaderMax) from the MAC
// header, skb->data, to R3 (the record's header bytes), then goes on to
// "copied": headers of 8 to fastCopy bytes whose first 64 bytes and
// whole headers are in the linear data as eight 8-byte loads and stores
// from the packet and one more of the 8 bytes that end them (the words
// may overlap; bytes past the headers land past the record, where the
// next one is written); others with bpf_skb_load_bytes. A packet shorter
// than its headers goes to "exit": not published, so counted lost.
func copyHeaders() asm.Instructions {
	insns := asm.Instructions{
		asm.JGT.Imm(asm.R4, fastCopy, "copy_slow"),
		asm.JLT.Imm(asm.R4, 8, "copy_slow"),
		asm.LoadMem(asm.R1, asm.R6, ctxData, asm.Word),
		asm.LoadMem(asm.R2, asm.R6, ctxDataEnd, asm.Word),
		asm.Mov.Reg(asm.R5, asm.R1),
		asm.Add.Imm(asm.R5, 64),
		asm.JGT.Reg(asm.R5, asm.R2, "copy_slow"),
	}
	for i := int16(0); i < 64; i += 8 {
		insns = append(insns,
			asm.LoadMem(asm.R0, asm.R1, i, asm.DWord),
			asm.StoreMem(asm.R3, i, asm.R0, asm.DWord),
		)
	}
	return append(insns,
		// The 8 bytes that end the headers.
		asm.Mov.Reg(asm.R5, asm.R4),
		asm.Sub.Imm(asm.R5, 8),
		asm.Add.Reg(asm.R1, asm.R5),
		asm.Mov.Reg(asm.R0, asm.R1),
		asm.Add.Imm(asm.R0, 8),
		asm.JGT.Reg(asm.R0, asm.R2, "copy_slow_at"),
		asm.Add.Reg(asm.R3, asm.R5),
		asm.LoadMem(asm.R0, asm.R1, 0, asm.DWord),
		asm.StoreMem(asm.R3, 0, asm.R0, asm.DWord),
		asm.Ja.Label("copied"),
		// R3 back to the record's header bytes.
		asm.LoadMem(asm.R3, asm.R10, inStackRec, asm.DWord).WithSymbol("copy_slow_at"),
		asm.Add.Imm(asm.R3, recHeader),
		asm.Mov.Reg(asm.R1, asm.R6).WithSymbol("copy_slow"),
		asm.Mov.Imm(asm.R2, 0),
		asm.FnSkbLoadBytes.Call(),
		asm.JNE.Imm(asm.R0, 0, "exit"),
	)
}

// shortRecord writes a short record (see shortKind) of the packet whose
// record R3 points at (its time and length written) and publishes it,
// then goes to "exit", when the packet is a template's (inStackTmpl),
// its TCP header is of 5 or 8 words and in the linear data, its
// template bytes are its CPU's template's and the template was written
// in the syncBytes of the ring the head is in; else it goes on to
// "full". It keeps R3 and R6-R9.
func shortRecord() asm.Instructions {
	insns := asm.Instructions{
		asm.LoadMem(asm.R4, asm.R10, inStackTmpl, asm.Word),
		asm.JEq.Imm(asm.R4, 0, "full"),
		// R1 = the head line; the head and the template's in the same
		// syncBytes.
		asm.LoadMem(asm.R1, asm.R10, inStackHead, asm.DWord),
		asm.LoadMem(asm.R4, asm.R1, lineHead, asm.DWord),
		asm.LoadMem(asm.R5, asm.R1, lineTmplHead, asm.DWord),
		asm.Xor.Reg(asm.R4, asm.R5),
		asm.RSh.Imm(asm.R4, syncShift),
		asm.JNE.Imm(asm.R4, 0, "full"),
	}
	// TCP's first 20 bytes are in the linear data.
	insns = append(insns, linearHolds(tmplEth+20+20, "full")...)
	insns = append(insns,
		asm.LoadMem(asm.R0, asm.R4, tmplEth+20+12, asm.Byte),
		asm.RSh.Imm(asm.R0, 4),
		asm.JEq.Imm(asm.R0, shortDoff5, "short5"),
		asm.JNE.Imm(asm.R0, shortDoff8, "full"),
		asm.Mov.Reg(asm.R0, asm.R4),
		asm.Add.Imm(asm.R0, tmplEth+20+shortDoff8*4),
		asm.JGT.Reg(asm.R0, asm.R5, "full"),
	)
	insns = append(insns, shortOf(shortDoff8)...)
	short5 := shortOf(shortDoff5)
	short5[0] = short5[0].WithSymbol("short5")
	return append(insns, short5...)
}

// shortOf writes and publishes the short record of a packet with a TCP
// header of doff words, all of it in the linear data, if its template
// bytes (R4: the MAC header) are the template's in the head line (R1),
// then goes to "exit"; else it goes to "full". R3 is the record.
func shortOf(doff int) asm.Instructions {
	var insns asm.Instructions
	for _, w := range tmplWords {
		insns = append(insns,
			asm.LoadMem(asm.R0, asm.R4, w.pkt, w.size),
			asm.LoadMem(asm.R2, asm.R1, w.line, w.size),
			asm.JNE.Reg(asm.R0, asm.R2, "full"),
		)
	}
	move := func(to, from int16, size asm.Size) asm.Instructions {
		return asm.Instructions{asm.LoadMem(asm.R0, asm.R4, from, size), asm.StoreMem(asm.R3, to, asm.R0, size)}
	}
	insns = append(insns, move(shortIP2, tmplEth+2, asm.Word)...)
	insns = append(insns, move(shortIP10, tmplEth+10, asm.Half)...)
	// TCP bytes 4 to doff*4, in words (the last one may overlap the
	// one before it).
	const tcp = tmplEth + 20
	n := int16(doff*4 - 4)
	for k := int16(0); k < n; k += 8 {
		k = min(k, n-8)
		insns = append(insns, move(shortTCP4+k, tcp+4+k, asm.DWord)...)
	}
	insns = append(insns,
		asm.StoreImm(asm.R3, recCapLen, int64(shortKind|doff), asm.Byte),
		asm.LoadMem(asm.R2, asm.R1, lineHead, asm.DWord),
		asm.Add.Imm(asm.R2, int32(shortBytes(doff))),
	)
	insns = append(insns, publish(storeArch)...)
	return append(insns, asm.Ja.Label("recorded"))
}

// recorded (label "recorded") follows a published record. A receiver's
// program is done (it counts no units); a sender's counts the packet as
// program does: a send unit when it goes to a watched port with
// payload (R8), else other. Then it goes to "exit". Its GSO fields come
// from the __sk_buff (gso_size, gso_segs: loads the verifier turns into
// reads of skb_shinfo, where program calls bpf_probe_read_kernel), and
// its counts are plain additions, not atomic ones: the program does not
// nest on a CPU (TCX egress runs with bottom halves off) and its map is
// read after Stop detaches it or, for Totals, a word at a time, which a
// plain 64-bit store keeps whole. A TSO-off sender runs this for every
// wire segment.
func recorded(f filter) asm.Instructions {
	if f.Ingress {
		return asm.Instructions{asm.Ja.Label("exit").WithSymbol("recorded")}
	}
	insns := asm.Instructions{
		asm.LoadMem(asm.R3, asm.R10, inStackFlag, asm.Word).WithSymbol("recorded"),
		asm.JEq.Imm(asm.R3, 0, "other"),
		asm.JSLE.Imm(asm.R8, 0, "other"),
		asm.LoadMem(asm.R1, asm.R6, ctxGSOSize, asm.Word),
		asm.LoadMem(asm.R2, asm.R6, ctxGSOSegs, asm.Word),
	}
	return append(insns, countGSO(f, plainAdd)...)
}

// plainAdd adds src to the 64-bit word at base+off with a load, an add
// and a store through R0 (see recorded for why that is enough there).
func plainAdd(base asm.Register, off int16, src asm.Register) asm.Instructions {
	return asm.Instructions{
		asm.LoadMem(asm.R0, base, off, asm.DWord),
		asm.Add.Reg(asm.R0, src),
		asm.StoreMem(base, off, asm.R0, asm.DWord),
	}
}

// setTemplate makes the full record on its way to be published (R1 the
// head line, R3 the head it is written at) its CPU's template when its
// packet is a template's (inStackTmpl) with the template's bytes in the
// linear data: the template's words into the head line, its head, and
// flagTemplate in the record; then it goes on to "publish", the
// instruction after it. It keeps R1 and R2.
func setTemplate() asm.Instructions {
	insns := asm.Instructions{
		asm.LoadMem(asm.R4, asm.R10, inStackTmpl, asm.Word),
		asm.JEq.Imm(asm.R4, 0, "publish"),
	}
	insns = append(insns, linearHolds(tmplBytes, "publish")...)
	for _, w := range tmplWords {
		insns = append(insns,
			asm.LoadMem(asm.R0, asm.R4, w.pkt, w.size),
			asm.StoreMem(asm.R1, w.line, asm.R0, w.size),
		)
	}
	return append(insns,
		asm.StoreMem(asm.R1, lineTmplHead, asm.R3, asm.DWord),
		asm.LoadMem(asm.R4, asm.R10, inStackRec, asm.DWord),
		asm.LoadMem(asm.R0, asm.R4, recFlag, asm.Byte),
		asm.Or.Imm(asm.R0, flagTemplate),
		asm.StoreMem(asm.R4, recFlag, asm.R0, asm.Byte),
	)
}

// linearHolds goes to orElse unless the skb's linear data holds n bytes
// from the MAC header; it leaves the MAC header (skb->data) in R4 and
// the linear data's end in R5, for direct packet access.
func linearHolds(n int32, orElse string) asm.Instructions {
	return asm.Instructions{
		asm.LoadMem(asm.R4, asm.R6, ctxData, asm.Word),
		asm.LoadMem(asm.R5, asm.R6, ctxDataEnd, asm.Word),
		asm.Mov.Reg(asm.R0, asm.R4),
		asm.Add.Imm(asm.R0, n),
		asm.JGT.Reg(asm.R0, asm.R5, orElse),
	}
}
