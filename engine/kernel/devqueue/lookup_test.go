package devqueue

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// TestKey0Value runs Key0Value (and with it Lookup) in the kernel: a
// socket filter that returns the u32 at key 0 of a hash map, or 7 when
// the map has no key 0, returns 7 on the empty map and the value once
// it is there.
func TestKey0Value(t *testing.T) {
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Hash, KeySize: 4, ValueSize: 4, MaxEntries: 1})
	if errors.Is(err, unix.EPERM) {
		skipUnlessRequired(t, fmt.Sprintf("BPF refused: %v", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	insns := Key0Value(m.FD(), -4, asm.R6, "missing")
	insns = append(insns,
		asm.LoadMem(asm.R0, asm.R6, 0, asm.Word),
		asm.Return(),
		asm.Mov.Imm(asm.R0, 7).WithSymbol("missing"),
		asm.Return(),
	)
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "tsl_key0_test", Type: ebpf.SocketFilter, License: "Dual MIT/GPL", Instructions: insns})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	run := func() uint32 {
		t.Helper()
		ret, err := prog.Run(&ebpf.RunOptions{Data: make([]byte, 64)})
		if err != nil {
			t.Fatal(err)
		}
		return ret
	}
	if got := run(); got != 7 {
		t.Errorf("empty map: returned %d, want 7 (the missing label)", got)
	}
	if err := m.Put(uint32(0), uint32(42)); err != nil {
		t.Fatal(err)
	}
	if got := run(); got != 42 {
		t.Errorf("key 0 = 42: returned %d, want 42", got)
	}
}
