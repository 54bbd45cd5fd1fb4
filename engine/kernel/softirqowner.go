package kernel

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/engine/kernel/devqueue"
)

// The owner programs tell whose work a softirq outside the workers'
// threads did, so that another job's is not counted as the lab's: one on
// net:netif_receive_skb looks at the network namespace of every packet
// the open softirq receives (skb->dev's), one on
// timer:hrtimer_expire_entry at that of every network timer an open
// HRTIMER softirq expires: a TCP socket's pacing timer (tcp_pace_kick)
// or compressed-ACK timer (tcp_compressed_ack_kick), the socket's
// namespace, and a qdisc's watchdog (qdisc_watchdog, tbf's), its
// device's. Each counts, in this CPU's value, the lab's (a namespace in
// the lab map) and the others'; softirq_exit then files a softirq that
// saw only the lab's under classLab and one that saw only others' under
// classForeign. A softirq that saw neither (NET_TX, TASKLET, TIMER, an
// HRTIMER softirq of other timers) or both stays idle or other.

// ownerOffsets are the kernel struct offsets (BTF) and function
// addresses (/proc/kallsyms) the owner programs read.
type ownerOffsets struct {
	HrtimerFunction   uint32 // hrtimer.function
	TCPPacingTimer    uint32 // tcp_sock.pacing_timer
	TCPCompressedACK  uint32 // tcp_sock.compressed_ack_timer
	SockNet           uint32 // sock.__sk_common.skc_net.net
	WatchdogTimer     uint32 // qdisc_watchdog.timer
	WatchdogQdisc     uint32 // qdisc_watchdog.qdisc
	QdiscDevQueue     uint32 // Qdisc.dev_queue
	QueueDev          uint32 // netdev_queue.dev
	DevNet            uint32 // net_device.nd_net.net
	NetInum           uint32 // net.ns.inum
	SkbDev            uint32 // sk_buff.dev
	PaceKick          uint64 // tcp_pace_kick
	CompressedACKKick uint64 // tcp_compressed_ack_kick
	QdiscWatchdog     uint64 // qdisc_watchdog
}

// loadOwnerOffsets reads the offsets from the running kernel's BTF and
// the timer functions' addresses from /proc/kallsyms.
func loadOwnerOffsets() (ownerOffsets, error) {
	var o ownerOffsets
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return o, fmt.Errorf("kernel BTF: %w", err)
	}
	for _, m := range []struct {
		dst  *uint32
		typ  string
		path []string
	}{
		{&o.HrtimerFunction, "hrtimer", []string{"function"}},
		{&o.TCPPacingTimer, "tcp_sock", []string{"pacing_timer"}},
		{&o.TCPCompressedACK, "tcp_sock", []string{"compressed_ack_timer"}},
		{&o.SockNet, "sock", []string{"__sk_common", "skc_net", "net"}},
		{&o.WatchdogTimer, "qdisc_watchdog", []string{"timer"}},
		{&o.WatchdogQdisc, "qdisc_watchdog", []string{"qdisc"}},
		{&o.QdiscDevQueue, "Qdisc", []string{"dev_queue"}},
		{&o.QueueDev, "netdev_queue", []string{"dev"}},
		{&o.DevNet, "net_device", []string{"nd_net", "net"}},
		{&o.NetInum, "net", []string{"ns", "inum"}},
		{&o.SkbDev, "sk_buff", []string{"dev"}},
	} {
		if *m.dst, err = devqueue.MemberOffset(spec, m.typ, m.path...); err != nil {
			return o, err
		}
	}
	syms, err := os.ReadFile("/proc/kallsyms")
	if err != nil {
		return o, err
	}
	addrs := parseKallsyms(string(syms), "tcp_pace_kick", "tcp_compressed_ack_kick", "qdisc_watchdog")
	o.PaceKick, o.CompressedACKKick, o.QdiscWatchdog = addrs["tcp_pace_kick"], addrs["tcp_compressed_ack_kick"], addrs["qdisc_watchdog"]
	if o.PaceKick == 0 || o.CompressedACKKick == 0 || o.QdiscWatchdog == 0 {
		return o, fmt.Errorf("/proc/kallsyms names no address for tcp_pace_kick, tcp_compressed_ack_kick or qdisc_watchdog (kptr_restrict?): %v", addrs)
	}
	return o, nil
}

// parseKallsyms returns the address of each of names in a /proc/kallsyms
// text ("ffffffff8208a830 T tcp_pace_kick"); a name it lacks, or whose
// address reads 0 (kptr_restrict hides them), is left out.
func parseKallsyms(s string, names ...string) map[string]uint64 {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]uint64{}
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || !want[f[2]] {
			continue
		}
		if a, err := strconv.ParseUint(f[0], 16, 64); err == nil && a != 0 {
			out[f[2]] = a
		}
	}
	return out
}

// attachOwners loads the owner programs with a map of the lab's
// namespaces (their inode numbers, net.ns.inum) and attaches them.
func (s *softirqMeter) attachOwners(labNS []uint64) error {
	o, err := loadOwnerOffsets()
	if err != nil {
		return err
	}
	lab, err := ebpf.NewMap(&ebpf.MapSpec{
		Name: "tsl_labns", Type: ebpf.Hash, KeySize: 4, ValueSize: 4, MaxEntries: uint32(max(1, len(labNS))),
	})
	if err != nil {
		return fmt.Errorf("create the namespace map: %w", err)
	}
	s.labMap = lab
	for _, ns := range labNS {
		if err := lab.Put(uint32(ns), uint32(1)); err != nil {
			return fmt.Errorf("namespace map: %w", err)
		}
	}
	for _, tp := range []struct {
		name  string
		insns asm.Instructions
	}{
		{"netif_receive_skb", skbOwnerProgram(s.m.FD(), lab.FD(), o)},
		{"hrtimer_expire_entry", hrtimerOwnerProgram(s.m.FD(), lab.FD(), o)},
	} {
		if err := s.attach(tp.name, tp.insns); err != nil {
			return err
		}
	}
	return nil
}

// attach loads a raw tracepoint program and attaches it to tracepoint
// name; the meter closes both.
func (s *softirqMeter) attach(name string, insns asm.Instructions) error {
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         "tsl_" + name,
		Type:         ebpf.RawTracepoint,
		Instructions: insns,
		License:      "Dual MIT/GPL",
	})
	if err != nil {
		return fmt.Errorf("load the %s program: %w", name, err)
	}
	s.progs = append(s.progs, p)
	s.tps = append(s.tps, name)
	l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: name, Program: p})
	if err != nil {
		return fmt.Errorf("attach to %s: %w", name, err)
	}
	s.links = append(s.links, l)
	return nil
}

// skbOwnerProgram counts a packet received in an open softirq as the
// lab's or another's by skb->dev's namespace; a packet from the same
// device as the last one it looked at in this softirq is not looked at
// again (a softirq takes a device's packets in a run: 76 ns a packet
// otherwise, BenchmarkSoftirqMeter). Registers: R6 the skb, R7 this
// CPU's value, R8 the device, then the struct net.
func skbOwnerProgram(mapFD, labFD int, o ownerOffsets) asm.Instructions {
	insns := ownerPrologue(mapFD)
	insns = append(insns, readPtr(asm.R8, asm.R6, o.SkbDev)...)
	insns = append(insns,
		asm.LoadMem(asm.R1, asm.R7, sirqLastDev*8, asm.DWord),
		asm.JEq.Reg(asm.R1, asm.R8, "exit"),
		asm.StoreMem(asm.R7, sirqLastDev*8, asm.R8, asm.DWord),
	)
	insns = append(insns, readPtr(asm.R8, asm.R8, o.DevNet)...)
	return append(insns, countOwner(labFD, o)...)
}

// hrtimerOwnerProgram counts a network timer expired in an open HRTIMER
// softirq as the lab's or another's by its socket's or qdisc device's
// namespace; other timers count as neither. Registers: R6 the hrtimer,
// R7 this CPU's value, R8 the socket or qdisc, then the struct net, R9
// the timer's function.
func hrtimerOwnerProgram(mapFD, labFD int, o ownerOffsets) asm.Instructions {
	insns := append(ownerPrologue(mapFD),
		asm.LoadMem(asm.R1, asm.R7, sirqEntryVec*8, asm.DWord),
		asm.JNE.Imm(asm.R1, int32(vecHRTimer), "exit"),
	)
	insns = append(insns, readPtr(asm.R9, asm.R6, o.HrtimerFunction)...)
	insns = append(insns,
		asm.LoadImm(asm.R1, int64(o.PaceKick), asm.DWord),
		asm.JEq.Reg(asm.R9, asm.R1, "pacing"),
		asm.LoadImm(asm.R1, int64(o.CompressedACKKick), asm.DWord),
		asm.JEq.Reg(asm.R9, asm.R1, "cack"),
		asm.LoadImm(asm.R1, int64(o.QdiscWatchdog), asm.DWord),
		asm.JNE.Reg(asm.R9, asm.R1, "exit"),
		// qdisc_watchdog: the watchdog, its qdisc, queue, device.
		asm.Mov.Reg(asm.R8, asm.R6),
		asm.Add.Imm(asm.R8, -int32(o.WatchdogTimer)),
	)
	insns = append(insns, readPtr(asm.R8, asm.R8, o.WatchdogQdisc)...)
	insns = append(insns, readPtr(asm.R8, asm.R8, o.QdiscDevQueue)...)
	insns = append(insns, readPtr(asm.R8, asm.R8, o.QueueDev)...)
	insns = append(insns, readPtr(asm.R8, asm.R8, o.DevNet)...)
	insns = append(insns,
		asm.Ja.Label("net"),
		asm.Mov.Reg(asm.R8, asm.R6).WithSymbol("pacing"),
		asm.Add.Imm(asm.R8, -int32(o.TCPPacingTimer)),
		asm.Ja.Label("sock"),
		asm.Mov.Reg(asm.R8, asm.R6).WithSymbol("cack"),
		asm.Add.Imm(asm.R8, -int32(o.TCPCompressedACK)),
	)
	sock := readPtr(asm.R8, asm.R8, o.SockNet)
	sock[0] = sock[0].WithSymbol("sock")
	insns = append(insns, sock...)
	count := countOwner(labFD, o)
	count[0] = count[0].WithSymbol("net")
	return append(insns, count...)
}

// ownerPrologue loads the tracepoint's first argument (the skb, the
// hrtimer) into R6 and this CPU's value into R7, and goes to "exit"
// when no softirq is open on this CPU or the open one interrupted a
// worker's thread (its time is the thread's whoever's work it did).
func ownerPrologue(mapFD int) asm.Instructions {
	insns := asm.Instructions{asm.LoadMem(asm.R6, asm.R1, 0, asm.DWord)} // args[0]
	insns = append(insns, sirqValue(mapFD)...)
	return append(insns,
		asm.LoadMem(asm.R1, asm.R7, sirqEntry*8, asm.DWord),
		asm.JEq.Imm(asm.R1, 0, "exit"),
		asm.LoadMem(asm.R1, asm.R7, sirqClass*8, asm.DWord),
		asm.JEq.Imm(asm.R1, int32(classWorker), "exit"),
	)
}

// readPtr loads the 8 bytes at src+off into dst with
// bpf_probe_read_kernel, or goes to "exit" when the read fails. It uses
// the stack at -16 and clobbers R0-R5.
func readPtr(dst, src asm.Register, off uint32) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Reg(asm.R3, src),
		asm.Add.Imm(asm.R3, int32(off)),
		asm.Mov.Reg(asm.R1, asm.R10),
		asm.Add.Imm(asm.R1, -16),
		asm.Mov.Imm(asm.R2, 8),
		asm.FnProbeReadKernel.Call(),
		asm.JNE.Imm(asm.R0, 0, "exit"),
		asm.LoadMem(dst, asm.R10, -16, asm.DWord),
	}
}

// countOwner reads net.ns.inum of the struct net in R8, looks it up in
// the lab map and adds one to this CPU's lab or foreign count (R7 the
// value), then returns. It uses the stack at -16 and -24.
func countOwner(labFD int, o ownerOffsets) asm.Instructions {
	return asm.Instructions{
		asm.JEq.Imm(asm.R8, 0, "exit"),
		asm.Mov.Reg(asm.R3, asm.R8),
		asm.Add.Imm(asm.R3, int32(o.NetInum)),
		asm.Mov.Reg(asm.R1, asm.R10),
		asm.Add.Imm(asm.R1, -24),
		asm.Mov.Imm(asm.R2, 4),
		asm.FnProbeReadKernel.Call(),
		asm.JNE.Imm(asm.R0, 0, "exit"),
		asm.LoadMapPtr(asm.R1, labFD),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, -24),
		asm.FnMapLookupElem.Call(),
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.JEq.Imm(asm.R0, 0, "foreign"),
		asm.Add.Imm(asm.R1, sirqLab*8),
		asm.Ja.Label("add"),
		asm.Add.Imm(asm.R1, sirqForeign*8).WithSymbol("foreign"),
		asm.LoadMem(asm.R2, asm.R1, 0, asm.DWord).WithSymbol("add"),
		asm.Add.Imm(asm.R2, 1),
		asm.StoreMem(asm.R1, 0, asm.R2, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("exit"),
		asm.Return(),
	}
}

// nsInodes are the inode numbers (net.ns.inum) of the named network
// namespaces that exist on this machine (another machine's are not
// here), each once.
func nsInodes(names []string) ([]uint64, error) {
	var out []uint64
	seen := map[string]bool{}
	for _, ns := range names {
		if seen[ns] {
			continue
		}
		seen[ns] = true
		err := inNamespace(ns, func() error {
			var st unix.Stat_t
			if err := unix.Stat("/proc/thread-self/ns/net", &st); err != nil {
				return err
			}
			out = append(out, st.Ino)
			return nil
		})
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("network namespace %s: %w", ns, err)
		}
	}
	return out, nil
}
