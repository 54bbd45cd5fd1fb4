package devqueue

import (
	"fmt"
	"math/bits"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// On a guest whose hypervisor builds its page tables for the guest's
// mappings lazily (this project's paravirtual AMD guest: pvm_* in the
// kernel's symbols), the first write the kernel makes through each page
// of a newly vmalloc'd ring costs microseconds, though the kernel zeroed
// the pages when it made the map (through another mapping of them): a
// receiver's program that writes a record into ring memory it has not
// written before paid 142-166 ns a packet where a ring it had written
// took 45-48 (BenchmarkRingMemory, session 15). warm writes one byte of
// every page of the rings through the same kernel mapping the program
// writes through, before the program is attached, so the run's records
// go to pages already written.

// pageShift is log2 of the page size.
var pageShift = bits.TrailingZeros(uint(unix.Getpagesize()))

// warm writes a zero into the first byte of every page of every CPU's
// ring (and of the slack past it), from a socket filter program run by
// BPF_PROG_TEST_RUN once a page. The rings hold zeros until the program
// that records is attached, so it changes nothing in them; the heads are
// not touched.
func (r *recordRing) warm() error { return r.warmWith(0) }

// warmWith is warm writing b (a test writes another byte than zero, to
// see every page written).
func (r *recordRing) warmWith(b byte) error {
	perCPU := (r.stride() + 1<<pageShift - 1) >> pageShift
	ctl, err := ebpf.NewMap(&ebpf.MapSpec{Name: "tsl_rec_warm", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	if err != nil {
		return fmt.Errorf("warm the record rings: %w", err)
	}
	defer ctl.Close()
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name: "tsl_rec_warm", Type: ebpf.SocketFilter, License: "Dual MIT/GPL",
		Instructions: warmProgram(ctl.FD(), r.recs.FD(), r.cpus, perCPU, r.stride(), b),
	})
	if err != nil {
		return fmt.Errorf("warm the record rings: %w", err)
	}
	defer prog.Close()
	// The smallest packet a socket filter's test run takes: an
	// Ethernet header.
	pkt := make([]byte, 14)
	pages := perCPU * uint64(r.cpus)
	for done := uint64(0); done < pages; {
		// BPF_PROG_TEST_RUN's repeat is a u32; the kernel breaks the
		// loop for signals and rescheduling on its own.
		n := min(pages-done, 1<<20)
		if _, err := prog.Run(&ebpf.RunOptions{Data: pkt, Repeat: uint32(n)}); err != nil {
			return fmt.Errorf("warm the record rings: %w", err)
		}
		done += n
	}
	var next uint64
	if err := ctl.Lookup(uint32(0), &next); err != nil {
		return fmt.Errorf("warm the record rings: %w", err)
	}
	if next != pages {
		return fmt.Errorf("warm the record rings: wrote %d pages of %d", next, pages)
	}
	return nil
}

// warmProgram writes b at page n of the rings (CPU n/perCPU, page
// n%perCPU of its value) where n is the u64 in ctl's only value, and
// adds one to n; past the last page it writes nothing.
func warmProgram(ctlFD, recsFD, cpus int, perCPU, stride uint64, b byte) asm.Instructions {
	insns := Key0Value(ctlFD, -4, asm.R6, "done")
	insns = append(insns,
		asm.LoadMem(asm.R7, asm.R6, 0, asm.DWord),
		// The CPU: n / perCPU.
		asm.Mov.Reg(asm.R8, asm.R7),
		asm.Div.Imm(asm.R8, int32(perCPU)),
		asm.JGE.Imm(asm.R8, int32(cpus), "done"),
		asm.StoreMem(asm.R10, -8, asm.R8, asm.Word),
	)
	insns = append(insns, Lookup(recsFD, -8, "done")...)
	return append(insns,
		// The byte: (n % perCPU) pages in, which the verifier must see
		// is inside the value.
		asm.Mod.Imm(asm.R7, int32(perCPU)),
		asm.LSh.Imm(asm.R7, int32(pageShift)),
		asm.JGE.Imm(asm.R7, int32(stride), "next"),
		asm.Add.Reg(asm.R0, asm.R7),
		asm.StoreImm(asm.R0, 0, int64(b), asm.Byte),
		asm.LoadMem(asm.R7, asm.R6, 0, asm.DWord).WithSymbol("next"),
		asm.Add.Imm(asm.R7, 1),
		asm.StoreMem(asm.R6, 0, asm.R7, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("done"),
		asm.Return(),
	)
}
