// Command mutation checks that the test suite fails when behaviour
// breaks: it applies each of a list of small breaking changes (a profile
// given another strategy, an expectation's comparison flipped, a metric
// computed off by a factor, a skip or check dropped) to a copy of the
// tree, runs the tests of the packages that should notice, and reports
// which mutations no test caught. It is not part of CI: run it by hand
// (bench/mutation/run.sh), as root for the mutations whose tests need
// namespaces (those run under /work/.netns.lock when it exists).
//
// A mutation whose text is not found exactly once in its file is
// reported as "stale": the code moved on and the list needs updating;
// -check lists the stale ones without running any test (a second). A
// mutation may name the tests that should catch it (run, a -run filter):
// the model's package takes 1-2 minutes a mutation on a loaded machine,
// a filter seconds. -only REGEXP runs the mutations whose name matches.
//
// -auto DIRS generates the mutants instead of the list (auto.go): every
// == != < <= > >= && || of the packages' non-test files negated, -max of
// them a package (default 30; 0: all) drawn with -seed (default 1), each
// judged by its own package's tests (those under provider/ under the
// lock). A draw depends on the tree: after a change to a package's code,
// the same seed draws other mutants. -only picks mutants by name
// ("FILE:LINE code"), so one survivor can be re-run alone. A directory
// may be given as one of its files (engine/kernel/measure.go): that
// file's mutants only. -run FILTER judges generated mutants by the tests
// the go test -run filter picks (those of a package whose other tests
// need namespaces, or take minutes a mutant).
//
// Session 13 (load 9-16; `bench/mutation/run.sh -auto planner,hcl,outcome`
// and, under the lock, `-auto provider/host,provider/nic,provider/host/netnsfs
// -max 15`, seed 1, on b60a185 plus the tool): survivors before the tests
// added for them, and after (each survivor re-run alone with -only):
//
//	package                drawn  survived  after  left, and why
//	planner                30     1         1      state.go: a close(2) error lost (no way to make close fail after fsync)
//	planner (2nd draw)     30     5         3      plan.go:329 and refresh.go:55 equivalent (ReasonGone goes with Create only; parallelism 1 is slower, not different); state.go:466 skips fsync (invisible without a crash)
//	planner (-seed 2)      30     6         3      plan.go:236 equivalent (HashDesired sorts descending: still order-free); state.go:148 equivalent (the early return only saves a loop); state.go:466 as above
//	hcl                    30     6         2      graph.go:42 equivalent (a two-step loop is peer/peer or has no peer); workload.go:321 not reached (an unknown axis is reported before it)
//	outcome                30     8         1      evaluate.go:501 equivalent (matrix values are known constants); evaluate.go:627 was dead code, removed
//	provider/host          15     2         0
//	provider/nic           15     2         0
//	provider/host/netnsfs  15     3         2      netnsfs.go:289 is mount handling (another helper's bug fix in flight); route.go:77 checks the kernel's netlink framing, which the kernel never breaks
//
// The second planner draw is seed 1 on a later tree (main e474788); the
// -seed 2 draw ran on main b669ec1.
//
// Session 15 (h6, load 8-10, seed 1, main 3deb08b-19505ba): `-auto
// provenance -max 20` 20 drawn, 7 survived, 0 after (the 11 mutants of
// those lines re-run with -max 0 -only); `-auto engine/kernel/measure.go
// -max 20 -run 'TestMeasurement|TestCounterStrings|TestSplitSoftirq|
// TestOutsideTasks|TestParse|TestMachineLoad|TestPercentile|TestDefaultStall|
// TestCPUNote'` (its tests without namespaces) 20 drawn, 4 survived, 0
// after (5 of 5 re-run); `-auto result/provenance.go -max 20` all 17 of
// the file's mutants caught.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// mutation is one breaking change: in file, the text from (which must
// occur exactly once) becomes to; the tests of pkgs (go test patterns,
// -run filter run when not empty) should fail.
type mutation struct {
	name  string
	file  string
	from  string
	to    string
	pkgs  []string
	run   string
	netns bool // the tests need namespaces: run under the lock, as root
	at    int  // generated mutants: 1 + the byte offset of from (0: from occurs once)
}

var mutations = []mutation{
	// engine/sim: a profile given another strategy.
	{name: "freebsd-10 gets the after-change trim", file: "engine/sim/profile.go",
		from: "var trim tsoTrim = trimBefore{}", to: "var trim tsoTrim = trimAfter{}", pkgs: []string{"./engine/sim/"}},
	{name: "linux-2.6.13 decrements quickack by one per frame (patch 2/9 undone)", file: "engine/sim/profile.go",
		from: "acks:   &linuxAcks{decByPcount: true, ato: 40e6},\n\t\tcc:     linuxCongestion(\"reno\", false),",
		to:   "acks:   &linuxAcks{decByPcount: false, ato: 40e6},\n\t\tcc:     linuxCongestion(\"reno\", false),", pkgs: []string{"./engine/sim/"}},
	{name: "linux-2.6.12 gets the fixed push (patches 6/9 and 9/9 applied)", file: "engine/sim/profile.go",
		from: "push:   legacyPush{clobberNonagle: true, validateAlways: true},", to: "push:   plainPush{},", pkgs: []string{"./engine/sim/"}},
	{name: "linux-2.6.27 loses the two-tick deferral cap", file: "engine/sim/profile.go",
		from: "d = heffnerDefer{divisor: 3, tickCap: 8e6}", to: "d = heffnerDefer{divisor: 3}", pkgs: []string{"./engine/sim/"}},
	{name: "linux-6 split drops the Nagle-allowed partial tail", file: "engine/sim/profile.go",
		from: "split: mssSplitPoint{nagle: true}", to: "split: mssSplitPoint{}", pkgs: []string{"./engine/sim/"}},
	{name: "linux-2.6.13 tso_win_divisor 3 -> 2", file: "engine/sim/profile.go",
		from: "var d deferral = heffnerDefer{divisor: 3}\n\tlayout := skbLayout{pages: pagesGSO}", to: "var d deferral = heffnerDefer{divisor: 2}\n\tlayout := skbLayout{pages: pagesGSO}", pkgs: []string{"./engine/sim/"}},
	{name: "linux-2.6.12 size goal cwnd/8 -> cwnd/4", file: "engine/sim/profile.go",
		from: "goal:   largeMSS2612{winDivisor: 8},", to: "goal:   largeMSS2612{winDivisor: 4},", pkgs: []string{"./engine/sim/"}},
	// engine/sim: a mechanism broken.
	{name: "tcp_dec_quickack_mode ignores decByPcount", file: "engine/sim/tcp.go",
		from: "if !a.decByPcount {\n\t\tpcount = 1\n\t}", to: "pcount = 1", pkgs: []string{"./engine/sim/"}},
	{name: "legacyPush never validates the cwnd (patch 6/9 always on)", file: "engine/sim/profile.go",
		from: "if p.validateAlways {\n\t\ts.cwndValidate(now)\n\t}", to: "", pkgs: []string{"./engine/sim/"}},
	{name: "legacyPush never clobbers nonagle (patch 9/9 always on)", file: "engine/sim/profile.go",
		from: "if p.clobberNonagle && !s.wq.isLast(s.wq.sendHead) {", to: "if false && !s.wq.isLast(s.wq.sendHead) {", pkgs: []string{"./engine/sim/"}},
	{name: "FreeBSD 10 trim sends one MSS with TSO", file: "engine/sim/output.go",
		from: "if length <= maxLen {\n\t\treturn maxLen, false", to: "if length < maxLen {\n\t\treturn maxLen, false", pkgs: []string{"./engine/sim/"}},
	{name: "rr reader waits for whole messages again (deadlocks above the buffer)", file: "engine/sim/app.go",
		from: "case r.unread >= r.buf/2:", to: "case false:", pkgs: []string{"./engine/sim/"}},
	// engine/sim: a metric computed off by a factor.
	{name: "cwnd_mean_segments off by 2", file: "engine/sim/sim.go",
		from: "m[result.MetricCwndMeanSegments] = w.meanCwnd(end)", to: "m[result.MetricCwndMeanSegments] = w.meanCwnd(end) * 2", pkgs: []string{"./engine/sim/"}},
	{name: "single_mss_fraction off by 2", file: "result/derive.go",
		from: "m[MetricSingleMSSFrac] = ratio(float64(c.SingleMSS), float64(c.SendUnits))", to: "m[MetricSingleMSSFrac] = 2 * ratio(float64(c.SingleMSS), float64(c.SendUnits))", pkgs: []string{"./engine/sim/"}},
	{name: "avg_send_bytes off by 1.5", file: "result/derive.go",
		from: "m[MetricAvgSendBytes] = ratio(float64(c.SendUnitBytes), float64(c.SendUnits))", to: "m[MetricAvgSendBytes] = 1.5 * ratio(float64(c.SendUnitBytes), float64(c.SendUnits))", pkgs: []string{"./engine/sim/"}},
	{name: "cpu_tx_per_gbit per Gb/s of 10^8", file: "result/derive.go",
		from: "m[MetricCPUTxPerGbit] = ratio(m[MetricCPUTxPct], m[MetricThroughputBps]/1e9)", to: "m[MetricCPUTxPerGbit] = ratio(m[MetricCPUTxPct], m[MetricThroughputBps]/1e8)", pkgs: []string{"./engine/sim/"}},
	// examples: an expectation's comparison flipped or loosened.
	{name: "freebsd-tso-trim: before_more_singles flipped", file: "examples/freebsd-tso-trim/lab.tsolab.hcl",
		from: "condition = result.single_mss_fraction > scenario", to: "condition = result.single_mss_fraction < scenario", pkgs: []string{"./engine/sim/"}},
	{name: "super-tso-patches: tail_held_by_nagle flipped", file: "examples/super-tso-patches/lab.tsolab.hcl",
		from: "condition = result.send_units < scenario", to: "condition = result.send_units > scenario", pkgs: []string{"./engine/sim/"}},
	{name: "neterion-2005: tso_helps flipped", file: "examples/neterion-2005/lab.tsolab.hcl",
		from: "condition = result.throughput_bps > scenario({ tso = false }).throughput_bps", to: "condition = result.throughput_bps < scenario({ tso = false }).throughput_bps", pkgs: []string{"./engine/sim/"}},
	{name: "loopback-tbench: seed direction flipped", file: "examples/loopback-tbench/lab.tsolab.hcl",
		from: "condition = result.transactions_per_s < scenario", to: "condition = result.transactions_per_s > scenario", pkgs: []string{"./engine/sim/"}},
	{name: "software-gso: rate_held demands 5 Gb/s", file: "examples/software-gso/lab.tsolab.hcl",
		from: "result.throughput_bps >= 0.5e9", to: "result.throughput_bps >= 5e9", pkgs: []string{"./engine/sim/"}},
	{name: "tso-basics: tso_cuts_cpu flipped", file: "examples/tso-basics/lab.tsolab.hcl",
		from: "condition = result.cpu_per_gbit < scenario", to: "condition = result.cpu_per_gbit > scenario", pkgs: []string{"./engine/sim/"}},
	// outcome: the judging.
	{name: "outcome: strict inconclusive no longer fails", file: "outcome/verdict.go",
		from: "if strict {\n\t\t\t\tcode = ExitFail", to: "if false {\n\t\t\t\tcode = ExitFail", pkgs: []string{"./outcome/"}},
	{name: "outcome: a strict ordering without significance passes", file: "outcome/evaluate.go",
		from: `return Inconclusive, detail + "; " + op + " needs a real difference"`, to: `return Pass, detail + "; " + op + " needs a real difference"`, pkgs: []string{"./outcome/"}},
	// hcl, config: loading and formatting.
	{name: "hcl: MTU lower bound 68 dropped", file: "hcl/topology.go",
		from: "if m < 68 || m > 65535 {", to: "if m < 0 || m > 65535 {", pkgs: []string{"./hcl/"}},
	{name: "hcl: fmt drops the source's last byte", file: "hcl/format.go",
		from: "return hclwrite.Format(src)", to: "return hclwrite.Format(bytes.TrimSuffix(src, []byte(\"}\\n\")))", pkgs: []string{"./hcl/"}},
	{name: "config: KiB is 1000 bytes", file: "config/rate.go",
		from: `{"KiB", 1 << 10}`, to: `{"KiB", 1000}`, pkgs: []string{"./config/"}},
	// engine/sim: mechanisms of sessions 6-8, each against the tests
	// written for it (-run), which take seconds where the package's take
	// minutes.
	{name: "TSQ: one skb in the retransmit queue is throttled too", file: "engine/sim/tsq.go",
		from: "if s.wmem <= limit || s.wq.sendHead-s.wq.head <= 1 {", to: "if s.wmem <= limit {", pkgs: []string{"./engine/sim/"}, run: "TestSmallQueue"},
	{name: "TSQ: tcp_limit_output_bytes no longer caps the limit", file: "engine/sim/tsq.go",
		from: "limit = min(limit, t.limitOutputBytes)", to: "", pkgs: []string{"./engine/sim/"}, run: "TestSmallQueue"},
	{name: "TSQ: a retransmission gets no doubled limit", file: "engine/sim/tsq.go",
		from: "limit <<= 1 // factor 1: a retransmission", to: "", pkgs: []string{"./engine/sim/"}, run: "TestSmallQueue"},
	{name: "TSQ: behind a tbf on one machine the handler runs on the sender's interrupt core", file: "engine/sim/tsq.go",
		from: "case ep.nic.onMachine && ep.nic.shaped:\n\t\tc = &ep.host.machine.soft.cores[ep.core]\n", to: "", pkgs: []string{"./engine/sim/"}, run: "TestSmallQueue|TestOneMachine|TestTSQHandlerCore"},
	{name: "TSQ: on an unshaped veth of one machine the handler runs on the sender's interrupt core", file: "engine/sim/tsq.go",
		from: "case ep.nic.onMachine:\n\t\tc = &ep.host.cores[ep.core]\n", to: "", pkgs: []string{"./engine/sim/"}, run: "TestSmallQueue|TestOneMachine|TestTSQHandlerCore"},
	{name: "autocork: linux-6's tcp_push pushes every write (no autocorking)", file: "engine/sim/profile.go",
		from: "push:    autocorkPush{},", to: "push:    plainPush{},", pkgs: []string{"./engine/sim/"}, run: "Autocork"},
	{name: "autocork: a tail waits with nothing of the socket's below TCP", file: "engine/sim/profile.go",
		from: "if s.wmem <= t.len()+skbOverhead {\n\t\treturn false\n\t}", to: "", pkgs: []string{"./engine/sim/"}, run: "Autocork"},
	{name: "local congestion: a unit the sender's own queue refuses is sent and its frames lost", file: "engine/sim/tcp.go",
		from: "if ep.prof.localCongestion && !ep.queueTakes(", to: "if false && !ep.queueTakes(", pkgs: []string{"./engine/sim/"}, run: "TestQueueDropIsLocalCongestion|TestEnterCWR"},
	{name: "CWR: tcp_enter_cwr does not reduce the window", file: "engine/sim/tcp.go",
		from: "s.ca = caCWR\n\ts.recover = s.sndNxt\n\ts.cc.onLoss(ep, now)", to: "s.ca = caCWR\n\ts.recover = s.sndNxt", pkgs: []string{"./engine/sim/"}, run: "TestQueueDropIsLocalCongestion|TestEnterCWR"},
	{name: "CWR: ends at the ACK of high_seq, not above it", file: "engine/sim/tcp.go",
		from: "if ack > s.recover {\n\t\t\t\ts.ca = caOpen", to: "if ack >= s.recover {\n\t\t\t\ts.ca = caOpen", pkgs: []string{"./engine/sim/"}, run: "TestQueueDropIsLocalCongestion|TestEnterCWR"},
	{name: "veth: a frame's softirq poll charges an interrupt", file: "engine/sim/world.go",
		from: "if !q.cont && !q.softirq {", to: "if !q.cont {", pkgs: []string{"./engine/sim/"}, run: "TestVethNoInterruptNoRing"},
	{name: "veth: a frame costs a receive ring's skb allocation and DMA unmap", file: "engine/sim/world.go",
		from: "if q.softirq {\n\t\tring = 0\n\t}", to: "", pkgs: []string{"./engine/sim/"}, run: "TestVethNoInterruptNoRing"},
	{name: "DRS: the buffer grows past tcp_rmem[2]", file: "engine/sim/tcp.go",
		from: "if b := min(rcvwin, r.autoMax); b > r.buf {", to: "if b := rcvwin; b > r.buf {", pkgs: []string{"./engine/sim/"}, run: "TestReceiveBufferAutotuning|TestRcvSpaceAdjust"},
	{name: "DRS: no growth term for a sender in slow start", file: "engine/sim/tcp.go",
		from: "rcvwin += 2 * (rcvwin * (copied - r.space) / r.space)", to: "", pkgs: []string{"./engine/sim/"}, run: "TestReceiveBufferAutotuning|TestRcvSpaceAdjust"},
	{name: "DRS: the measure is not kept (space stays the first RTT's)", file: "engine/sim/tcp.go",
		from: "\t\tr.space = copied\n", to: "\n", pkgs: []string{"./engine/sim/"}, run: "TestReceiveBufferAutotuning|TestRcvSpaceAdjust"},
	{name: "cores_of: hosts of one machine do not share a core's free time", file: "engine/sim/cpu.go",
		from: "for _, m := range c.mates {\n\t\tm.free = c.free\n\t}", to: "", pkgs: []string{"./engine/sim/"}, run: "TestOneMachine|TestOwnCoresUnchanged"},
	{name: "cores_of: a veth between them is a wire", file: "engine/sim/world.go",
		from: "func sameMachine(a, b *host) bool { return a.machine != nil && a.machine == b.machine }", to: "func sameMachine(a, b *host) bool { return false }", pkgs: []string{"./engine/sim/"}, run: "TestOneMachine|TestOwnCoresUnchanged"},
	{name: "HyStart: the round's last sample, not its least", file: "engine/sim/hystart.go",
		from: "h.currRTT = min(h.currRTT, delay)", to: "h.currRTT = delay", pkgs: []string{"./engine/sim/"}, run: "TestHyStart"},
	{name: "HyStart: HYSTART_MIN_SAMPLES 8 -> 1", file: "engine/sim/hystart.go",
		from: "hystartMinSamples = 8 ", to: "hystartMinSamples = 1 ", pkgs: []string{"./engine/sim/"}, run: "TestHyStart"},
	{name: "HyStart: an unpaced socket's train threshold not halved", file: "engine/sim/hystart.go",
		from: "threshold >>= 1 // SK_PACING_NONE", to: "", pkgs: []string{"./engine/sim/"}, run: "TestHyStart"},
	{name: "tcp_is_cwnd_limited: no slow-start allowance (2 * max_packets_out)", file: "engine/sim/cwnduse.go",
		from: "return s.cwnd < s.ssthresh && s.cwnd < 2*s.maxPacketsOut", to: "return false", pkgs: []string{"./engine/sim/"}, run: "TestWindowUseLinux6|TestSmallQueuesBoundTheQdisc"},
	{name: "tcp_cwnd_validate: a full window is not cwnd-limited", file: "engine/sim/cwnduse.go",
		from: "cwndLimited = cwndLimited || s.inFlight() >= s.cwnd", to: "", pkgs: []string{"./engine/sim/"}, run: "TestWindowUseLinux6"},
	{name: "6.x send quota: tcp_cwnd_test gives the whole cwnd", file: "engine/sim/profile.go",
		from: "quota = min(quota, max(s.cwnd>>1, 1))", to: "", pkgs: []string{"./engine/sim/"}, run: "TestCwndTestHalfCwnd|TestTSOAutosize|TestAutosizeBoundsUnits"},
	{name: "tcp_tso_autosize: at least 1 segment, not tcp_min_tso_segs 2", file: "engine/sim/profile.go",
		from: "return max(bytes/ep.mss, 2)", to: "return max(bytes/ep.mss, 1)", pkgs: []string{"./engine/sim/"}, run: "TestCwndTestHalfCwnd|TestTSOAutosize|TestAutosizeBoundsUnits"},
	{name: "tcp_tso_autosize: no min_rtt allowance", file: "engine/sim/profile.go",
		from: "bytes += skGSOMaxSize >> r", to: "", pkgs: []string{"./engine/sim/"}, run: "TestCwndTestHalfCwnd|TestTSOAutosize|TestAutosizeBoundsUnits"},
	{name: "linux-6 sends whole buffers (no tcp_tso_autosize)", file: "engine/sim/profile.go",
		from: "deferral: d, autosize: true, split:", to: "deferral: d, autosize: false, split:", pkgs: []string{"./engine/sim/"}, run: "TestCwndTestHalfCwnd|TestTSOAutosize|TestAutosizeBoundsUnits"},
	{name: "skb layout: a frame's last page not counted", file: "engine/sim/layout.go",
		from: "return 1 + (off+to-from-1)/pageSize - off/pageSize + 1", to: "return 1 + (off+to-from-1)/pageSize - off/pageSize", pkgs: []string{"./engine/sim/"}, run: "TestSkbLayout|TestBusPerBuffer"},
	{name: "skb layout: 2.6.13 pages a TSO buffer like 2.6.12", file: "engine/sim/layout.go",
		from: "if l.pages == pagesSG || l.pages == pagesGSO && gso {", to: "if l.pages == pagesSG {", pkgs: []string{"./engine/sim/"}, run: "TestSkbLayout|TestBusPerBuffer"},
	{name: "skb layout: a cut in the linear area moves no linear bytes", file: "engine/sim/layout.go",
		from: "return uint16(h - limit), b.pgOff", to: "return 0, b.pgOff", pkgs: []string{"./engine/sim/"}, run: "TestSkbLayout|TestBusPerBuffer"},
	{name: "bus_per_buffer: charged once a transfer, not per buffer", file: "engine/sim/world.go",
		from: "float64(bufs)*h.cpu.BusPerBuffer", to: "h.cpu.BusPerBuffer", pkgs: []string{"./engine/sim/"}, run: "TestSkbLayout|TestBusPerBuffer"},
	{name: "scheduler: a woken thread's context switch is free", file: "engine/sim/sched.go",
		from: "ep.w.q.push(c.charge(now, sc.ContextSwitch), evAppRun, ep.idx)", to: "ep.w.q.push(c.charge(now, 0), evAppRun, ep.idx)", pkgs: []string{"./engine/sim/"}, run: "TestScheduler|TestSeed003|TestInterruptThreadSwitch"},
	{name: "scheduler: a woken interrupt thread's context switch is free", file: "engine/sim/world.go",
		from: "c.charge(now, h.ithread.ContextSwitch)", to: "", pkgs: []string{"./engine/sim/"}, run: "TestScheduler|TestSeed003|TestInterruptThreadSwitch"},
	{name: "scheduler: every repetition draws the same", file: "engine/sim/sched.go",
		from: "w.rnd = newRand(w.e.seed, w.rep)", to: "w.rnd = newRand(w.e.seed, 0)", pkgs: []string{"./engine/sim/"}, run: "TestScheduler|TestSeed003|TestInterruptThreadSwitch"},
	{name: "scheduler: the wake-up latency drawn once a run", file: "engine/sim/sched.go",
		from: "a.lag = sc.latency()\n\ta.woken = wokeNone", to: "a.woken = wokeNone", pkgs: []string{"./engine/sim/"}, run: "TestScheduler|TestSeed003|TestInterruptThreadSwitch"},
	{name: "scheduler: a sleeping reader woken by data runs at once", file: "engine/sim/tcp.go",
		from: "w.q.push(now+a.lag, evAppRun, ep.idx)", to: "w.q.push(now, evAppRun, ep.idx)", pkgs: []string{"./engine/sim/"}, run: "TestVMHaltReaderGathers"},
	{name: "scheduler: the provenance leaves out the schedulers a run ran", file: "engine/sim/provenance.go",
		from: "m.Schedulers = append(m.Schedulers, run.String())", to: "", pkgs: []string{"./engine/sim/"}, run: "TestVMHaltReaderGathers"},
	{name: "slice: a turn waits for its busy core without bound", file: "engine/sim/sched.go",
		from: "if s := ep.host.slice; s > 0 {", to: "if s := ep.host.slice; false && s > 0 {", pkgs: []string{"./engine/sim/"}, run: "TestSliceEndsStarvation"},
	{name: "slice: a turn that waited a slice does not hold the core after it", file: "engine/sim/sched.go",
		from: "a.runUntil = now + s\n", to: "\n", pkgs: []string{"./engine/sim/"}, run: "TestSliceEndsStarvation"},
	{name: "held turns: a turn is held past a progress report", file: "engine/sim/app.go",
		from: "t <= w.limit && t < w.progressAt && ep.appCPU.free <= t", to: "t <= w.limit && ep.appCPU.free <= t", pkgs: []string{"./engine/sim/"}, run: "TestHeldTurnsChangeNothing|TestIdleTurnRule|TestUnholdMates"},
	{name: "held turns: a held turn that passed leaves the thread awake", file: "engine/sim/app.go",
		from: "\t\ta.ev = false\n\t\ta.waiting = false\n\t\tep.sleep()\n\t\treturn", to: "\t\ta.ev = false\n\t\treturn", pkgs: []string{"./engine/sim/"}, run: "TestHeldTurnsChangeNothing|TestHeldTurnThatPassedSleeps"},
	{name: "held turns: a mate's turn made busy past its hold is not queued", file: "engine/sim/app.go",
		from: "if a := &o.app; a.held && a.hold.at < c.free && !q.handedOut(a.hold) {", to: "if a := &o.app; false && a.held {", pkgs: []string{"./engine/sim/"}, run: "TestHeldTurnsChangeNothing|TestIdleTurnRule|TestUnholdMates"},
	{name: "held turns: a turn on a guarded core made busy past its hold is not queued", file: "engine/sim/app.go",
		from: "case a.hold.at < c.free:\n\t\t\t\t\ta.held = false", to: "case false:\n\t\t\t\t\ta.held = false", pkgs: []string{"./engine/sim/"}, run: "TestHeldTurnsChangeNothing|TestUnholdGuarded"},
	{name: "FuzzModel: a run that has had its event budget goes on", file: "engine/sim/checks.go",
		from: "c.cut = true\n\t\tc.end(w)", to: "c.cut = true", pkgs: []string{"./engine/sim/"}, run: "TestEventBudget|TestCheckerLivelock"},
	// engine/kernel: CPU accounting and the capture spool (no namespaces).
	{name: "kernel: outside time not bounded by this process's own and ksoftirqd's", file: "engine/kernel/cpu.go",
		from: "outside = busy - max(b.Processes-a.Processes, own+softirqd)", to: "outside = busy - (b.Processes - a.Processes)", pkgs: []string{"./engine/kernel/"}, run: "TestOutsideTasks"},
	{name: "kernel: a worker's scheduler pass unlocks its thread (lost the data path under load)", file: "engine/kernel/workload.go",
		from: "\ty.meter.stop()\n\truntime.Gosched()\n", to: "\ty.meter.stop()\n\truntime.UnlockOSThread()\n\truntime.Gosched()\n\truntime.LockOSThread()\n", pkgs: []string{"./engine/kernel/"}, run: "TestYielderPass$"},
	{name: "devqueue: a full spool hands one chunk on for each it starts (never empties)", file: "engine/kernel/devqueue/spool.go",
		from: "\t\ts.each(hand)\n\t\ts.each(hand)\n", to: "\t\ts.each(hand)\n", pkgs: []string{"./engine/kernel/devqueue/"}, run: "TestSpool"},
	{name: "devqueue: a spool hands records on newest chunk first", file: "engine/kernel/devqueue/spool.go",
		from: "c := s.chunks[0]\n\ts.chunks = append(s.chunks[:0], s.chunks[1:]...)", to: "c := s.chunks[len(s.chunks)-1]\n\ts.chunks = s.chunks[:len(s.chunks)-1]", pkgs: []string{"./engine/kernel/devqueue/"}, run: "TestSpool"},
	// Kernel side (namespaces): a fallback or restore dropped.
	{name: "devqueue: a reader a ring behind hands on its CPU's overwritten records", file: "engine/kernel/devqueue/record.go",
		from: "src)]\n\tif !r.intact(cpu, pos) {\n\t\treturn nil, 0, false\n\t}\n", to: "src)]\n", pkgs: []string{"./engine/kernel/devqueue/"}, run: "TestRecordRingReader"},
	{name: "devqueue: a record whose caplen is torn is read", file: "engine/kernel/devqueue/record.go",
		from: "if caplen > HeaderMax {\n\t\treturn nil, 0, false\n\t}", to: "caplen = min(caplen, HeaderMax)", pkgs: []string{"./engine/kernel/devqueue/"}, run: "TestRecordRingReader"},
	{name: "devqueue: the receiver's own header copy stops a word short", file: "engine/kernel/devqueue/ingress.go",
		from: "for i := int16(0); i < 64; i += 8 {", to: "for i := int16(0); i < 56; i += 8 {", pkgs: []string{"./engine/kernel/devqueue/"}, run: "TestProgramParses", netns: true},
	{name: "devqueue: the receiver's copy leaves out the word that ends the headers", file: "engine/kernel/devqueue/ingress.go",
		from: "\t\tasm.StoreMem(asm.R3, 0, asm.R0, asm.DWord),\n\t\tasm.Ja.Label(\"copied\"),", to: "\t\tasm.Ja.Label(\"copied\"),", pkgs: []string{"./engine/kernel/devqueue/"}, run: "TestProgramParses", netns: true},
	{name: "devqueue: the receiver records packets of other ports", file: "engine/kernel/devqueue/ingress.go",
		from: "\t\t\tasm.Ja.Label(\"other\"),\n\t\t\tasm.StoreImm(asm.R10, inStackFlag, 0, asm.Word)", to: "\t\t\tasm.StoreImm(asm.R10, inStackFlag, 0, asm.Word)", pkgs: []string{"./engine/kernel/devqueue/"}, run: "TestProgramParses", netns: true},
	{name: "devqueue: the receiver writes a short record whatever its template bytes", file: "engine/kernel/devqueue/ingress.go",
		from: "\t\t\tasm.LoadMem(asm.R2, asm.R1, w.line, w.size),\n\t\t\tasm.JNE.Reg(asm.R0, asm.R2, \"full\"),", to: "\t\t\tasm.LoadMem(asm.R2, asm.R1, w.line, w.size),", pkgs: []string{"./engine/kernel/devqueue/"}, run: "TestProgramParses", netns: true},
	{name: "devqueue: the sender's recording program counts its units as other", file: "engine/kernel/devqueue/ingress.go",
		from: "\t\tasm.JSLE.Imm(asm.R8, 0, \"other\"),\n\t\t// skb_shinfo(skb) = head + end.", to: "\t\tasm.Ja.Label(\"other\"),\n\t\t// skb_shinfo(skb) = head + end.", pkgs: []string{"./engine/kernel/devqueue/"}, run: "TestProgramParses", netns: true},
	{name: "devqueue: the reader keeps a CPU's template past records it skipped", file: "engine/kernel/devqueue/record.go",
		from: "\tr.tmpl[cpu].ok = false\n", to: "", pkgs: []string{"./engine/kernel/devqueue/"}, run: "TestShortRecords", netns: true},
	{name: "devqueue: the forced tracepoint is ignored (TCX used)", file: "engine/kernel/devqueue/counter.go",
		from: "if opts.tracepoint {\n\t\toff.CastToKernCtx = 0\n\t}", to: "", pkgs: []string{"./engine/kernel/devqueue/"}, run: "TestCountsLoopbackStream", netns: true},
	{name: "nic: a device found home already is not restored", file: "provider/nic/move.go",
		from: "if !released {\n\t\trestoreDropped(", to: "if released {\n\t\trestoreDropped(", pkgs: []string{"./provider/nic/"}, run: "TestMoveDevice", netns: true},
	{name: "kernel: the capture-off note is dropped", file: "engine/kernel/measure.go",
		from: `res.Notes = append(res.Notes, "capture disabled: send_units, avg_send_bytes, data_packets and single_mss_fraction were not measured (0)")`,
		to:   `res.Notes = append(res.Notes, "capture disabled")`, pkgs: []string{"./engine/kernel/"}, run: "TestCaptureOff", netns: true},
	{name: "nic: links tsolab makes get link-local addresses (addr_gen_mode eui64)", file: "provider/nic/spec.go",
		from: "if !ok {\n\t\treturn genModeNone, nil", to: "if !ok {\n\t\treturn 0, nil", pkgs: []string{"./provider/nic/"}, run: "TestNoLinkLocal", netns: true},
	{name: "host: Delete trusts the Read's mark of a namespace swapped in by hand", file: "provider/host/checked.go",
		from: "if same, err := netnsfs.Bound(ns, e.h); err == nil && same {", to: "if true {", pkgs: []string{"./provider/host/"}, run: "TestDeleteAfterSwap", netns: true},
	{name: "cli: -name of destroy, inspect and exec is not checked against the state", file: "cmd/tsolab/state.go",
		from: "if n == \"\" || len(st.Resources) == 0 || st.Lab == string(n) {", to: "if true {", pkgs: []string{"./cmd/tsolab/"}, run: "TestScript/two-copies$", netns: true},
	{name: "cli: destroy does not check -name against the state", file: "cmd/tsolab/provision.go",
		from: "if !c.checkStateName(dir, st, name) {\n\t\treturn exitError, nil\n\t}", to: "", pkgs: []string{"./cmd/tsolab/"}, run: "TestScript/two-copies$", netns: true},
	{name: "cli: inspect does not check -name against the state", file: "cmd/tsolab/inspect.go",
		from: "if !c.checkStateName(dir, st, name) {\n\t\treturn exitError\n\t}", to: "", pkgs: []string{"./cmd/tsolab/"}, run: "TestScript/two-copies$", netns: true},
	{name: "cli: exec does not check -name against the state", file: "cmd/tsolab/exec.go",
		from: "if !c.checkStateName(dir, st, copyName) {", to: "if false {", pkgs: []string{"./cmd/tsolab/"}, run: "TestScript/two-copies$", netns: true},
}

func main() {
	only := flag.String("only", "", "run only the mutations whose name matches this regexp")
	noNetns := flag.Bool("no-netns", false, "leave out the mutations whose tests need namespaces")
	check := flag.Bool("check", false, "only check that each mutation's text is found once (stale or not), running no test")
	auto := flag.String("auto", "", "instead of the list, generate operator mutants in these package directories (comma-separated, e.g. planner,hcl)")
	max := flag.Int("max", 30, "with -auto: at most this many mutants a package, drawn with -seed (0: all)")
	seed := flag.Int64("seed", 1, "with -auto: the seed of the draw")
	run := flag.String("run", "", "with -auto: judge each mutant by only the tests this go test -run filter picks")
	flag.Parse()
	root, err := os.Getwd()
	if err != nil {
		fail(err)
	}
	list := mutations
	if *auto != "" {
		if list, err = generatedAll(root, strings.Split(*auto, ","), *max, *seed); err != nil {
			fail(err)
		}
		for i := range list {
			list[i].run = *run
		}
	}
	var re *regexp.Regexp
	if *only != "" {
		re = regexp.MustCompile(*only)
	}
	work, err := os.MkdirTemp("", "tsolab-mutation-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(work)
	// A copy of the tree as committed plus what is not (git ls-files).
	files, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		fail(fmt.Errorf("git ls-files: %w", err))
	}
	for _, f := range strings.Split(strings.TrimSpace(string(files)), "\n") {
		if err := copyFile(filepath.Join(root, f), filepath.Join(work, f)); err != nil {
			fail(err)
		}
	}
	var missed, stale []string
	caught := 0
	for i, m := range list {
		if re != nil && !re.MatchString(m.name) || *noNetns && m.netns {
			continue
		}
		path := filepath.Join(work, m.file)
		orig, err := os.ReadFile(path)
		if err != nil {
			fail(err)
		}
		mutated, n := apply(orig, m)
		if n != 1 {
			fmt.Printf("%2d STALE      %s (%s: the text occurs %d times)\n", i+1, m.name, m.file, n)
			stale = append(stale, m.name)
			continue
		}
		if *check {
			continue
		}
		if err := os.WriteFile(path, mutated, 0o644); err != nil {
			fail(err)
		}
		start := time.Now()
		failed, first := runTests(work, m)
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			fail(err)
		}
		if failed {
			caught++
			fmt.Printf("%2d caught     %s (%s, %.0fs)\n", i+1, m.name, first, time.Since(start).Seconds())
		} else {
			missed = append(missed, m.name)
			fmt.Printf("%2d NOT CAUGHT %s (go test %s)\n", i+1, m.name, strings.Join(m.pkgs, " "))
		}
	}
	if *check {
		fmt.Printf("%d mutations, %d stale\n", len(list), len(stale))
	} else {
		fmt.Printf("\n%d caught, %d not caught, %d stale\n", caught, len(missed), len(stale))
	}
	if len(missed) > 0 || len(stale) > 0 {
		os.Exit(1)
	}
}

// apply returns src with the mutation made, and how many times its text
// was found (the change is made only when that is 1).
func apply(src []byte, m mutation) ([]byte, int) {
	if m.at == 0 {
		n := bytes.Count(src, []byte(m.from))
		return bytes.Replace(src, []byte(m.from), []byte(m.to), 1), n
	}
	off := m.at - 1
	if off+len(m.from) > len(src) || string(src[off:off+len(m.from)]) != m.from {
		return src, 0
	}
	out := append(append(append([]byte{}, src[:off]...), m.to...), src[off+len(m.from):]...)
	return out, 1
}

// generatedAll generates the mutants of each directory; those under
// provider/ need namespaces (their tests run under the lock).
func generatedAll(root string, dirs []string, max int, seed int64) ([]mutation, error) {
	var all []mutation
	for _, d := range dirs {
		d = strings.Trim(filepath.ToSlash(d), "./")
		ms, err := generated(root, d, max, seed, strings.HasPrefix(d, "provider/"))
		if err != nil {
			return nil, err
		}
		all = append(all, ms...)
	}
	return all, nil
}

// runTests runs the mutation's tests in dir and says whether they failed,
// with the first failing test's name.
func runTests(dir string, m mutation) (bool, string) {
	args := []string{"test", "-count=1", "-p", "1"}
	if m.run != "" {
		args = append(args, "-run", m.run)
	}
	args = append(args, m.pkgs...)
	var cmd *exec.Cmd
	if m.netns {
		lock := "/work/.netns.lock"
		if _, err := os.Stat(lock); err == nil {
			cmd = exec.Command("flock", append([]string{lock, "go"}, args...)...)
		}
	}
	if cmd == nil {
		cmd = exec.Command("go", args...)
	}
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TSOLAB_REQUIRE_NETNS=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		return false, ""
	}
	first := "build failed"
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.TrimSpace(l); strings.HasPrefix(f, "--- FAIL: ") {
			first = strings.Fields(strings.TrimPrefix(f, "--- FAIL: "))[0]
			break
		}
	}
	return true, first
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		if os.IsNotExist(err) {
			return nil // deleted in the work tree, not yet committed
		}
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mutation:", err)
	os.Exit(2)
}
