package sim

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// strategies names the strategy a profile uses for each part of the
// stack, as Go syntax of the strategy value: the test pins which
// profile uses what, so giving a profile another strategy fails it.
func strategies(p *profile) map[string]string {
	m := map[string]string{
		"size goal": fmt.Sprintf("%#v", p.goal),
		"push":      fmt.Sprintf("%#v", p.push),
		"acks":      fmt.Sprintf("%#v", p.acks),
		"cc":        fmt.Sprintf("%T", mustCC(p.cc.connection(p.name, ""))),
		"wake":      fmt.Sprintf("%#v", p.wake),
		"gso":       fmt.Sprintf("soft %v, always %v, gro %v", p.softGSO, p.gsoAlways, p.gro),
		"divides":   fmt.Sprint(p.divides),
	}
	switch o := p.output.(type) {
	case *linuxOutput:
		m["send test"] = fmt.Sprintf("%#v", o.test)
		m["deferral"] = fmt.Sprintf("%#v", o.deferral)
		m["split"] = fmt.Sprintf("%#v", o.split)
		m["mss_now"] = fmt.Sprintf("large %v, minshall by pcount %v, autosize %v", o.largeMSS, o.minshallPcount, o.autosize)
	case *freebsdOutput:
		m["trim"] = fmt.Sprintf("%#v", o.trim)
	default:
		m["output"] = fmt.Sprintf("%T", o)
	}
	return m
}

type profileRow struct {
	stack string
	opts  map[string]string
	want  map[string]string
}

// option is row with stack options set and the strategies they change.
func option(row profileRow, opts, changed map[string]string) profileRow {
	want := map[string]string{}
	for k, v := range row.want {
		want[k] = v
	}
	for k, v := range changed {
		want[k] = v
	}
	return profileRow{row.stack, opts, want}
}

// TestProfileStrategies pins the strategy of every stack profile: the
// size goal, the send test, the TSO deferral, the split or FreeBSD's trim,
// the push, the ACK accounting (patch 2/9: quickack by pcount), congestion
// control, the writer's wake-up and the GSO switches (docs/engine.md,
// "Stack profiles").
func TestProfileStrategies(t *testing.T) {
	linuxAcks2612 := "&sim.linuxAcks{decByPcount:false, ato:40000000, ucopyDelack:false, growWindow:false}"
	linuxAcksPcount := "&sim.linuxAcks{decByPcount:true, ato:40000000, ucopyDelack:false, growWindow:false}"
	tests := []profileRow{
		{"linux-2.6.12", nil, map[string]string{
			"size goal": "sim.largeMSS2612{winDivisor:8}",
			"send test": "sim.wholeSkbTest{}",
			"deferral":  "sim.noDefer{}",
			"split":     "sim.cutToLargeMSS{}",
			"mss_now":   "large true, minshall by pcount false, autosize false",
			"push":      "sim.legacyPush{clobberNonagle:true, validateAlways:true}",
			"acks":      linuxAcks2612,
			"cc":        "*sim.reno",
			"wake":      "sim.linuxWake{}",
			"gso":       "soft false, always false, gro false",
			"divides":   "false",
		}},
		{"linux-2.6.13", nil, map[string]string{
			"size goal": "sim.xmitSizeGoal{gsoMax:65535, modulo:true}",
			"send test": "sim.quotaTest{finOneSeg:false, halfCwnd:false}",
			"deferral":  "sim.heffnerDefer{divisor:3, tickCap:0}",
			"split":     "sim.windowAllowsTrim{}",
			"mss_now":   "large false, minshall by pcount false, autosize false",
			"push":      "sim.plainPush{}",
			"acks":      linuxAcksPcount,
			"cc":        "*sim.reno",
			"wake":      "sim.linuxWake{}",
			"gso":       "soft false, always false, gro false",
			"divides":   "false",
		}},
		{"super-tso-v2", nil, map[string]string{
			"size goal": "sim.xmitSizeGoal{gsoMax:65535, modulo:true}",
			"send test": "sim.quotaTest{finOneSeg:false, halfCwnd:false}",
			"deferral":  "sim.wholeSkbDefer{}",
			"split":     "sim.windowAllowsTrim{}",
			"mss_now":   "large false, minshall by pcount false, autosize false",
			"push":      "sim.plainPush{}",
			"acks":      linuxAcksPcount,
			"cc":        "*sim.reno",
			"wake":      "sim.linuxWake{}",
			"gso":       "soft false, always false, gro false",
			"divides":   "false",
		}},
		{"linux-2.6.27", nil, map[string]string{
			"size goal": "sim.xmitSizeGoal{gsoMax:65535, modulo:true}",
			"send test": "sim.quotaTest{finOneSeg:false, halfCwnd:false}",
			"deferral":  "sim.heffnerDefer{divisor:3, tickCap:8000000}",
			"split":     "sim.mssSplitPoint{nagle:false}",
			"mss_now":   "large false, minshall by pcount false, autosize false",
			"push":      "sim.plainPush{}",
			"acks":      linuxAcksPcount,
			"cc":        "*sim.cubic",
			"wake":      "sim.linuxWake{}",
			"gso":       "soft true, always false, gro false",
			"divides":   "true",
		}},
		{"linux-6", nil, map[string]string{
			"size goal": "sim.gsoSegsGoal{}",
			"send test": "sim.quotaTest{finOneSeg:true, halfCwnd:true}",
			"deferral":  "sim.eventDefer{divisor:3}",
			"split":     "sim.mssSplitPoint{nagle:true}",
			"mss_now":   "large false, minshall by pcount true, autosize true",
			"push":      "sim.autocorkPush{}",
			"acks":      "&sim.linuxAcks{decByPcount:true, ato:40000000, ucopyDelack:false, growWindow:true}",
			"cc":        "*sim.cubic",
			"wake":      "sim.linuxWake{}",
			"gso":       "soft true, always true, gro true",
			"divides":   "false",
		}},
		{"freebsd-10", nil, map[string]string{
			"size goal": "sim.unboundedGoal{}",
			"trim":      "sim.trimBefore{}",
			"push":      "sim.plainPush{}",
			"acks":      "&sim.freebsdAcks{delack:100000000, sbMax:2097152}",
			"cc":        "*sim.newrenoBytes",
			"wake":      "sim.freebsdWake{lowat:2048}",
			"gso":       "soft false, always false, gro false",
			"divides":   "false",
		}},
		{"freebsd-11", map[string]string{"maxsockbuf": "16777216"}, map[string]string{
			"size goal": "sim.unboundedGoal{}",
			"trim":      "sim.trimAfter{}",
			"push":      "sim.plainPush{}",
			"acks":      "&sim.freebsdAcks{delack:100000000, sbMax:16777216}",
			"cc":        "*sim.newrenoBytes",
			"wake":      "sim.freebsdWake{lowat:2048}",
			"gso":       "soft false, always false, gro false",
			"divides":   "false",
		}},
	}
	// A stack option swaps one strategy of its profile.
	tests = append(tests,
		option(tests[3], map[string]string{"size_goal_modulo": "false", "tso_defer": "false"}, map[string]string{
			"size goal": "sim.xmitSizeGoal{gsoMax:65535, modulo:false}", "deferral": "sim.noDefer{}", "divides": "false"}),
		option(tests[4], map[string]string{"tso_defer": "false"}, map[string]string{"deferral": "sim.noDefer{}"}),
		option(tests[0], map[string]string{"ucopy_delack": "true"}, map[string]string{
			"acks": "&sim.linuxAcks{decByPcount:false, ato:40000000, ucopyDelack:true, growWindow:false}"}),
	)
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.stack] = true
		t.Run(fmt.Sprint(tt.stack, tt.opts), func(t *testing.T) {
			p, err := newProfile(tt.stack, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, strategies(p)); diff != "" {
				t.Errorf("strategies of %s (-want +got):\n%s", tt.stack, diff)
			}
		})
	}
	for _, name := range StackNames() {
		if !seen[name] {
			t.Errorf("stack %s has no row in this test", name)
		}
	}
}

func mustCC(c congestion, err error) congestion {
	if err != nil {
		panic(err)
	}
	return c
}
