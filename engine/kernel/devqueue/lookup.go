package devqueue

import "github.com/cilium/ebpf/asm"

// Lookup is the instructions that look up, in the map mapFD, the key
// on the stack at keyAt, leaving the value's address in R0, or go to
// missing when the map has none. The counter, its record rings and the
// kernel engine's softirq meter look up their maps by this rule.
func Lookup(mapFD int, keyAt int16, missing string) asm.Instructions {
	return asm.Instructions{
		asm.LoadMapPtr(asm.R1, mapFD),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, int32(keyAt)),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, missing),
	}
}

// Key0Value is the instructions that put the value of key 0 of the map
// mapFD (a per-CPU map's: this CPU's) in dst, writing the u32 key on the
// stack at keyAt, or go to missing.
func Key0Value(mapFD int, keyAt int16, dst asm.Register, missing string) asm.Instructions {
	insns := asm.Instructions{asm.StoreImm(asm.R10, keyAt, 0, asm.Word)}
	insns = append(insns, Lookup(mapFD, keyAt, missing)...)
	return append(insns, asm.Mov.Reg(dst, asm.R0))
}
