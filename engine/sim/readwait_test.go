package sim

import (
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
)

// TestReadCost: a read costs the call and the copy, and `read_wait`
// more when it empties the receive queue (the kernel engine's reader
// then reads again, finds nothing and polls), not when it leaves data
// behind.
func TestReadCost(t *testing.T) {
	ep := &endpoint{host: &host{cpu: CPUProfile{Syscall: 100, CopyPerByte: 0.5, ReadWait: 1000}}}
	ep.rcv.unread = 8000
	if got, want := ep.readCost(8000), 100+0.5*8000+1000.0; got != want {
		t.Errorf("a read of all 8000 unread bytes costs %v ns, want %v (the call, the copy, read_wait)", got, want)
	}
	if got, want := ep.readCost(4096), 100+0.5*4096; got != want {
		t.Errorf("a read of 4096 of 8000 unread bytes costs %v ns, want %v (the call and the copy)", got, want)
	}
}

// TestReadWaitInRun: the stream reader pays `read_wait` in a run. On a
// 2 Gb/s wire whose reader, woken late (vm-halt), takes what came at
// once, about every read empties the queue, so the receiver's CPU grows
// by about reads × read_wait; the sender's does not move by as much.
func TestReadWaitInRun(t *testing.T) {
	const wait = 5000.0 // ns
	run := func(readWait float64) (txNs, rxNs float64, reads int64) {
		profiles := withReadWait(readWait)
		p := pair{stack: "linux-6", cpu: "modern", mtu: 1500, cores: 2, rxCores: 2, rate: 2e9, scheduler: "vm-halt",
			offTx: offloads(map[config.Offload]bool{config.TSO: true}),
			wl:    config.Workload{Duration: 100 * time.Millisecond, WriteSize: 65536}}
		sc := p.scenario()
		w := runWorld(t, New(Options{CPUProfiles: profiles}), engine.RunRequest{Scenario: sc, Workload: sc.Workloads[0]})
		return busyNs(w.client), busyNs(w.servers[0]), w.stats.reads
	}
	baseTx, baseRx, _ := run(0)
	tx, rx, reads := run(wait)
	share := (rx - baseRx) / (float64(reads) * wait)
	t.Logf("%d reads, receiver +%.0f us, sender %+.0f us with read_wait %.0f ns: %.2f of the reads emptied the queue",
		reads, (rx-baseRx)/1e3, (tx-baseTx)/1e3, wait, share)
	if share < 0.9 || share > 1.02 {
		t.Errorf("the receiver's extra CPU is %.2f of reads × read_wait, want 0.9-1.0", share)
	}
	if d := tx - baseTx; d > (rx-baseRx)/10 || -d > (rx-baseRx)/10 {
		t.Errorf("the sender's CPU moved %.0f us with read_wait, the receiver's %.0f: want the sender's under a tenth", d/1e3, (rx-baseRx)/1e3)
	}
}

// busyNs is the work charged to h's cores over a run, ns.
func busyNs(h *host) float64 {
	var b int64
	for i := range h.cores {
		b += h.cores[i].busy
	}
	return float64(b)
}

// withReadWait is the built-in CPU profiles with `read_wait` set to ns:
// for tests of mechanisms the reader's cost per sleep would blur (0).
func withReadWait(ns float64) []CPUProfile {
	profiles := builtinCPUProfiles()
	for i := range profiles {
		profiles[i].ReadWait = ns
	}
	return profiles
}
