package sim

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

// The nine patches of seed 000 ("TCP: The Road to Super TSO") and what
// each changes in the model, applied on its own to linux-2.6.12:
//
//	1/9 select_size 0 with NETIF_F_SG (headers in the head, data in pages):
//	    memory layout; the model's buffers have none beyond linear/SG, and
//	    2.6.12 with SG already builds page-backed buffers (app.go
//	    queueData), so there is no behaviour to switch.
//	2/9 tcp_dec_quickack_mode by pcount: linuxAcks.decByPcount
//	    (TestPatch2QuickackByPcount).
//	3/9, 4/9 move tcp_snd_test and __tcp_data_snd_check into
//	    tcp_output.c, 7/9 tabbing: "no code logic changes".
//	5/9 skb_header_release in tcp_fragment: the drivers' TSO header
//	    sharing check; the model has no header copies to save.
//	6/9 no tcp_cwnd_validate on a push that sent nothing:
//	    legacyPush.validateAlways (TestPatch6ValidateOnlyWhenSending).
//	8/9 tcp_current_mss computed once per push: a few instructions the
//	    2.6.12 CPU profile does not charge apart.
//	9/9 nonagle not clobbered for the whole queue:
//	    legacyPush.clobberNonagle (TestPatch9NagleHoldsTail).
//
// TestSuperTSOSeries checks that these three plus the series' new send
// test, deferral, split and size goal are all that tell linux-2.6.13 from
// linux-2.6.12.

// TestPatch2QuickackByPcount is patch 2/9 on its own: a TSO frame of N
// segments sent while in quickack mode takes N from tp->ack.quick (and
// leaving quickack mode at zero), where 2.6.12 took one per frame.
func TestPatch2QuickackByPcount(t *testing.T) {
	tests := []struct {
		name          string
		decByPcount   bool
		quick, pcount int64
		want          int64
	}{
		{"2.6.12: one per frame", false, 16, 10, 15},
		{"2/9: by pcount", true, 16, 10, 6},
		{"2/9: a frame of more segments than quick ends quickack", true, 4, 10, 0},
		{"2/9: a one-segment frame takes one", true, 4, 1, 3},
		{"2.6.12: a one-segment frame takes one", false, 4, 1, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &linuxAcks{decByPcount: tt.decByPcount, ato: 40e6}
			ep := &endpoint{}
			ep.rcv.started = true
			ep.rcv.quick = tt.quick
			// The last data arrived long before: no pingpong mode.
			a.onDataSent(ep, 1e9, tt.pcount)
			if ep.rcv.quick != tt.want || ep.rcv.pingpong {
				t.Errorf("quick, pingpong = %d, %v; want %d, false", ep.rcv.quick, ep.rcv.pingpong, tt.want)
			}
		})
	}
}

// patchLab is examples/super-tso-patches as Go: a 1 Gb/s link, 50 us each
// way, opteron-2005 on both hosts, TSO on or off.
func patchLab(stack string, tso bool, wl config.Workload) *config.Scenario {
	on := offloads(map[config.Offload]bool{config.TSO: tso, config.SG: true, config.TxCsum: true})
	p := pair{stack: stack, cpu: "opteron-2005", cores: 2, rxCores: 2, mtu: 1500, rate: 1e9,
		delay: 50 * time.Microsecond, offTx: on, offRx: on, wl: wl}
	return p.scenario()
}

var (
	patchSmallWrites = config.Workload{Kind: config.Stream, WriteSize: 1000, Duration: time.Second}
	patchRR          = config.Workload{Kind: config.RR, RequestSize: 65000, ResponseSize: 3000, Concurrency: 1, Duration: time.Second}
)

// runEdited runs a scenario with every host's profile changed by edit.
func runEdited(t *testing.T, sc *config.Scenario, edit func(*profile)) *result.WorkloadResult {
	t.Helper()
	e := New(Options{})
	e.editProfile = edit
	return runScenario(t, e, sc)
}

// TestPatch6ValidateOnlyWhenSending is patch 6/9 on its own: a push that
// sends nothing no longer runs tcp_cwnd_validate, so an application-limited
// cwnd is not halved toward what was used by it. (In the model's
// workloads this moves the mean cwnd by under 1%: tcp_write_xmit validates
// at its next send anyway; examples/super-tso-patches therefore does not
// claim a run-level effect for it.)
func TestPatch6ValidateOnlyWhenSending(t *testing.T) {
	for _, tt := range []struct {
		push pushPolicy
		want int64
	}{
		{legacyPush{clobberNonagle: true, validateAlways: true}, (100 + 10) / 2}, // 2.6.12: tcp_cwnd_application_limited
		{legacyPush{clobberNonagle: true}, 100},                                  // 6/9
		{plainPush{}, 100},
	} {
		ep := &endpoint{}
		s := &ep.snd
		s.cwnd, s.packetsOut, s.cwndUsed, s.rto, s.ca = 100, 10, 10, 200e6, caOpen
		tt.push.push(ep, 1e9, nagleOn, nil) // nothing queued: nothing sent
		if s.cwnd != tt.want {
			t.Errorf("%#v: cwnd after a push that sent nothing = %d, want %d", tt.push, s.cwnd, tt.want)
		}
	}
}

// TestPatch9NagleHoldsTail is patch 9/9 on its own: with 1000-byte writes
// and TSO off (so the series' deferral and size goal do not apply), Nagle
// now holds the partial tail buffer that 2.6.12 pushed out with the rest of
// the queue, so the NIC gets fewer, fuller packets; and that is all that
// tells 2.6.13 from 2.6.12 there.
func TestPatch9NagleHoldsTail(t *testing.T) {
	sc := patchLab("linux-2.6.12", false, patchSmallWrites)
	units := func(r *result.WorkloadResult) float64 { return r.Metrics[result.MetricSendUnits] }
	base := runEdited(t, sc, nil)
	p9 := runEdited(t, sc, func(p *profile) { p.push = legacyPush{validateAlways: true} })
	p13 := runEdited(t, patchLab("linux-2.6.13", false, patchSmallWrites), nil)
	t.Logf("send units: 2.6.12 %.0f, +9/9 %.0f, 2.6.13 %.0f", units(base), units(p9), units(p13))
	if !(units(p9) < units(base)) {
		t.Errorf("9/9 alone: %.0f send units, not fewer than 2.6.12's %.0f", units(p9), units(base))
	}
	if units(p9) != units(p13) {
		t.Errorf("2.6.12 + 9/9 sends %.0f units, 2.6.13 %.0f: with TSO off 9/9 should be all that differs", units(p9), units(p13))
	}
}

// TestSuperTSOSeries: linux-2.6.12 with patches 2/9, 6/9 and 9/9 and the
// series' send test, deferral, split and size goal runs exactly as
// linux-2.6.13 does.
func TestSuperTSOSeries(t *testing.T) {
	p13, err := newProfile("linux-2.6.13", nil)
	if err != nil {
		t.Fatal(err)
	}
	series := func(p *profile) {
		p.acks = &linuxAcks{decByPcount: true, ato: 40e6} // 2/9
		p.push = legacyPush{}                             // 6/9 and 9/9
		p.goal = p13.goal                                 // the 64 KB size goal
		o := *p13.output.(*linuxOutput)                   // send test, deferral, split
		p.output = &o
	}
	for _, tso := range []bool{true, false} {
		for _, wl := range []config.Workload{patchSmallWrites, patchRR} {
			got := runEdited(t, patchLab("linux-2.6.12", tso, wl), series)
			want := runEdited(t, patchLab("linux-2.6.13", tso, wl), nil)
			// Everything but the stack's name and what names it (the
			// notes, the provenance).
			got.Stack, got.Notes, got.Provenance = want.Stack, want.Notes, want.Provenance
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			if !bytes.Equal(gj, wj) {
				t.Errorf("%s, tso %v: 2.6.12 + the series differs from 2.6.13:\n got %s\nwant %s", wl.Kind, tso, gj, wj)
			}
		}
	}
}
