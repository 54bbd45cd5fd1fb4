package sim

import (
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
)

// pureAcks is the pure ACKs a run sent (every kind but the piggybacked).
func pureAcks(w *world) int64 {
	var n int64
	for k, c := range w.stats.acks {
		if ackKind(k) != ackPiggyback {
			n += c
		}
	}
	return n
}

// TestLinuxAcksFollowReads: a Linux receiver ACKs at once only when more
// than one full segment is unacknowledged and its window has not shrunk
// since the last ACK (__tcp_ack_snd_check); data that finds unread data
// behind it waits for the reader, whose read sends the ACK
// (tcp_cleanup_rbuf). So where segments come one at a time (a 2 Gb/s
// wire between hosts with cores of their own, GRO off, TSO off) and on
// FIFO cores, where the reader reads each segment as it comes, it ACKs
// every second segment (from its reads, or from the input path when
// the reader emptied the queue before the next came), and with vm-halt's wake-up
// latency, where a woken reader gathers several segments a read, it ACKs
// about once a read: fewer ACKs, each from a read, none from the input
// path past quickack mode. (Behind a tbf on one machine a unit's segments
// come together: TestShapedVethUnitArrivesWhole.)
func TestLinuxAcksFollowReads(t *testing.T) {
	run := func(scheduler string) *world {
		p := pair{stack: "linux-6", mtu: 1500, cores: 2, rxCores: 2, rate: 2e9, scheduler: scheduler,
			offTx: offloads(map[config.Offload]bool{config.TSO: false}),
			offRx: offloads(map[config.Offload]bool{config.GRO: false}),
			wl:    config.Workload{Duration: 200 * time.Millisecond, WriteSize: 65536, Connections: 4}}
		sc := p.scenario()
		return runWorld(t, New(Options{}), engine.RunRequest{Scenario: sc, Workload: sc.Workloads[0]})
	}
	fifo, halt := run("none"), run("vm-halt")
	for _, c := range []struct {
		name string
		w    *world
	}{{"FIFO", fifo}, {"vm-halt", halt}} {
		s := &c.w.stats
		t.Logf("%s: %d segments, %d reads, %d pure ACKs (%v)", c.name, s.wireSegs, s.reads, pureAcks(c.w), s.acks)
		if s.acks[ackWindow] > s.reads {
			t.Errorf("%s: %d ACKs after a read, %d reads: want at most one a read", c.name, s.acks[ackWindow], s.reads)
		}
	}
	// A woken reader runs a wake-up latency late: each segment but the
	// first of a read finds unread data behind it.
	if s := &halt.stats; s.acks[ackDelayed] > s.wireSegs/100 {
		t.Errorf("vm-halt: the input path ACKed %d times (acks_delayed) in %d segments: want at most %d (its reader keeps data unread behind each segment)", s.acks[ackDelayed], s.wireSegs, s.wireSegs/100)
	}
	if a, b := pureAcks(fifo), fifo.stats.wireSegs; a*2 < b*9/10 || a*2 > b*11/10 {
		t.Errorf("FIFO cores: %d pure ACKs for %d segments: want one per two segments (±10%%)", a, b)
	}
	if a, b := pureAcks(halt), pureAcks(fifo); a*10 > b*7 {
		t.Errorf("vm-halt: %d pure ACKs, FIFO cores %d: want at most 70%% (a read gathers more than two segments)", a, b)
	}
}

// TestRRReaderReadsPartialMessages: an rr reader reads what has come of a
// message, as the kernel engine's readFull loop does. A Linux receiver
// leaves the ACK of data that found unread data behind it to the read,
// so a reader that waited for a whole 65539-byte reply before reading
// held the server until the delayed-ACK timer (40 ms): seed 004's
// loopback ran at about 200 transactions a second that way.
func TestRRReaderReadsPartialMessages(t *testing.T) {
	sc := tbenchScenario(true, nil, 65539)
	w := runWorld(t, New(Options{}), engine.RunRequest{Scenario: sc, Workload: sc.Workloads[0]})
	t.Logf("%d transactions, ACKs %v", w.stats.txns, w.stats.acks)
	if n := w.stats.acks[ackTimer]; n > 0 {
		t.Errorf("%d ACKs from the delayed-ACK timer: want none (the reader's reads ACK)", n)
	}
	if w.stats.txns < 10000 {
		t.Errorf("%d transactions in 1 s on the loopback: want at least 10000", w.stats.txns)
	}
}

// TestGrowWindowAcksEachSegment: a Linux 6 receiver ACKs every segment
// that raises rcv_ssthresh (tcp_grow_window: icsk_ack.quick |= 1), two
// segments' worth a segment, from its first window to the buffer DRS
// grows, where rcv_ssthresh ends (the kernel's `ss -ti` shows it at the
// window clamp). So behind examples/kernel-calibration's tbf (TSO off,
// MTU 1500) it sends hundreds of quick ACKs a connection in its first
// milliseconds, as the kernel does, not the 16 of tcp_incr_quickack
// alone.
func TestGrowWindowAcksEachSegment(t *testing.T) {
	sc := oneMachine(false, 2e9)
	for i := range sc.Hosts {
		sc.Hosts[i].Scheduler = "vm-halt"
	}
	w := runWorld(t, New(Options{}), engine.RunRequest{Scenario: sc, Workload: sc.Workloads[0]})
	var steps int64
	for _, ep := range w.eps {
		r := &ep.rcv
		if r.readBytes == 0 {
			continue
		}
		_, first, _ := ep.prof.bufs.defaults() // tcp_rmem[1]: the first window
		first -= first % ep.mss
		if r.ssthr != r.buf || r.buf <= first {
			t.Errorf("conn %d: rcv_ssthresh %d, buffer %d (first window %d): want it grown with the buffer, to it", ep.conn, r.ssthr, r.buf, first)
		}
		steps += (r.buf - first) / (2 * ep.mss)
	}
	quick := w.stats.acks[ackQuick]
	t.Logf("%d quick ACKs, %d pure ACKs, %d segments; rcv_ssthresh grew in at least %d steps", quick, pureAcks(w), w.stats.wireSegs, steps)
	if quick < steps {
		t.Errorf("%d quick ACKs: want at least one a step of rcv_ssthresh's growth, %d", quick, steps)
	}
}
