package sim

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
)

func TestTrim(t *testing.T) {
	const mss = 1448
	tests := []struct {
		name               string
		trim               tsoTrim
		length, off, avail int64
		wantLen            int64
		wantTSO            bool
	}{
		{"before: 1.5 MSS, more queued -> one MSS without TSO", trimBefore{}, 2172, 0, 10000, mss, false},
		{"before: 1.5 MSS empties the buffer -> sent whole", trimBefore{}, 2172, 0, 2172, 2172, true},
		{"before: 3.5 MSS, more queued -> 3 MSS", trimBefore{}, 5068, 0, 10000, 3 * mss, true},
		{"after: 1.5 MSS, more queued -> sent whole as TSO", trimAfter{}, 2172, 0, 10000, 2172, true},
		{"after: 3.5 MSS -> 3 MSS", trimAfter{}, 5068, 0, 10000, 3 * mss, true},
		{"after: 2 MSS exactly -> kept", trimAfter{}, 2 * mss, 0, 10000, 2 * mss, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotLen, gotTSO := tt.trim.trim(tt.length, tt.off, tt.avail, mss)
			if gotLen != tt.wantLen || gotTSO != tt.wantTSO {
				t.Errorf("trim(%d) = %d, %v; want %d, %v", tt.length, gotLen, gotTSO, tt.wantLen, tt.wantTSO)
			}
		})
	}
}

func TestResolveOffloads(t *testing.T) {
	tests := []struct {
		name string
		set  map[config.Offload]bool
		want string
	}{
		{"defaults: all on but lro", nil, "{tso,gso,gro,sg,tx_csum,rx_csum}"},
		{"tso without sg is dropped, gso too", map[config.Offload]bool{config.SG: false}, "{gro,tx_csum,rx_csum}"},
		{"tso without tx_csum is dropped", map[config.Offload]bool{config.TxCsum: false}, "{gso,gro,sg,rx_csum}"},
		{"lro on when asked", map[config.Offload]bool{config.LRO: true, config.TSO: false}, "{gso,gro,lro,sg,tx_csum,rx_csum}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolveOffloads(offloads(tt.set)).String(); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestNewProfileOptions(t *testing.T) {
	tests := []struct {
		stack   string
		opts    map[string]string
		wantErr string
	}{
		{"linux-2.6.27", map[string]string{"size_goal_modulo": "false"}, ""},
		{"linux-2.6.27", map[string]string{"size_goal_modulo": "maybe"}, `write "true" or "false"`},
		{"linux-2.6.27", map[string]string{"nagle": "false"}, `has no option "nagle": use one of size_goal_modulo, tso_defer`},
		{"linux-2.6.13", map[string]string{"tso_defer": "false"}, "takes no stack_options"},
		{"linux-2.6.12", map[string]string{"ucopy_delack": "true"}, ""},
		{"linux-2.6.12", map[string]string{"tso_defer": "false"}, `has no option "tso_defer": use one of ucopy_delack`},
		{"linux-3", nil, "unknown stack"},
		{"freebsd-10", map[string]string{"sendspace": "1048576", "recvspace": "2MiB", "maxsockbuf": "4194304"}, ""},
		{"freebsd-10", map[string]string{"sendbuf_auto": "false"}, ""},
		{"freebsd-10", map[string]string{"sendspace": "lots"}, "write a positive byte count"},
		{"freebsd-11", map[string]string{"recvspace": "2097152"}, "raise maxsockbuf to at least 2359296"},
		{"freebsd-10", map[string]string{"size_goal_modulo": "false"}, `has no option "size_goal_modulo"`},
	}
	for _, tt := range tests {
		t.Run(tt.stack, func(t *testing.T) {
			_, err := newProfile(tt.stack, tt.opts)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("got error %v, want none", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("got error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestSndAutosize(t *testing.T) {
	bufs := &bsdSockbufs{sendInc: 8192, sendMax: 2 << 20, maxsockbuf: 16 << 20}
	small := &bsdSockbufs{sendInc: 8192, sendMax: 2 << 20, maxsockbuf: 2 << 20}
	tests := []struct {
		name                   string
		bufs                   *bsdSockbufs
		sndBuf, queued, sndWnd int64
		sendwin, off           int64
		wantBuf                int64
		wantAuto               bool
	}{
		{"full buffer, wide window: one step", bufs, 1 << 20, 1 << 20, 2 << 20, 2 << 20, 0, 1<<20 + 8192, true},
		{"peer's window below 4/5 of the buffer: no step", bufs, 1 << 20, 1 << 20, 800000, 800000, 0, 1 << 20, true},
		{"buffer less than 7/8 full: no step", bufs, 1 << 20, 900000, 2 << 20, 2 << 20, 0, 1 << 20, true},
		{"unsent data beyond the send window: no step", bufs, 1 << 20, 1 << 20, 2 << 20, 100000, 0, 1 << 20, true},
		{"at sendbuf_max: no step", bufs, 2 << 20, 2 << 20, 4 << 20, 4 << 20, 0, 2 << 20, true},
		{"sbreserve refuses beyond sb_max_adj: autosizing off", small, 1860000, 1860000, 4 << 20, 4 << 20, 0, 1860000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &sender{sndBuf: tt.sndBuf, writeSeq: tt.queued, sndWnd: tt.sndWnd, sndAuto: true}
			tt.bufs.sndAutosize(s, tt.sendwin, tt.off)
			if s.sndBuf != tt.wantBuf || s.sndAuto != tt.wantAuto {
				t.Errorf("sndBuf, sndAuto = %d, %v; want %d, %v", s.sndBuf, s.sndAuto, tt.wantBuf, tt.wantAuto)
			}
		})
	}
}

func TestSockbufs(t *testing.T) {
	tests := []struct {
		name             string
		stack            string
		opts             map[string]string
		sndbuf, rcvbuf   int
		wantSnd, wantRcv int64
		wantAuto         bool
		wantScale        uint
		wantNote         bool
	}{
		{"freebsd defaults autosize", "freebsd-10", nil, 0, 0, 32768, 65536, true, 6, false},
		{"freebsd sysctl defaults from stack_options", "freebsd-10",
			map[string]string{"sendspace": "1048576", "recvspace": "2097152", "maxsockbuf": "16777216"}, 0, 0, 1048576, 2097152, true, 9, false},
		{"SO_SNDBUF fixes the size", "freebsd-10", nil, 1 << 20, 0, 1 << 20, 65536, false, 6, false},
		{"SO_RCVBUF beyond sb_max_adj fails: default kept", "freebsd-11", nil, 0, 2 << 20, 32768, 65536, true, 6, true},
		{"linux: as set, scale from the buffer", "linux-6", nil, 1 << 20, 1 << 20, 1 << 20, 1 << 20, false, 5, false},
		{"linux-6 unset: tcp_wmem[1] autosizing, tcp_rmem[1], scale from tcp_rmem[2]", "linux-6", nil, 0, 0, 16384, 131072, true, 7, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prof, err := newProfile(tt.stack, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			w := &world{}
			ep := &endpoint{prof: prof, host: &host{name: "h"}}
			w.sockbufs(ep, &config.Workload{SndBuf: tt.sndbuf, RcvBuf: tt.rcvbuf})
			got := []any{ep.snd.sndBuf, ep.rcv.buf, ep.snd.sndAuto, ep.rcv.wscale, len(w.notes) > 0}
			want := []any{tt.wantSnd, tt.wantRcv, tt.wantAuto, tt.wantScale, tt.wantNote}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("sndBuf, rcvBuf, sndAuto, wscale, note (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSizeGoal(t *testing.T) {
	tests := []struct {
		name   string
		goal   sizeGoal
		cwnd   int64
		gso    bool
		maxWnd int64
		want   int64
	}{
		{"2.6.12: cwnd/8 segments", largeMSS2612{winDivisor: 8}, 80, true, 1 << 20, 10 * 1448},
		{"2.6.12: at most 64 KB", largeMSS2612{winDivisor: 8}, 1000, true, 1 << 20, 45 * 1448},
		{"2.6.12: no TSO -> MSS", largeMSS2612{winDivisor: 8}, 1000, false, 1 << 20, 1448},
		{"2.6.13: 64 KB rounded to MSS", xmitSizeGoal{gsoMax: 65535, modulo: true}, 10, true, 1 << 20, 45 * 1448},
		{"2.6.27 without modulo", xmitSizeGoal{gsoMax: 65535, modulo: false}, 10, true, 1 << 20, 65535 - 52},
		{"half the peer's window", xmitSizeGoal{gsoMax: 65535, modulo: true}, 10, true, 20000, 6 * 1448},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := &endpoint{mss: 1448}
			ep.snd.cwnd, ep.snd.gso, ep.snd.maxWnd = tt.cwnd, tt.gso, tt.maxWnd
			if got := tt.goal.goal(ep); got != tt.want {
				t.Errorf("goal = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestEventQueueOrder(t *testing.T) {
	var q eventQueue
	at := []int64{50, 10, 30, 10, 40, 20, 10}
	for i, a := range at {
		q.push(a, evAppRun, int32(i))
	}
	var got []int32
	for {
		ev, ok := q.pop()
		if !ok {
			break
		}
		got = append(got, ev.id)
	}
	want := []int32{1, 3, 6, 5, 2, 4, 0} // by time, ties in insertion order
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("pop order = %v, want %v", got, want)
		}
	}
}

func TestFreebsdWake(t *testing.T) {
	const buf = 100000
	tests := []struct {
		name                        string
		queued, callRemain, pending int64
		want                        bool
	}{
		{"mid-call, free covers the rest", buf - 1000, 1000, 50000, true},
		{"mid-call, free below lowat and the rest", buf - 1000, 5000, 50000, false},
		{"mid-call, free at lowat", buf - 2048, 5000, 50000, true},
		{"new call, free below lowat: sleeps", buf - 1000, 0, 50000, false},
		{"new call, free at lowat", buf - 2048, 0, 50000, true},
		{"new call shorter than free", buf - 1000, 0, 800, true},
		{"buffer full", buf, 0, 50000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := &endpoint{}
			ep.snd.sndBuf = buf
			ep.snd.sndUna = 7
			ep.snd.writeSeq = 7 + tt.queued
			ep.app.writeSize = 131072
			ep.app.callRemain = tt.callRemain
			ep.app.pending = tt.pending
			if got := (freebsdWake{lowat: 2048}).canWrite(ep, true); got != tt.want {
				t.Errorf("canWrite = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestWholeSkbDefer pins the Super TSO deferral of super-tso-v2: a
// multi-segment buffer waits while the windows do not take it whole and
// an ACK is to come, in recovery as in the open state (the merged series
// added the congestion-state escape only later), and Heffner's escapes
// (1/3 of the window free) do not apply.
func TestWholeSkbDefer(t *testing.T) {
	const mss = 1448
	tests := []struct {
		name       string
		ca         caState
		packetsOut int64
		cwnd       int64
		segs       int64 // buffer length in MSS
		fin        bool
		want       bool
	}{
		{"fits the cwnd quota: send", caOpen, 10, 30, 18, false, false},
		{"quota short of the buffer: wait", caOpen, 20, 30, 18, false, true},
		{"half the window free, still short: wait", caOpen, 15, 30, 18, false, true},
		{"in recovery, short: wait", caRecovery, 20, 30, 18, false, true},
		{"after an RTO, short: wait", caLoss, 20, 30, 18, false, true},
		{"nothing in flight: send", caOpen, 0, 10, 18, false, false},
		{"FIN: send", caOpen, 20, 30, 18, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := &endpoint{mss: mss}
			s := &ep.snd
			s.ca, s.packetsOut, s.cwnd = tt.ca, tt.packetsOut, tt.cwnd
			s.sndUna, s.sndWnd = 0, 1<<20
			b := &skb{seq: tt.packetsOut * mss, end: (tt.packetsOut + tt.segs) * mss, fin: tt.fin}
			if got, _ := (wholeSkbDefer{}).shouldDefer(ep, b, 0, true, 0); got != tt.want {
				t.Errorf("shouldDefer = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestUcopyDelack pins linux-2.6.12's ucopy_delack, the receive side
// before 314324121f9b: a segment a waiting reader takes whole (the unread
// data fits one read) is not ACKed for being the second full segment; the
// read's cleanup_rbuf ACKs it when an ACK is pending and more than one
// segment came since the last ACK. Quickack mode still ACKs at once.
func TestUcopyDelack(t *testing.T) {
	const mss = 1448
	// cleanup_rbuf after the read: ACK pending and two segments unACKed.
	a := &linuxAcks{ato: 40e6, ucopyDelack: true}
	ep := &endpoint{mss: mss}
	r := &ep.rcv
	r.buf, r.nxt, r.wup, r.delackAt = 1<<20, 2*mss, 0, 5000
	if !a.windowUpdate(ep, 1<<19, 1<<19) {
		t.Error("ucopy_delack: the read sends no ACK for two pending segments")
	}
	r.delackAt = 0
	if a.windowUpdate(ep, 1<<19, 1<<19) {
		t.Error("ucopy_delack: the read ACKs with no ACK pending")
	}
	if (&linuxAcks{ato: 40e6}).windowUpdate(ep, 1<<19, 1<<19) {
		t.Error("without ucopy_delack the read ACKs only for a window update")
	}

	// tcp_rcv_established: which in-order segments are ACKed at once.
	tests := []struct {
		name         string
		ucopy        bool
		quick        int64
		unread, read int64
		want         bool
	}{
		{"after the fix: second segment ACKed", false, 0, 2 * mss, 65536, true},
		{"ucopy: eaten, left to the read", true, 0, 2 * mss, 65536, false},
		{"ucopy: more than a read holds, not eaten", true, 0, 50 * mss, 65536, true},
		{"ucopy: quickack mode ACKs at once", true, 3, 2 * mss, 65536, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &linuxAcks{ato: 40e6, ucopyDelack: tt.ucopy}
			ep := &endpoint{mss: mss, peer: &endpoint{}}
			ep.app.readSize = tt.read
			r := &ep.rcv
			r.started, r.quick = true, tt.quick
			r.nxt, r.wup, r.unread = tt.unread, 0, tt.unread
			if got, _ := a.onData(ep, 1000, ep.mss, 1); got != tt.want {
				t.Errorf("onData ACKs now = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestSndbufExpand: linux-6's autosizing send buffer grows as
// tcp_sndbuf_expand sizes it, 2 x max(10, cwnd) x per_mss (2304 bytes
// for MTU 1500's MSS, 16640 for MTU 9000's), at most tcp_wmem[2], never
// shrinks, and a buffer the workload set (SO_SNDBUF) stays.
func TestSndbufExpand(t *testing.T) {
	b := linuxSockbufs{snd: 16384, sndMax: 4194304}
	tests := []struct {
		name      string
		mss, cwnd int64
		buf       int64
		auto      bool
		want      int64
	}{
		{"initial cwnd, MTU 1500", 1448, 10, 16384, true, 2 * 10 * 2304},
		{"initial cwnd, MTU 9000", 8948, 10, 16384, true, 2 * 10 * 16640},
		{"below TCP_INIT_CWND counts 10", 1448, 4, 16384, true, 2 * 10 * 2304},
		{"cwnd 100", 1448, 100, 46080, true, 2 * 100 * 2304},
		{"capped at tcp_wmem[2]", 1448, 1000, 46080, true, 4194304},
		{"the kernel's ss: cwnd 275 at MTU 1500, tb 1267200", 1448, 275, 16384, true, 1267200},
		{"the kernel's ss: cwnd 43 at MTU 9000, tb 1431040", 8948, 43, 16384, true, 1431040},
		{"never shrinks", 1448, 10, 1 << 20, true, 1 << 20},
		{"SO_SNDBUF: stays", 1448, 100, 16384, false, 16384},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := &endpoint{mss: tt.mss}
			ep.snd.cwnd, ep.snd.sndBuf, ep.snd.sndAuto = tt.cwnd, tt.buf, tt.auto
			b.sndExpand(ep)
			if got := ep.snd.sndBuf; got != tt.want {
				t.Errorf("sndBuf = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestSndbufExpandInRun: behind a 2 Gb/s tbf on one machine (TSO off,
// MTU 1500, 4 connections, 200 ms), each writer fills its send buffer
// and the ACKs that free room grow it (tcp_new_space) beyond what
// tcp_init_buffer_space gave it (2 x 10 x 2304), in whole steps of
// 2 x 2304 bytes (a cwnd's segment each), up to tcp_wmem[2]; with the
// buffer set by the workload (SO_SNDBUF) it stays as set.
func TestSndbufExpandInRun(t *testing.T) {
	for _, set := range []int{0, 1 << 20} {
		sc := oneMachine(false, 2e9)
		sc.Workloads[0].SndBuf = set
		w := runWorld(t, New(Options{}), engine.RunRequest{Scenario: sc, Workload: sc.Workloads[0]})
		for _, ep := range w.eps {
			if !ep.client {
				continue
			}
			got := ep.snd.sndBuf
			switch {
			case set > 0 && got != int64(set):
				t.Errorf("SO_SNDBUF %d: connection %d's buffer is %d, want it as set", set, ep.conn, got)
			case set == 0 && (got <= 2*10*2304 || got%(2*2304) != 0 || got > 4<<20):
				t.Errorf("connection %d's buffer is %d: want it grown past %d in steps of %d, at most %d", ep.conn, got, 2*10*2304, 2*2304, 4<<20)
			}
			t.Logf("SO_SNDBUF %d: connection %d's buffer %d, cwnd %d", set, ep.conn, got, ep.snd.cwnd)
		}
	}
}
