package devqueue

import (
	"encoding/binary"
	"errors"
	"runtime"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// BenchmarkProgram is what the program costs a packet, run by the kernel
// on one TCP segment of an MSS (BPF_PROG_TEST_RUN: nothing attached, no
// device touched) with the record ring on, at each TCX hook: a TSO-off
// receiver's capture runs it for every wire segment. The record ring is
// not read, so it wraps as it would under a reader that keeps up.
func BenchmarkProgram(b *testing.B) {
	for _, h := range []Hook{HookTCX, HookTCXIngress} {
		b.Run(h.String(), func(b *testing.B) { benchProgram(b, h) })
	}
}

func benchProgram(b *testing.B, h Hook) {
	off, err := kernelBTF()
	if err != nil {
		b.Skipf("no kernel BTF: %v", err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var st unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &st); err != nil {
		b.Fatal(err)
	}
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: valueWords * 8, MaxEntries: 1})
	if errors.Is(err, unix.EPERM) {
		b.Skipf("BPF refused: %v", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	ring, err := newRecordRing(RingBytes)
	if err != nil {
		b.Fatal(err)
	}
	defer ring.close()
	const port, mss = 5201, 1448
	// BPF_PROG_TEST_RUN hands the packet up from the namespace's lo.
	f := filter{Ifindex: 1, NetNS: uint32(st.Ino), Ports: []uint16{port}, MSS: mss, Ingress: h == HookTCXIngress}
	insns, err := program(h, off, f, m.FD(), ring.maps())
	if err != nil {
		b.Fatal(err)
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.SchedCLS, Instructions: insns, License: "Dual MIT/GPL"})
	if err != nil {
		b.Fatal(err)
	}
	defer prog.Close()
	pkt := segment(port, mss)
	b.ResetTimer()
	ret, per, err := prog.Benchmark(pkt, b.N, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if int32(ret) != tcxNext {
		b.Fatalf("program returned %d, want TCX_NEXT", int32(ret))
	}
	var heads uint64
	for cpu := range ring.cpus {
		heads += ring.head(cpu)
	}
	if heads == 0 {
		b.Fatal("the program recorded nothing: the test packet did not pass its filter")
	}
	b.ReportMetric(float64(per.Nanoseconds()), "ns/packet")
}

// segment is an Ethernet frame of one IPv4 TCP segment to port with
// the timestamp option and mss bytes of payload.
func segment(port uint16, mss int) []byte {
	p := make([]byte, 14+20+32+mss)
	binary.BigEndian.PutUint16(p[12:], 0x0800)
	ip := p[14:]
	ip[0], ip[8], ip[9] = 0x45, 64, unix.IPPROTO_TCP
	binary.BigEndian.PutUint16(ip[2:], uint16(len(p)-14))
	copy(ip[12:], []byte{10, 77, 1, 1, 10, 77, 1, 2})
	tcp := ip[20:]
	binary.BigEndian.PutUint16(tcp[0:], 40000)
	binary.BigEndian.PutUint16(tcp[2:], port)
	tcp[12], tcp[13] = 8<<4, 0x10 // 32 bytes of header, ACK
	return p
}
