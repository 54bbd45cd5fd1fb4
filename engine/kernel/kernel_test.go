package kernel_test

import (
	"context"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/engine/kernel"
	"github.com/tsolab/tsolab/result"
)

// Kernel feature names the tests switch.
const (
	featTSO = "tx-tcp-segmentation"
	featGSO = "tx-generic-segmentation"
	featSG  = "tx-scatter-gather"
)

func runWorkload(t *testing.T, p *pair, w *config.Workload, opts kernel.Options) *result.WorkloadResult {
	t.Helper()
	return runWorkloadWatching(t, p, w, opts, func() {})
}

// runWorkloadWatching is runWorkload that calls watch at each progress
// report, while the workload runs.
func runWorkloadWatching(t *testing.T, p *pair, w *config.Workload, opts kernel.Options, watch func()) *result.WorkloadResult {
	t.Helper()
	p.Scenario.Workloads = []*config.Workload{w}
	var progress int
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := kernel.New(opts).Run(ctx, engine.RunRequest{
		Scenario: p.Scenario, Workload: w, Naming: p.Naming,
		Progress: func(engine.Progress) { progress++; watch() },
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, name := range result.Names() {
		if _, ok := res.Metrics[name]; !ok {
			t.Errorf("metric %s missing from the result", name)
		}
	}
	m := res.Metrics
	if m[result.MetricBytes] <= 0 {
		t.Fatalf("bytes = %v, want > 0", m[result.MetricBytes])
	}
	want := m[result.MetricBytes] * 8 / m[result.MetricDurationS]
	if got := m[result.MetricThroughputBps]; math.Abs(got-want) > 1e-6*want {
		t.Errorf("throughput_bps = %v, want bytes*8/duration = %v", got, want)
	}
	if w.Duration > 0 {
		if d := m[result.MetricDurationS]; d < w.Duration.Seconds() || d > w.Duration.Seconds()+1 {
			t.Errorf("duration_s = %v, want about %v", d, w.Duration.Seconds())
		}
		// The first progress tick comes one second in, racing the end of
		// a workload of exactly one second.
		if progress == 0 && w.Duration > time.Second {
			t.Errorf("Progress was never called in a %v run", w.Duration)
		}
	}
	if m[result.MetricCPUTxPct] <= 0 || m[result.MetricCPURxPct] <= 0 {
		t.Errorf("cpu_tx_pct = %v, cpu_rx_pct = %v, want both > 0", m[result.MetricCPUTxPct], m[result.MetricCPURxPct])
	}
	if m[result.MetricCPUTxPct] > 100*float64(2*len(p.Scenario.Workloads[0].Servers)*max(w.Connections, w.Concurrency, 1)) {
		t.Errorf("cpu_tx_pct = %v: more than the threads could use", m[result.MetricCPUTxPct])
	}
	if got, want := m[result.MetricCPUTxPerGbit], m[result.MetricCPUTxPct]/(m[result.MetricThroughputBps]/1e9); math.Abs(got-want) > 1e-9*want {
		t.Errorf("cpu_tx_per_gbit = %v, want cpu_tx_pct/Gbps = %v", got, want)
	}
	if res.Kernel == "" {
		t.Error("the result does not record the kernel release")
	}
	if res.MSS <= 0 {
		t.Errorf("MSS = %d, want > 0", res.MSS)
	}
	if m[result.MetricCaptureLoss] > 0 {
		t.Logf("capture lost %v packets: %v", m[result.MetricCaptureLoss], res.Notes)
	}
	su := m[result.MetricSendUnits]
	if su <= 0 {
		t.Fatalf("send_units = %v, want > 0", su)
	}
	var hist int64
	for _, n := range res.SendUnitHistogram {
		hist += n
	}
	if float64(hist) != su {
		t.Errorf("histogram holds %d send units, send_units = %v", hist, su)
	}
	if dp := m[result.MetricDataPackets]; dp < su {
		t.Errorf("data_packets = %v < send_units = %v", dp, su)
	}
	t.Logf("%s: %.2f Gb/s, cpu tx %.1f%% rx %.1f%%, %.1f%%/Gbps, units %.0f avg %.0f B (MSS %d), data %.0f, single-MSS %.3f, retrans %.0f, loss %.0f, notes %q",
		w.Name, m[result.MetricThroughputBps]/1e9, m[result.MetricCPUTxPct], m[result.MetricCPURxPct], m[result.MetricCPUTxPerGbit],
		su, m[result.MetricAvgSendBytes], res.MSS, m[result.MetricDataPackets], m[result.MetricSingleMSSFrac],
		m[result.MetricRetransmits], m[result.MetricCaptureLoss], res.Notes)
	return res
}

func TestStreamTSOOnSendsSuperPackets(t *testing.T) {
	p := newPair(t, 1500)
	p.setFeatures(t, "tx", "tx0", map[string]bool{featSG: true, featTSO: true, featGSO: true})
	res := runWorkload(t, p, &config.Workload{
		Name: "bulk", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"},
		Connections: 2, WriteSize: 65536, Duration: 1500 * time.Millisecond,
	}, kernel.Options{})
	if avg := res.Metrics[result.MetricAvgSendBytes]; avg <= float64(4*res.MSS) {
		t.Errorf("TSO on: avg_send_bytes = %v, want far above the MSS %d", avg, res.MSS)
	}
	wirePackets(t, res)
	if got := res.Offloads["tx0"]["tso"]; !got {
		t.Errorf("offloads of tx0 = %v, want tso on", res.Offloads["tx0"])
	}
	checkProvenance(t, res)
	if len(res.Series) == 0 {
		t.Error("no per-second series")
	} else if s := res.Series[0]; s.ThroughputBps <= 0 || s.CwndSegments <= 0 || s.SendUnitBytes <= float64(res.MSS) {
		t.Errorf("first sample = %+v, want throughput, cwnd and a send unit above the MSS", s)
	}
}

// sourceNote returns the Note that names where the send units were
// counted, failing the test when there is none.
func sourceNote(t *testing.T, res *result.WorkloadResult) string {
	t.Helper()
	for _, n := range res.Notes {
		if strings.HasPrefix(n, "send units counted by") {
			return n
		}
	}
	t.Fatalf("no note names the source of the send-unit counts: %q", res.Notes)
	return ""
}

// wirePackets checks that data_packets is the payload cut to MSS: at
// least bytes/MSS, and at most that plus the retransmits and one partly
// filled segment per send unit.
func wirePackets(t *testing.T, res *result.WorkloadResult) {
	t.Helper()
	m := res.Metrics
	lo := m[result.MetricBytes] / float64(res.MSS)
	hi := lo + m[result.MetricRetransmits] + m[result.MetricSendUnits] + 1
	if dp := m[result.MetricDataPackets]; dp < lo || dp > hi {
		t.Errorf("data_packets = %v, want the %v bytes cut to MSS %d: between %.0f and %.0f", dp, m[result.MetricBytes], res.MSS, lo, hi)
	}
}

func TestStreamTSOOffCountsBeforeGSO(t *testing.T) {
	p := newPair(t, 1500)
	p.setFeatures(t, "tx", "tx0", map[string]bool{featSG: true, featTSO: false, featGSO: true})
	res := runWorkload(t, p, &config.Workload{
		Name: "bulk", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"},
		Connections: 1, WriteSize: 65536, Duration: time.Second,
	}, kernel.Options{Counter: kernel.CounterBPF})
	if n := sourceNote(t, res); !strings.Contains(n, "send units counted by eBPF on tx0 (tx0) at TCX egress") {
		t.Errorf("source note %q, want the eBPF counter", n)
	}
	if avg := res.Metrics[result.MetricAvgSendBytes]; avg <= float64(4*res.MSS) {
		t.Errorf("TSO off, GSO on: avg_send_bytes = %v, want the GSO super-packets TCP built (> 4 MSS of %d)", avg, res.MSS)
	}
	wirePackets(t, res)
	if got, dp := res.Metrics[result.MetricCaptureLoss], res.Metrics[result.MetricDataPackets]; got > 0.01*dp {
		t.Errorf("capture_loss = %v with the eBPF counter, want below 1%% of the %v data packets", got, dp)
	}
}

// On Linux >= 4.19 TCP builds GSO skbs whatever the device offers
// ("tcp: switch to GSO being always on"; sk_setup_caps also grants TCP
// SG and checksumming), so even with TSO, GSO and SG off the units TCP
// hands to the device layer are super-packets, which validate_xmit_skb
// cuts to MSS before the driver. The eBPF counter sees the former, the
// AF_PACKET ring the latter.
func TestStreamWithoutSegmentationOffload(t *testing.T) {
	p := newPair(t, 1500)
	p.setFeatures(t, "tx", "tx0", map[string]bool{featTSO: false, featGSO: false, featSG: false})
	w := &config.Workload{
		Name: "bulk", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"},
		Connections: 1, WriteSize: 65536, Duration: time.Second,
	}
	t.Run("bpf", func(t *testing.T) {
		res := runWorkload(t, p, w, kernel.Options{Counter: kernel.CounterBPF})
		if avg := res.Metrics[result.MetricAvgSendBytes]; avg <= float64(4*res.MSS) {
			t.Errorf("before software GSO: avg_send_bytes = %v, want TCP's GSO super-packets (> 4 MSS of %d)", avg, res.MSS)
		}
		wirePackets(t, res)
		if o := res.Offloads["tx0"]; o["tso"] || o["gso"] || o["sg"] {
			t.Errorf("offloads read back = %v, want tso, gso and sg off", o)
		}
	})
	t.Run("ring", func(t *testing.T) {
		res := runWorkload(t, p, w, kernel.Options{Counter: kernel.CounterRing})
		if n := sourceNote(t, res); !strings.Contains(n, "AF_PACKET ring") {
			t.Errorf("source note %q, want the AF_PACKET ring", n)
		}
		avg := res.Metrics[result.MetricAvgSendBytes]
		if avg > float64(res.MSS) || avg < 0.95*float64(res.MSS) {
			t.Errorf("after software GSO: avg_send_bytes = %v, want about the MSS %d", avg, res.MSS)
		}
		if f := res.Metrics[result.MetricSingleMSSFrac]; f < 0.9 {
			t.Errorf("single_mss_fraction = %v, want >= 0.9 after software GSO", f)
		}
		if got, want := res.Metrics[result.MetricDataPackets], res.Metrics[result.MetricSendUnits]; got != want {
			t.Errorf("data_packets = %v, want send_units = %v when every unit is at most one MSS", got, want)
		}
	})
}

// With both counters the ring cross-checks the eBPF counter: its wire
// packets agree with the eBPF wire segments, and its drops are a note,
// not capture_loss.
func TestStreamBothCounters(t *testing.T) {
	p := newPair(t, 1500)
	p.setFeatures(t, "tx", "tx0", map[string]bool{featSG: true, featTSO: false, featGSO: true})
	res := runWorkload(t, p, &config.Workload{
		Name: "paced", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"},
		Connections: 1, WriteSize: 65536, Duration: time.Second,
	}, kernel.Options{Counter: kernel.CounterBoth})
	if n := sourceNote(t, res); !strings.Contains(n, "eBPF") {
		t.Errorf("source note %q, want the eBPF counter", n)
	}
	var ring bool
	for _, n := range res.Notes {
		ring = ring || strings.HasPrefix(n, "capture on tx0")
		if strings.Contains(n, "AF_PACKET ring saw") {
			t.Errorf("the ring and the eBPF counter disagree: %q", n)
		}
	}
	if !ring {
		t.Errorf("notes %q: want the ring's own note", res.Notes)
	}
	if got, dp := res.Metrics[result.MetricCaptureLoss], res.Metrics[result.MetricDataPackets]; got > 0.01*dp {
		t.Errorf("capture_loss = %v, want below 1%% of the %v data packets: the ring's drops are not the eBPF counter's", got, dp)
	}
}

// TestStreamBytesLimit: a stream of bytes ends at them, read 4 KiB a
// call (read_size) to the last byte.
func TestStreamBytesLimit(t *testing.T) {
	p := newPair(t, 9000)
	res := runWorkload(t, p, &config.Workload{
		Name: "fixed", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"},
		Connections: 2, WriteSize: 100000, ReadSize: 4096, Bytes: 50_000_000, NoDelay: true, SndBuf: 1 << 20, RcvBuf: 2 << 20, CC: "cubic",
	}, kernel.Options{})
	if got, want := res.Metrics[result.MetricBytes], 2*50_000_000.0; got != want {
		t.Errorf("bytes = %v, want %v (two connections of 50 MB)", got, want)
	}
	if res.MSS != 9000-52 {
		t.Errorf("MSS = %d at MTU 9000, want %d (timestamps on)", res.MSS, 9000-52)
	}
}

func TestRR(t *testing.T) {
	p := newPair(t, 1500)
	res := runWorkload(t, p, &config.Workload{
		Name: "rr", Kind: config.RR, Client: "tx", Servers: []string{"rx0"},
		Concurrency: 4, RequestSize: 200, ResponseSize: 4000, NoDelay: true, Duration: time.Second,
	}, kernel.Options{})
	m := res.Metrics
	if m[result.MetricTransactionsPerS] <= 0 {
		t.Fatalf("transactions_per_s = %v, want > 0", m[result.MetricTransactionsPerS])
	}
	if p50, p99 := m[result.MetricLatencyP50us], m[result.MetricLatencyP99us]; p50 <= 0 || p50 > p99 {
		t.Errorf("latency p50 = %v µs, p99 = %v µs: want 0 < p50 <= p99", p50, p99)
	}
	tx := m[result.MetricTransactionsPerS] * m[result.MetricDurationS]
	if got, want := m[result.MetricBytes], tx*4200; math.Abs(got-want) > 4*4200 {
		t.Errorf("bytes = %v, want transactions × 4200 = %v", got, want)
	}
	if avg := m[result.MetricAvgSendBytes]; avg != 200 {
		t.Errorf("avg_send_bytes = %v, want the 200-byte requests", avg)
	}
}

// TestSendfilePaced: a sendfile workload is paced at its rate, and the
// file it sends has no name while it runs (unlinked when made), so a
// tsolab killed outright leaves none of its file_size bytes behind.
func TestSendfilePaced(t *testing.T) {
	p := newPair(t, 1500)
	const rate = 400e6
	dir := t.TempDir()
	var named []string
	res := runWorkloadWatching(t, p, &config.Workload{
		Name: "file", Kind: config.Sendfile, Client: "tx", Servers: []string{"rx0"},
		Connections: 1, FileSize: 32 << 20, Rate: config.Rate(rate), Duration: 1500 * time.Millisecond,
	}, kernel.Options{TempDir: dir}, func() {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			named = append(named, e.Name())
		}
	})
	if got := res.Metrics[result.MetricThroughputBps]; got > 1.1*rate || got < 0.7*rate {
		t.Errorf("throughput = %v bit/s, want about the pacing rate %v", got, rate)
	}
	if len(named) > 0 {
		t.Errorf("while the workload ran, its temporary directory held %v: want the file unlinked", named)
	}
}

func TestLoopbackRR(t *testing.T) {
	p := newPair(t, 1500)
	res := runWorkload(t, p, &config.Workload{
		Name: "tbench", Kind: config.RR, Client: "tx", Servers: []string{"tx"}, Loopback: true,
		Concurrency: 2, RequestSize: 100, ResponseSize: 20000, NoDelay: true, Duration: time.Second,
	}, kernel.Options{})
	if _, ok := res.Offloads["lo@tx"]; !ok {
		t.Errorf("offloads = %v, want the loopback device of host tx read back as lo@tx", res.Offloads)
	}
	if res.MSS < 16000 {
		t.Errorf("MSS over loopback = %d, want a loopback-sized MSS (MTU 65536)", res.MSS)
	}
}

func TestCaptureOff(t *testing.T) {
	p := newPair(t, 1500)
	p.Scenario.Workloads = nil
	w := &config.Workload{Name: "bulk", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"}, Duration: 300 * time.Millisecond}
	res, err := kernel.New(kernel.Options{DisableCapture: true}).Run(context.Background(), engine.RunRequest{Scenario: p.Scenario, Workload: w, Naming: p.Naming})
	if err != nil {
		t.Fatal(err)
	}
	const note = "capture disabled: send_units, avg_send_bytes, data_packets and single_mss_fraction were not measured (0)"
	noted := false
	for _, n := range res.Notes {
		noted = noted || n == note
	}
	if res.Metrics[result.MetricSendUnits] != 0 || !noted {
		t.Errorf("capture off: send_units = %v, notes %q: want 0 and the note %q", res.Metrics[result.MetricSendUnits], res.Notes, note)
	}
	if res.Metrics[result.MetricBytes] <= 0 {
		t.Errorf("bytes = %v, want > 0", res.Metrics[result.MetricBytes])
	}
}

func TestCancel(t *testing.T) {
	p := newPair(t, 1500)
	w := &config.Workload{Name: "long", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"}, Duration: time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	_, err := kernel.New(kernel.Options{}).Run(ctx, engine.RunRequest{
		Scenario: p.Scenario, Workload: w, Naming: p.Naming,
		Progress: func(engine.Progress) { cancel() },
	})
	if err == nil {
		t.Fatal("Run of a cancelled workload returned no error")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancel took %v to stop a 1-minute workload", d)
	}
}

func TestRejectsWorkloadsItCannotRun(t *testing.T) {
	p := newPair(t, 1500)
	tests := []struct {
		name string
		w    *config.Workload
		want string
	}{
		{"rr without sizes", &config.Workload{Name: "rr", Kind: config.RR, Client: "tx", Servers: []string{"rx0"}, Duration: time.Second}, "request_size"},
		{"unknown server", &config.Workload{Name: "s", Kind: config.Stream, Client: "tx", Servers: []string{"nope"}, Duration: time.Second}, `"nope"`},
		{"loopback to another host", &config.Workload{Name: "l", Kind: config.RR, Client: "tx", Servers: []string{"rx"}, Loopback: true, RequestSize: 1, ResponseSize: 1, Duration: time.Second}, "loopback"},
		{"sendfile without a file", &config.Workload{Name: "f", Kind: config.Sendfile, Client: "tx", Servers: []string{"rx0"}, Duration: time.Second}, "file_size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := kernel.New(kernel.Options{TempDir: t.TempDir()}).Run(context.Background(), engine.RunRequest{Scenario: p.Scenario, Workload: tt.w, Naming: p.Naming})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run error = %v, want one naming %s", err, tt.want)
			}
		})
	}
}

// checkProvenance checks what the run says it ran on: both veth ends with
// their driver and features as set, and each host's TCP sysctls.
func checkProvenance(t *testing.T, res *result.WorkloadResult) {
	t.Helper()
	p := res.Provenance
	if p == nil || len(p.NICs) != 2 {
		t.Fatalf("provenance = %+v, want both NICs", p)
	}
	for _, n := range p.NICs {
		if n.Driver != "veth" || n.DriverVersion == "" || n.Interface != n.Name {
			t.Errorf("nic %s: driver %q version %q interface %q, want veth with a version", n.Name, n.Driver, n.DriverVersion, n.Interface)
		}
	}
	if tx := p.NICs[1]; tx.Name != "tx0" || !slices.Contains(tx.Features, featTSO) || !slices.Contains(tx.Features, featSG) {
		t.Errorf("nic tx0 features %v, want %s and %s (sorted by name: tx0 second)", tx.Features, featTSO, featSG)
	}
	for _, h := range []string{"tx", "rx"} {
		s := p.Sysctls[h]
		if s["tcp_congestion_control"] == "" || len(strings.Fields(s["tcp_wmem"])) != 3 {
			t.Errorf("host %s sysctls %v, want the congestion control and three tcp_wmem values", h, s)
		}
	}
	checkLoad(t, p.Load)
}

// checkLoad checks the machine's load around a run on this machine: one
// entry, unnamed, with the pressure where the kernel has it.
func checkLoad(t *testing.T, load []result.Load) {
	t.Helper()
	if len(load) != 1 || load[0].Machine != "" || load[0].LoadStart < 0 || load[0].LoadEnd < 0 || load[0].OtherCPUPct < 0 {
		t.Fatalf("load = %+v, want one entry for this machine", load)
	}
	_, err := os.Stat("/proc/pressure/cpu")
	if got := load[0].CPUPressureStart != nil && load[0].CPUPressureEnd != nil; got != (err == nil) {
		t.Errorf("load has CPU pressure %v, /proc/pressure/cpu: %v", got, err)
	}
}
