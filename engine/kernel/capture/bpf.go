package capture

import (
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Snaplen is how much of each packet the filter keeps: Ethernet (14) +
// IPv6 (40) + TCP with every option (60) fits in 128.
const Snaplen = 128

// filter keeps outgoing TCP over IPv4 and IPv6 (no IPv6 extension
// headers) and truncates it to Snaplen; everything else is dropped in the
// kernel before it costs a ring slot.
func filter() ([]bpf.RawInstruction, error) {
	const (
		drop   = 0
		keep   = Snaplen
		ethIP4 = 0x0800
		ethIP6 = 0x86dd
	)
	prog := []bpf.Instruction{
		/* 0 */ bpf.LoadExtension{Num: bpf.ExtType},
		/* 1 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.PACKET_OUTGOING, SkipFalse: 8}, // -> 10 drop
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
