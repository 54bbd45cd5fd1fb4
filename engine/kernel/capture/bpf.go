package capture

import (
	"fmt"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Snaplen is how much of each packet the filter keeps: Ethernet (14) +
// IPv6 (40) + TCP with every option (60) fits in 128.
const Snaplen = 128

// Direction is which packets of an interface a ring keeps.
type Direction int

const (
	// Outgoing keeps what the host transmits (PACKET_OUTGOING): the
	// sender's send units.
	Outgoing Direction = iota
	// Incoming keeps what the interface receives for the host
	// (PACKET_HOST): the receiver's view, after GRO when the device
	// does it.
	Incoming
)

func (d Direction) String() string {
	switch d {
	case Outgoing:
		return "out"
	case Incoming:
		return "in"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// pktType is the sll_pkttype the filter keeps.
func (d Direction) pktType() uint32 {
	if d == Incoming {
		return unix.PACKET_HOST
	}
	return unix.PACKET_OUTGOING
}

// pcapFilter is the filter in pcap-filter(7) words, for the file's
// interface description.
func (d Direction) pcapFilter() string {
	if d == Incoming {
		return "inbound and tcp"
	}
	return "outbound and tcp"
}

// filter keeps TCP over IPv4 and IPv6 (no IPv6 extension headers) in one
// direction and truncates it to Snaplen; everything else is dropped in
// the kernel before it costs a ring slot.
func filter(dir Direction) ([]bpf.RawInstruction, error) {
	const (
		drop   = 0
		keep   = Snaplen
		ethIP4 = 0x0800
		ethIP6 = 0x86dd
	)
	prog := []bpf.Instruction{
		/* 0 */ bpf.LoadExtension{Num: bpf.ExtType},
		/* 1 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: dir.pktType(), SkipFalse: 8}, // -> 10 drop
		/* 2 */ bpf.LoadAbsolute{Off: 12, Size: 2},
		/* 3 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: ethIP4, SkipFalse: 2}, // -> 6
		/* 4 */ bpf.LoadAbsolute{Off: 23, Size: 1},
		/* 5 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.IPPROTO_TCP, SkipTrue: 3, SkipFalse: 4}, // -> 9 keep / 10 drop
		/* 6 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: ethIP6, SkipFalse: 3}, // -> 10
		/* 7 */ bpf.LoadAbsolute{Off: 20, Size: 1},
		/* 8 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.IPPROTO_TCP, SkipFalse: 1}, // -> 10
		/* 9 */ bpf.RetConstant{Val: keep},
		/* 10 */ bpf.RetConstant{Val: drop},
	}
	return bpf.Assemble(prog)
}
