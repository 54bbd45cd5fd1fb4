package sim

import (
	"math"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
)

// oneMachine is a linux-6 pair whose receiver runs on the sender's two
// cores (config.Host.CoresOf), over a veth, with 4 connections.
func oneMachine(tso bool, rate config.Rate) *config.Scenario {
	p := pair{stack: "linux-6", mtu: 1500, cores: 2, offTx: offloads(map[config.Offload]bool{config.TSO: tso}),
		wl: config.Workload{Duration: 200 * time.Millisecond, WriteSize: 65536, Connections: 4}}
	sc := p.scenario()
	sc.Hosts[1].CoresOf = "tx"
	sc.NICs[0].Rate = rate
	return sc
}

// TestOneMachine: hosts that share cores share them (their CPU adds up
// to at most the machine's, and binds), the veth between them has no
// wire (TSO on carries more than the 10 Gb/s line rate), a TSO unit
// reaches the receiver whole,
// GRO is off on the veth as the kernel's veth leaves it, and the run is
// deterministic.
func TestOneMachine(t *testing.T) {
	run := func(sc *config.Scenario) (gbps, tx, rx float64, rxGRO bool) {
		e := New(Options{})
		e.checks = true
		res := runScenario(t, e, sc)
		if errs := e.lastCheck.errs; len(errs) > 0 {
			t.Errorf("invariants: %v", errs)
		}
		m := res.Metrics
		return m["throughput_bps"] / 1e9, m["cpu_tx_pct"], m["cpu_rx_pct"], res.Offloads["rx0"]["gro"]
	}
	for _, tso := range []bool{false, true} {
		gbps, tx, rx, gro := run(oneMachine(tso, 0))
		t.Logf("tso %v: %.2f Gb/s, cpu tx %.1f%% rx %.1f%%", tso, gbps, tx, rx)
		if tx+rx > 200.5 {
			t.Errorf("tso %v: sender %.1f%% + receiver %.1f%% of one core on a 2-core machine", tso, tx, rx)
		}
		if tx+rx < 150 {
			t.Errorf("tso %v: sender %.1f%% + receiver %.1f%%: an unshaped veth should be CPU-bound", tso, tx, rx)
		}
		if tso && gbps <= 10 {
			t.Errorf("tso %v: %.2f Gb/s: a veth on one machine has no 10 Gb/s wire", tso, gbps)
		}
		if gro {
			t.Errorf("tso %v: GRO on rx0; a veth has it off unless the lab turns it on", tso)
		}
	}
	off, _, _, _ := run(oneMachine(false, 0))
	on, _, _, _ := run(oneMachine(true, 0))
	if on < 1.5*off {
		t.Errorf("TSO on %.2f Gb/s, off %.2f: a TSO unit crosses a veth whole, one skb for the receiver instead of one per segment", on, off)
	}
	a, atx, arx, _ := run(oneMachine(true, 0))
	if a != on || atx+arx <= 0 {
		t.Errorf("two runs differ: %.6f and %.6f Gb/s", on, a)
	}
	// Behind a tbf the receive runs in softirq no thread runs: half of it
	// counts to each side, so the sides come out close.
	gbps, tx, rx, _ := run(oneMachine(true, 2e9))
	t.Logf("2 Gb/s tbf: %.3f Gb/s, cpu tx %.2f%% rx %.2f%%", gbps, tx, rx)
	if gbps < 1.9 || gbps > 2 {
		t.Errorf("%.3f Gb/s behind a 2 Gb/s tbf: it counts 14 bytes of Ethernet header a frame, no preamble, FCS or gap", gbps)
	}
}

// TestOwnCoresUnchanged: a host with cores of its own is the model it
// was: the receiver's cores are its own, whatever its peer shares.
func TestOwnCoresUnchanged(t *testing.T) {
	sc := oneMachine(true, 0)
	sc.Hosts[1].CoresOf = ""
	res := runScenario(t, New(Options{}), sc)
	if g := res.Metrics["throughput_bps"] / 1e9; g > 10 {
		t.Errorf("%.2f Gb/s between hosts with cores of their own: their link is the engine's 10 Gb/s line rate", g)
	}
	if !res.Offloads["rx0"]["gro"] {
		t.Errorf("GRO off on a NIC between hosts with cores of their own: the model's default device has it on")
	}
}

// TestVethNoInterruptNoRing: a veth of one machine raises no interrupt
// and has no receive ring (veth_xmit hands the sender's skb to the
// peer's backlog through netif_rx), so a CPU profile's Interrupt and
// RxPerFrame cost it nothing, while its receive path (RxPerSkb) does.
func TestVethNoInterruptNoRing(t *testing.T) {
	cpu := func(edit func(*CPUProfile)) (tx, rx float64) {
		profiles := builtinCPUProfiles()
		for i := range profiles {
			if profiles[i].Name == "modern" {
				edit(&profiles[i])
			}
		}
		res := runScenario(t, New(Options{CPUProfiles: profiles}), oneMachine(false, 2e9))
		return res.Metrics["cpu_tx_pct"], res.Metrics["cpu_rx_pct"]
	}
	tx, rx := cpu(func(*CPUProfile) {})
	ntx, nrx := cpu(func(p *CPUProfile) { p.Interrupt, p.RxPerFrame = 50000, 50000 })
	stx, srx := cpu(func(p *CPUProfile) { p.RxPerSkb *= 2 })
	t.Logf("cpu tx/rx %.2f/%.2f%%; interrupt and ring at 50 us: %.2f/%.2f%%; RxPerSkb doubled: %.2f/%.2f%%", tx, rx, ntx, nrx, stx, srx)
	if ntx != tx || nrx != rx {
		t.Errorf("interrupt and receive-ring costs moved the veth's CPU from %.3f/%.3f%% to %.3f/%.3f%%: want no change", tx, rx, ntx, nrx)
	}
	if stx <= tx || srx <= rx {
		t.Errorf("RxPerSkb doubled: cpu %.3f/%.3f%%, was %.3f/%.3f%%: the receive path should cost both sides more", stx, srx, tx, rx)
	}
}

// TestShapedVethUnitArrivesWhole: a tbf takes a software GSO unit whole
// and lets it go whole (tbf_dequeue charges its qdisc_pkt_len at once),
// and only then does validate_xmit_skb cut it, so on a veth of one
// machine its segments reach the peer's backlog together, one unit time
// at the rate after the last unit, not one per segment time. A reader
// woken by the first so finds the others queued: behind a 2 Gb/s tbf
// with TSO off the kernel's readers read about once per 64 KB unit and
// its receiver sends 1-1.7 pure ACKs a unit (examples/kernel-calibration,
// docs/engine.md: The receiver's reads).
func TestShapedVethUnitArrivesWhole(t *testing.T) {
	sc := oneMachine(false, 2e9)
	w, err := New(Options{}).build(sc, sc.Workloads[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	ep := w.eps[0]
	const pc = 45
	n := pc * ep.mss
	unitTime := float64(n+pc*(hdrLen+ep.nic.l2)) * 8 / 2 // ns at 2 Gb/s
	w.sendFrames(ep, 0, 0, n, pc, false)
	w.sendFrames(ep, 0, n, n, pc, false)
	q := &w.rxqs[ep.host.machine.soft.ctxQueues[ep.core]]
	if len(q.ring) != 2*pc {
		t.Fatalf("%d frames queued for two units of %d segments: want %d", len(q.ring), pc, 2*pc)
	}
	for i, f := range q.ring {
		unit := i / pc
		want := int64(math.Ceil(float64(unit+1) * unitTime))
		if f.at != want || f.seq != int64(i)*ep.mss || int64(f.n) != ep.mss {
			t.Fatalf("frame %d: at %d ns, seq %d, %d bytes: want at %d ns (unit %d leaves the tbf whole), seq %d, %d bytes",
				i, f.at, f.seq, f.n, want, unit, int64(i)*ep.mss, ep.mss)
		}
	}

	// The run: a read and an ACK per unit or two, where segments spread
	// at the rate gave one pure ACK per 3.8 segments here (8.9 k for
	// 33.5 k).
	for i := range sc.Hosts {
		sc.Hosts[i].Scheduler = "vm-halt"
	}
	r := runWorld(t, New(Options{}), engine.RunRequest{Scenario: sc, Workload: sc.Workloads[0]})
	s := &r.stats
	t.Logf("vm-halt: %d units, %d segments, %d reads, %d pure ACKs (%v)", s.units, s.wireSegs, s.reads, pureAcks(r), s.acks)
	if a := pureAcks(r); a*6 > s.wireSegs {
		t.Errorf("%d pure ACKs for %d segments in %d units: want at least 6 segments an ACK", a, s.wireSegs, s.units)
	}
	// The softirq takes the unit's segments at once (world.poll, up to
	// its budget), so the woken reader finds the unit there and reads it
	// in one go, as the kernel's does (one data read a unit:
	// bench/kernel-acks/run.sh); one skb a turn behind the core's other
	// work gave 2.1 reads a unit.
	if s.reads*10 > s.units*12 {
		t.Errorf("%d reads for %d units: want at most 1.2 a unit", s.reads, s.units)
	}
}
