package kernel_test

import (
	"context"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/engine/kernel"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/result"
)

// Behind a tbf the lab's softirq work runs in whatever thread the
// qdisc's watchdog timer interrupts: on a machine whose CPUs run another
// process, that process's thread. A busy loop on every CPU must not take
// that work out of the CPU figures: the runs with it and without it
// alternate, and the medians of cpu_per_gbit (the whole path's, which
// the split between the sides does not move) and of cpu_tx_per_gbit stay
// within a band of each other (per Gb/s: on a loaded machine the busy
// loops can starve a run, which then carries and costs less). On the
// 2-core VM, at load 8-16, the figures before the softirq meter fell to
// 0.57× (tx + rx) and 0.49× (tx) of the quiet runs' beside the busy
// loops (bench/softirq-load), and stood at 1.05× and 1.08× with it
// (engine/kernel doc.go, CPU). The test tells the two apart only when
// the quiet runs have idle CPUs to catch the softirqs: at load 30, with
// the busy loops at nice 19, the accounting before the meter passed it
// too (0.99×, 0.92×), both modes missing the softirqs on other jobs'
// threads. Seven passes at load 12-20 (3 runs a mode) gave 0.80-1.19×
// and 0.72-1.28×. In session 12 (4 runs a mode, load 4-24), nine passes
// whose runs carried the tbf's rate gave 0.93-1.06× and 0.80-0.92×
// (runAtRate says what happened in a tenth); after the meter learnt to
// leave out other namespaces' softirqs (239aa7a), four passes at load
// 7-16 gave 0.89-1.04× and 0.77-0.91×, no run starved.
//
// Why the sender's ratio sits below 1 while the whole path's does not:
// the work moves between the sides, none is lost. The sender's own
// threads ran the same beside the busy loops (3.0-3.8% of a core quiet,
// 3.1-3.7% busy, in 16 runs); the lab's softirq time outside the workers
// fell (13.1-14.8% quiet, 10.7-13.9% busy) and the receiver's threads'
// rose by as much (7.6-10.6% to 12.4-13.6%): with no idle CPU the veth's
// receive softirq runs in the receiver's thread and is charged to it,
// where on an idle CPU it was outside time, split between the sides by
// segments (about half to the sender). The lost accounting this test
// guards against left 0.49× for the sender and 0.57× for the whole path,
// below both lower bounds.
func TestShapedCPUUnderBusyLoop(t *testing.T) {
	p := newPair(t, 1500)
	p.setFeatures(t, "tx", "tx0", map[string]bool{featSG: true, featTSO: false, featGSO: true})
	addTbf(t, p.Naming.HostNS("tx"), "tx0", 2e9)
	w := &config.Workload{
		Name: "bulk", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"},
		Connections: 4, WriteSize: 65536, Duration: 1500 * time.Millisecond,
	}
	var quiet, busy [2][]float64 // cpu_per_gbit, cpu_tx_per_gbit
	add := func(to *[2][]float64, res *result.WorkloadResult) {
		m := res.Metrics
		to[0] = append(to[0], m[result.MetricCPUPerGbit])
		to[1] = append(to[1], m[result.MetricCPUTxPerGbit])
		if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.HasPrefix(n, "softirq time timed by eBPF") }) {
			t.Fatalf("no note from the softirq meter: %q", res.Notes)
		}
	}
	for range 4 {
		add(&quiet, runAtRate(t, p, w, 2e9, "quiet"))
		stop := busyLoops(t)
		add(&busy, runAtRate(t, p, w, 2e9, "busy"))
		stop()
	}
	for i, c := range []struct {
		name   string
		lo, hi float64
	}{{"cpu_per_gbit", 0.75, 1.5}, {"cpu_tx_per_gbit", 0.67, 1.67}} {
		q, b := median(quiet[i]), median(busy[i])
		if r := b / q; r < c.lo || r > c.hi {
			t.Errorf("%s: median %.1f with busy loops, %.1f without (%.2f×), want %.2f-%.2f×; quiet %.1f, busy %.1f",
				c.name, b, q, r, c.lo, c.hi, quiet[i], busy[i])
		} else {
			t.Logf("%s: median %.1f with busy loops, %.1f without (%.2f×); quiet %.1f, busy %.1f", c.name, b, q, r, quiet[i], busy[i])
		}
	}
}

// Another lab's traffic beside a run is not the run's: its packets'
// NET_RX and its sockets' pacing timers run in its own threads (other
// tasks to this run's meter), and this run's figures must not take
// them in. The shaped TSO-off cell alone and beside another pair's
// single stream (TSO on; on this VM BBR, the machine's default, paces
// it: an HRTIMER softirq every ~40 µs in that lab's threads) alternate;
// the medians of cpu_per_gbit stay within 0.7-1.4× of each other.
// Before the owner programs (softirqowner.go), which tell the two labs'
// packets and timers apart by their namespace, the lab's share of the
// machine's packets (84-87%) let the other lab's HRTIMER (25-36% of a
// core) and NET_RX time in: 2.0× (examples/kernel-
// calibration's cell beside a one-stream lab, 3 pairs at load 8-10:
// cpu_tx_pct + cpu_rx_pct 52.9-56.9 against 25.6-27.2, all at 1.9 Gb/s).
// Other jobs' traffic on the machine inflates the runs alone as much
// without them (1.01× in one pass at load 14-17, alone at 21.7-33.9;
// with them 1.23×, alone at 14.6-16.0), so the test also asks that the
// meter told some softirq to be another namespace's.
func TestShapedCPUBesideAnotherLab(t *testing.T) {
	p := newPair(t, 1500)
	p.setFeatures(t, "tx", "tx0", map[string]bool{featSG: true, featTSO: false, featGSO: true})
	addTbf(t, p.Naming.HostNS("tx"), "tx0", 2e9)
	other := newPair(t, 1500)
	other.setFeatures(t, "tx", "tx0", map[string]bool{featSG: true, featTSO: true, featGSO: true})
	w := &config.Workload{
		Name: "bulk", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"},
		Connections: 4, WriteSize: 65536, Duration: 1500 * time.Millisecond,
	}
	var alone, beside []float64
	for range 3 {
		alone = append(alone, runWorkload(t, p, w, kernel.Options{}).Metrics[result.MetricCPUPerGbit])
		running, done := runBeside(t, other)
		<-running
		res := runWorkload(t, p, w, kernel.Options{})
		if err := <-done; err != nil {
			t.Fatalf("the other lab's run: %v", err)
		}
		beside = append(beside, res.Metrics[result.MetricCPUPerGbit])
		if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "only other namespaces'") }) {
			t.Errorf("beside another lab, no softirq was told to be another namespace's: %q", res.Notes)
		}
	}
	a, b := median(alone), median(beside)
	if r := b / a; r < 0.7 || r > 1.4 {
		t.Errorf("cpu_per_gbit: median %.1f beside another lab, %.1f alone (%.2f×), want 0.70-1.40×; alone %.1f, beside %.1f", b, a, r, alone, beside)
	} else {
		t.Logf("cpu_per_gbit: median %.1f beside another lab, %.1f alone (%.2f×); alone %.1f, beside %.1f", b, a, r, alone, beside)
	}
}

// runBeside runs one stream of 4 s on the pair in the background, with
// TSO on, as another lab would; running is closed at its first progress
// report, done gives its error when it ends.
func runBeside(t *testing.T, p *pair) (running chan struct{}, done chan error) {
	t.Helper()
	w := &config.Workload{
		Name: "other", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"},
		Connections: 1, WriteSize: 131072, Duration: 4 * time.Second,
	}
	p.Scenario.Workloads = []*config.Workload{w}
	running, done = make(chan struct{}), make(chan error, 1)
	var once sync.Once
	dir := t.TempDir()
	go func() {
		_, err := kernel.New(kernel.Options{TempDir: dir}).Run(context.Background(), engine.RunRequest{
			Scenario: p.Scenario, Workload: w, Naming: p.Naming,
			Progress: func(engine.Progress) { once.Do(func() { close(running) }) },
		})
		once.Do(func() { close(running) })
		done <- err
	}()
	return running, done
}

// runAtRate runs w until a run carries at least 85% of the tbf's rate
// (bits/s), three tries at most, and returns the last run. The figures
// per Gb/s compare only at one rate: a run that other jobs on the
// machine starved below it is not this test's comparison. Session 12's
// only failure in 10 passes (load 10 rising to 24 as it ran) was four
// quiet runs carrying 0.58-1.66 Gb/s, their softirq time outside the
// workers 13-40% of a core, at 2.2x the busy runs' cpu_per_gbit (32.2
// against 17.9); every other run of the 10 passes carried 1.75-1.92 Gb/s.
// A run still starved after three tries is judged as it is.
func runAtRate(t *testing.T, p *pair, w *config.Workload, rate float64, mode string) *result.WorkloadResult {
	t.Helper()
	var res *result.WorkloadResult
	for try := 1; try <= 3; try++ {
		res = runWorkload(t, p, w, kernel.Options{})
		got := res.Metrics[result.MetricThroughputBps]
		if got >= 0.85*rate {
			break
		}
		t.Logf("%s run, try %d: %.2f Gb/s, below 85%% of the tbf's %.1f: starved by other jobs, run again", mode, try, got/1e9, rate/1e9)
	}
	return res
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// addTbf shapes ifname in namespace ns to rate bits/s with a tbf root
// qdisc, sized as tsolab's provider sizes it (a bucket of 128 KiB or a
// 250 Hz tick at the rate, a queue of the bucket and 50 ms); the qdisc
// goes with the namespace.
func addTbf(t *testing.T, ns, ifname string, rate uint64) {
	t.Helper()
	err := netnsfs.Do(ns, func() error {
		l, err := netlink.LinkByName(ifname)
		if err != nil {
			return err
		}
		bytes := rate / 8
		burst := max(bytes/250, 128<<10)
		return netlink.QdiscAdd(&netlink.Tbf{
			QdiscAttrs: netlink.QdiscAttrs{LinkIndex: l.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
			Rate:       bytes,
			Limit:      uint32(burst + bytes/20),
			Buffer:     netlink.Xmittime(bytes, uint32(burst)),
		})
	})
	if err != nil {
		t.Fatalf("tbf on %s in %s: %v", ifname, ns, err)
	}
}

// busyLoops starts a shell busy loop pinned to each CPU, another
// process (softirqs that interrupt it are not this process's), and
// returns what stops them; they are stopped when t ends too.
func busyLoops(t *testing.T) (stop func()) {
	t.Helper()
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
		cmds = nil
	}
	t.Cleanup(stop)
	for cpu := range runtime.NumCPU() {
		c := exec.Command("sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			t.Fatalf("busy loop: %v", err)
		}
		cmds = append(cmds, c)
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(c.Process.Pid, &set); err != nil {
			t.Fatalf("pin the busy loop to CPU %d: %v", cpu, err)
		}
	}
	return stop
}
