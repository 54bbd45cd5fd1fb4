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
// reported as "stale": the code moved on and the list needs updating.
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
		from: "var d deferral = heffnerDefer{divisor: 3}\n\tif name == \"super-tso-v2\" {", to: "var d deferral = heffnerDefer{divisor: 2}\n\tif name == \"super-tso-v2\" {", pkgs: []string{"./engine/sim/"}},
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
	// Kernel side (namespaces): a fallback or restore dropped.
	{name: "devqueue: the forced tracepoint is ignored (TCX used)", file: "engine/kernel/devqueue/counter.go",
		from: "if opts.tracepoint {\n\t\toff.CastToKernCtx = 0\n\t}", to: "", pkgs: []string{"./engine/kernel/devqueue/"}, run: "TestCountsLoopbackStream", netns: true},
	{name: "nic: a device found home already is not restored", file: "provider/nic/move.go",
		from: "if !released {\n\t\trestoreDropped(", to: "if released {\n\t\trestoreDropped(", pkgs: []string{"./provider/nic/"}, run: "TestMoveDevice", netns: true},
	{name: "kernel: the capture-off note is dropped", file: "engine/kernel/measure.go",
		from: `res.Notes = append(res.Notes, "capture disabled: send_units, avg_send_bytes, data_packets and single_mss_fraction were not measured (0)")`,
		to:   `res.Notes = append(res.Notes, "capture disabled")`, pkgs: []string{"./engine/kernel/"}, run: "TestCaptureOff", netns: true},
}

func main() {
	only := flag.String("only", "", "run only the mutations whose name matches this regexp")
	noNetns := flag.Bool("no-netns", false, "leave out the mutations whose tests need namespaces")
	flag.Parse()
	root, err := os.Getwd()
	if err != nil {
		fail(err)
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
	for i, m := range mutations {
		if re != nil && !re.MatchString(m.name) || *noNetns && m.netns {
			continue
		}
		path := filepath.Join(work, m.file)
		orig, err := os.ReadFile(path)
		if err != nil {
			fail(err)
		}
		if n := bytes.Count(orig, []byte(m.from)); n != 1 {
			fmt.Printf("%2d STALE      %s (%s: the text occurs %d times)\n", i+1, m.name, m.file, n)
			stale = append(stale, m.name)
			continue
		}
		if err := os.WriteFile(path, bytes.Replace(orig, []byte(m.from), []byte(m.to), 1), 0o644); err != nil {
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
	fmt.Printf("\n%d caught, %d not caught, %d stale\n", caught, len(missed), len(stale))
	if len(missed) > 0 || len(stale) > 0 {
		os.Exit(1)
	}
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
