package kernel

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/engine/kernel/capture"
	"github.com/tsolab/tsolab/engine/kernel/devqueue"
	"github.com/tsolab/tsolab/result"
)

func TestMeasurementResultStream(t *testing.T) {
	m := measurement{
		Kind:       config.Stream,
		Duration:   2 * time.Second,
		Bytes:      250_000_000, // 1 Gb/s
		MSS:        1448,
		Captured:   true,
		CPUThreads: [2]time.Duration{400 * time.Millisecond, 200 * time.Millisecond},
		Outside:    100 * time.Millisecond,
		TCP: [2]tcpTotals{
			{SegsIn: 100, SegsOut: 200, DataSegsOut: 200, Retrans: 3},
			{SegsIn: 200, SegsOut: 100, Retrans: 0},
		},
		Taps: []tapResult{{
			Interface: "tx0",
			Ring:      true,
			Result:    capture.Result{Sizes: map[int]int64{1448: 100, 2 * 1448: 50}, Seen: 160, Dropped: 0},
			TxPackets: 160,
		}},
	}
	res := m.result()
	want := map[string]float64{
		result.MetricThroughputBps:    1e9,
		result.MetricBytes:            250e6,
		result.MetricDurationS:        2,
		result.MetricTransactionsPerS: 0,
		result.MetricLatencyP50us:     0,
		result.MetricLatencyP99us:     0,
		// (400 ms + half of 100 ms) over 2 s; (200 ms + 50 ms) over 2 s.
		result.MetricCPUTxPct:      22.5,
		result.MetricCPURxPct:      12.5,
		result.MetricCPUTxPerGbit:  22.5,
		result.MetricCPUPerGbit:    22.5 + 12.5, // both ends over 1 Gb/s
		result.MetricSendUnits:     150,
		result.MetricAvgSendBytes:  (100*1448 + 50*2*1448) / 150.0,
		result.MetricDataPackets:   200,
		result.MetricSingleMSSFrac: 100 / 150.0,
		result.MetricRetransmits:   3,
		result.MetricCaptureLoss:   0,
	}
	if diff := cmp.Diff(want, res.Metrics, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a)) })); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{100, 50}, res.SendUnitHistogram); diff != "" {
		t.Errorf("histogram (-want +got):\n%s", diff)
	}
	for _, n := range res.Notes {
		if strings.Contains(n, "TCP_INFO") || strings.Contains(n, "dropped") {
			t.Errorf("unexpected note for agreeing counts: %q", n)
		}
	}
}

func TestMeasurementNotesDisagreement(t *testing.T) {
	m := measurement{
		Kind: config.Stream, Duration: time.Second, Bytes: 1, MSS: 1000, Captured: true,
		TCP:  [2]tcpTotals{{DataSegsOut: 500}},
		Taps: []tapResult{{Interface: "tx0", Ring: true, Result: capture.Result{Sizes: map[int]int64{1000: 100}, Seen: 110, Dropped: 10}, TxPackets: 400}},
	}
	res := m.result()
	if got := res.Metrics[result.MetricCaptureLoss]; got != 10 {
		t.Errorf("capture_loss = %v, want 10 (tp_drops)", got)
	}
	var dropped, tx bool
	for _, n := range res.Notes {
		dropped = dropped || strings.Contains(n, "dropped 10 of 110")
		tx = tx || strings.Contains(n, "interface counted 400")
	}
	if !dropped || !tx {
		t.Errorf("notes %q: want the drops and the tx_packets disagreement named", res.Notes)
	}
}

func TestMeasurementFromBPF(t *testing.T) {
	units := &devqueue.Result{
		SendUnits: 10, PayloadBytes: 5*1448 + 5*10*1448, WireSegments: 55, GSOUnits: 5,
		SingleMSS: 5, Other: 20, Histogram: []int64{5, 0, 0, 0, 0, 0, 0, 0, 0, 5},
	}
	clamped := *units
	clamped.Clamped = 2
	tests := []struct {
		name      string
		taps      []tapResult
		wantLoss  float64
		wantNotes []string // substrings, each in some note
		badNotes  []string // substrings no note may hold
	}{
		{
			name:      "eBPF alone, interface counter within range",
			taps:      []tapResult{{Interface: "tx0", Units: units, TxPackets: 75}},
			wantNotes: []string{"send units counted by eBPF on tx0 at TCX egress, early in __dev_queue_xmit"},
			badNotes:  []string{"interface counted", "AF_PACKET", "TCP_INFO", "larger than"},
		},
		{
			name:      "send units beyond the histogram",
			taps:      []tapResult{{Interface: "tx0", Units: &clamped, TxPackets: 75}},
			wantNotes: []string{"eBPF counter on tx0: 2 send units were larger than"},
		},
		{
			name: "ring beside it, its reader's CPU",
			taps: []tapResult{{Interface: "tx0", Units: units, TxPackets: 75, Ring: true,
				Result: capture.Result{Sizes: map[int]int64{1448: 55}, Seen: 60, ReaderCPU: 100 * time.Millisecond}}},
			wantNotes: []string{"capture on tx0: 60 packets, reader thread used 10.0% of a core"},
		},
		{
			name: "ring beside it, no interface counter: nothing to disagree with",
			taps: []tapResult{{Interface: "tx0", Units: units, Ring: true,
				Result: capture.Result{Sizes: map[int]int64{1448: 55}, Seen: 60}}},
			badNotes: []string{"the interface counted"},
		},
		{
			name:      "interface counted fewer packets than units were queued",
			taps:      []tapResult{{Interface: "tx0", Units: units, TxPackets: 12}},
			wantNotes: []string{"interface counted 12 transmitted packets, outside the 30..75"},
		},
		{
			name: "ring beside it drops: a note, not capture_loss",
			taps: []tapResult{{Interface: "tx0", Units: units, TxPackets: 75, Ring: true,
				Result: capture.Result{Sizes: map[int]int64{1448: 50}, Seen: 60, Dropped: 10}}},
			wantNotes: []string{"dropped 10 of 60 packets", "the eBPF counts are not affected"},
		},
		{
			name: "ring beside it disagrees on wire packets",
			taps: []tapResult{{Interface: "tx0", Units: units, TxPackets: 75, Ring: true,
				Result: capture.Result{Sizes: map[int]int64{1448: 40}, Seen: 60}}},
			wantNotes: []string{"the AF_PACKET ring saw 40 data packets cut to MSS, the eBPF counter 55"},
		},
		{
			name: "unread headers are the loss",
			taps: []tapResult{{Interface: "tx0", TxPackets: 75, Units: &devqueue.Result{
				SendUnits: 10, PayloadBytes: 14480, WireSegments: 10, SingleMSS: 10, Other: 20, Unread: 3, Histogram: []int64{10}}}},
			wantLoss:  3,
			wantNotes: []string{"could not read the headers of 3 packets"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := measurement{Kind: config.Stream, Duration: time.Second, Bytes: 1, MSS: 1448, Captured: true,
				TCP: [2]tcpTotals{{DataSegsOut: uint64(tt.taps[0].Units.WireSegments)}}, Taps: tt.taps}
			res := m.result()
			u := tt.taps[0].Units
			want := map[string]float64{
				result.MetricSendUnits:     float64(u.SendUnits),
				result.MetricAvgSendBytes:  float64(u.PayloadBytes) / float64(u.SendUnits),
				result.MetricDataPackets:   float64(u.WireSegments),
				result.MetricSingleMSSFrac: float64(u.SingleMSS) / float64(u.SendUnits),
				result.MetricCaptureLoss:   tt.wantLoss,
			}
			for name, w := range want {
				if got := res.Metrics[name]; got != w {
					t.Errorf("%s = %v, want %v", name, got, w)
				}
			}
			if diff := cmp.Diff(u.Histogram, res.SendUnitHistogram); diff != "" {
				t.Errorf("histogram (-want +got):\n%s", diff)
			}
			all := strings.Join(res.Notes, "\n")
			for _, w := range tt.wantNotes {
				if !strings.Contains(all, w) {
					t.Errorf("notes %q: want one holding %q", res.Notes, w)
				}
			}
			for _, b := range tt.badNotes {
				if strings.Contains(all, b) {
					t.Errorf("notes %q: want none holding %q", res.Notes, b)
				}
			}
		})
	}
}

func TestMeasurementBPFMissingSegmentsAreLoss(t *testing.T) {
	m := measurement{Kind: config.Stream, Duration: time.Second, Bytes: 1, MSS: 1448, Captured: true,
		TCP: [2]tcpTotals{{DataSegsOut: 1000}},
		Taps: []tapResult{{Interface: "tx0", TxPackets: 1000, Units: &devqueue.Result{
			SendUnits: 22, PayloadBytes: 990 * 1448, WireSegments: 990, Other: 10, Histogram: []int64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 22}}}},
	}
	res := m.result()
	if got := res.Metrics[result.MetricCaptureLoss]; got != 10 {
		t.Errorf("capture_loss = %v, want the 10 segments TCP_INFO counted and the counter did not", got)
	}
	if all := strings.Join(res.Notes, "\n"); !strings.Contains(all, "the 10 missing (1.00%) are capture_loss") {
		t.Errorf("notes %q: want the missing segments named", res.Notes)
	}
}

func TestMeasurementRingFallbackNamesWhy(t *testing.T) {
	m := measurement{Kind: config.Stream, Duration: time.Second, Bytes: 1, MSS: 1000, Captured: true,
		BPFErr: errors.New("kernel BTF: no such file"),
		Taps:   []tapResult{{Interface: "tx0", Ring: true, Result: capture.Result{Sizes: map[int]int64{1000: 10}, Seen: 10}, TxPackets: 10}},
	}
	res := m.result()
	if got := res.Metrics[result.MetricSendUnits]; got != 10 {
		t.Errorf("send_units = %v, want the ring's 10", got)
	}
	all := strings.Join(res.Notes, "\n")
	if !strings.Contains(all, "AF_PACKET ring on the sender NIC, after software GSO (the eBPF counter is unavailable: kernel BTF: no such file)") {
		t.Errorf("notes %q: want the fallback and its reason", res.Notes)
	}
}

// What the capture files lose is capture_loss too: the eBPF records a
// full ring buffer lost (sender and receiver) and a receiver's unread
// headers and ring drops; a sender ring that counts the units has its
// drops in capture_loss already.
func TestMeasurementFileLossIsCaptureLoss(t *testing.T) {
	bpfTx := tapResult{Interface: "tx0", File: "tx0.pcapng", FileBPF: true,
		Units: &devqueue.Result{SendUnits: 10, PayloadBytes: 10_000, WireSegments: 10, Histogram: []int64{10}, Recorded: 12, RecordedData: 9, RecordLost: 1}}
	ringTx := tapResult{Interface: "tx0", File: "tx0.pcapng", Ring: true,
		Result: capture.Result{Sizes: map[int]int64{1000: 10}, Seen: 13, Dropped: 3}}
	tests := []struct {
		name  string
		taps  []tapResult
		recv  tapResult
		want  float64
		notes []string // substrings, each in some note
	}{
		{"eBPF both ends", []tapResult{bpfTx}, tapResult{Interface: "rx0", Dir: capture.Incoming, File: "rx0.pcapng", FileBPF: true,
			Units: &devqueue.Result{Recorded: 20, RecordedData: 18, RecordLost: 4, Unread: 2}}, 1 + 4 + 2,
			[]string{"capture file tx0.pcapng: 12 packets of tx0 outgoing as TCP handed them to the device",
				"capture file rx0.pcapng: 20 packets of rx0 incoming as the receiving device handed them up"}},
		{"receiver's ring", []tapResult{bpfTx}, tapResult{Interface: "rx0", Dir: capture.Incoming, File: "rx0.pcapng", Ring: true,
			Result: capture.Result{Seen: 20, Dropped: 5}}, 1 + 5, nil},
		{"rings both ends", []tapResult{ringTx}, tapResult{Interface: "rx0", Dir: capture.Incoming, File: "rx0.pcapng", Ring: true,
			Result: capture.Result{Seen: 20, Dropped: 5}}, 3 + 5, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := measurement{Kind: config.Stream, Duration: time.Second, Bytes: 10_000, MSS: 1000, Captured: true,
				TCP: [2]tcpTotals{{DataSegsOut: 10}}, Taps: tt.taps, Recv: []tapResult{tt.recv}}
			res := m.result()
			if got := res.Metrics[result.MetricCaptureLoss]; got != tt.want {
				t.Errorf("capture_loss = %v, want %v; notes %q", got, tt.want, res.Notes)
			}
			all := strings.Join(res.Notes, "\n")
			for _, w := range tt.notes {
				if !strings.Contains(all, w) {
					t.Errorf("notes %q: want one holding %q", res.Notes, w)
				}
			}
		})
	}
}

func TestCounterStrings(t *testing.T) {
	for c := CounterAuto; c <= CounterBoth; c++ {
		got, err := ParseCounter(c.String())
		if err != nil || got != c {
			t.Errorf("ParseCounter(%q) = %v, %v; want %v", c.String(), got, err, c)
		}
	}
	if _, err := ParseCounter("pcap"); err == nil {
		t.Error("ParseCounter accepted an unknown counter")
	}
}

func TestMeasurementRR(t *testing.T) {
	var lat []time.Duration
	for i := 100; i >= 1; i-- {
		lat = append(lat, time.Duration(i)*time.Microsecond)
	}
	m := measurement{Kind: config.RR, Duration: 2 * time.Second, Bytes: 1000, Latencies: lat}
	res := m.result()
	for name, want := range map[string]float64{
		result.MetricTransactionsPerS: 50,
		result.MetricLatencyP50us:     50,
		result.MetricLatencyP99us:     99,
	} {
		if got := res.Metrics[name]; got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if len(res.Notes) == 0 || !strings.Contains(res.Notes[0], "capture disabled") {
		t.Errorf("notes %q: want the disabled capture named", res.Notes)
	}
}

func TestSplitSoftirq(t *testing.T) {
	tests := []struct {
		total          time.Duration
		txSegs, rxSegs uint64
		wantTx, wantRx time.Duration
	}{
		{0, 10, 10, 0, 0},
		{100, 0, 0, 50, 50},
		{100, 30, 10, 75, 25},
	}
	for _, tt := range tests {
		tx, rx := splitSoftirq(tt.total, tt.txSegs, tt.rxSegs)
		if tx != tt.wantTx || rx != tt.wantRx {
			t.Errorf("splitSoftirq(%v, %d, %d) = %v, %v; want %v, %v", tt.total, tt.txSegs, tt.rxSegs, tx, rx, tt.wantTx, tt.wantRx)
		}
	}
}

// What no thread ran is the machine's busy time less what processes ran,
// and never more than the busy time left after this process and the
// ksoftirqd threads: on a loaded machine the sum over /proc can lose a
// process's time, which once put 494% of a core on a sender.
func TestOutsideTasks(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := cpuSnapshot{Wall: t0, CPUs: 2, Idle: 10 * time.Second, Processes: 50 * time.Second, Softirqd: time.Second}
	tests := []struct {
		name                 string
		idle, procs, softirq time.Duration // at the second snapshot, one second on
		own                  time.Duration
		wantOutside          time.Duration
	}{
		{"half idle", 10*time.Second + time.Second, 50*time.Second + 700*time.Millisecond, time.Second, 500 * time.Millisecond, 300 * time.Millisecond},
		{"all accounted", 10 * time.Second, 52 * time.Second, time.Second, time.Second, 0},
		{"processes' time lost", 10 * time.Second, 50*time.Second + 100*time.Millisecond, time.Second + 200*time.Millisecond, 1500 * time.Millisecond, 300 * time.Millisecond},
		{"more than busy", 10*time.Second + 2*time.Second, 53 * time.Second, time.Second, time.Second, 0},
	}
	for _, tt := range tests {
		b := cpuSnapshot{Wall: t0.Add(time.Second), CPUs: 2, Idle: tt.idle, Processes: tt.procs, Softirqd: tt.softirq}
		outside, softirqd := outsideTasks(a, b, tt.own)
		if outside != tt.wantOutside || softirqd != tt.softirq-a.Softirqd {
			t.Errorf("%s: outsideTasks = %v, %v; want %v, %v", tt.name, outside, softirqd, tt.wantOutside, tt.softirq-a.Softirqd)
		}
	}
}

func TestParseProc(t *testing.T) {
	stat := "cpu  10 0 10 500 5 0 1 2 0 0\ncpu0 5 0 5 250 3 0 1 1 0 0\ncpu1 5 0 5 250 2 0 0 1 0 0\nintr 1 2\n"
	cpus, idle := parseProcStat(stat)
	if cpus != 2 || idle != 5070*time.Millisecond {
		t.Errorf("parseProcStat = %d CPUs, %v idle; want 2, 5.07s (idle+iowait+steal)", cpus, idle)
	}
	comm, ticks, ok := parsePidStat("12 (ksoftirqd/0) S 2 0 0 0 -1 69238848 0 0 0 0 7 11 3 4 20 0 1 0 9 0 0")
	if !ok || comm != "ksoftirqd/0" || ticks != 25 {
		t.Errorf("parsePidStat = %q, %d, %v; want ksoftirqd/0, 25, true", comm, ticks, ok)
	}
	if _, _, ok := parsePidStat("garbage"); ok {
		t.Error("parsePidStat accepted a line without a command")
	}
	if d, ok := parseSchedstat("123456 789 10\n"); !ok || d != 123456 {
		t.Errorf("parseSchedstat = %v, %v; want 123456ns", d, ok)
	}
}

func TestParseLoad(t *testing.T) {
	if got := parseLoadAvg("9.80 15.58 13.30 8/177 4345\n"); got != 9.8 {
		t.Errorf("parseLoadAvg = %v; want 9.8", got)
	}
	psi := "some avg10=92.49 avg60=91.08 avg300=88.93 total=1149338237\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	if got, ok := parseCPUPressure(psi); !ok || got != 92.49 {
		t.Errorf("parseCPUPressure = %v, %v; want 92.49, true", got, ok)
	}
	if _, ok := parseCPUPressure("full avg10=1.00\n"); ok {
		t.Error("parseCPUPressure read a file without a some line")
	}
}

// TestMachineLoad: the load and pressure at each end, and the other
// processes' CPU time (every process's less this one's) in % of one
// core; no pressure when either end lacks it, never below zero.
func TestMachineLoad(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := cpuSnapshot{Wall: t0, Processes: 50 * time.Second, LoadAvg: 5.5, CPUPressure: 40, PressureOK: true}
	b := cpuSnapshot{Wall: t0.Add(2 * time.Second), Processes: 53 * time.Second, LoadAvg: 6.25, CPUPressure: 60, PressureOK: true}
	start, end := 40.0, 60.0
	want := result.Load{LoadStart: 5.5, LoadEnd: 6.25, CPUPressureStart: &start, CPUPressureEnd: &end, OtherCPUPct: 100}
	if diff := cmp.Diff(want, machineLoad(a, b, time.Second)); diff != "" {
		t.Errorf("machineLoad (-want +got):\n%s", diff)
	}
	b.PressureOK = false
	got := machineLoad(a, b, 4*time.Second)
	if got.CPUPressureStart != nil || got.CPUPressureEnd != nil || got.OtherCPUPct != 0 {
		t.Errorf("machineLoad without pressure at the end, own time above the sum = %+v; want no pressure, other_cpu_pct 0", got)
	}
}

func TestPercentile(t *testing.T) {
	d := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tt := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5}, {0.99, 10}, {0.1, 1}, {0, 1}} {
		if got := percentile(d, tt.q); got != tt.want {
			t.Errorf("percentile(1..10, %v) = %v, want %v", tt.q, got, tt.want)
		}
	}
	if got := percentile(nil, 0.5); got != 0 {
		t.Errorf("percentile(empty) = %v, want 0", got)
	}
}

// The stall timeout grows for labs so slow that ten 64 KB units take
// longer than the default.
func TestDefaultStall(t *testing.T) {
	tests := []struct {
		name    string
		nicRate config.Rate
		pacing  config.Rate
		want    time.Duration
	}{
		{"no shaping", 0, 0, DefaultStallTimeout},
		{"1 Gb/s", 1e9, 0, DefaultStallTimeout},
		{"256 kbit/s link", 256e3, 0, 20480 * time.Millisecond},
		{"paced at 128 kbit/s on a fast link", 1e9, 128e3, 40960 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &execution{
				w:   &config.Workload{Rate: tt.pacing},
				req: engine.RunRequest{Scenario: &config.Scenario{NICs: []*config.NIC{{Name: "tx0", Rate: tt.nicRate}, {Name: "rx0"}}}},
			}
			if got := r.defaultStall(); got != tt.want {
				t.Errorf("defaultStall() = %v, want %v", got, tt.want)
			}
		})
	}
}

// The CPU note names what each metric holds and what the process's
// other threads used beside the workers.
func TestCPUNote(t *testing.T) {
	m := measurement{
		Kind:       config.Stream,
		Duration:   2 * time.Second,
		CPUThreads: [2]time.Duration{time.Second, 500 * time.Millisecond},
		Process:    1800 * time.Millisecond,
		Outside:    200 * time.Millisecond,
		TCP:        [2]tcpTotals{{SegsIn: 100, SegsOut: 300}, {SegsIn: 300, SegsOut: 100}},
	}
	want := "CPU in % of one core: sender threads 50.0, receiver threads 25.0, the process's other threads 15.0 (Go runtime, sampler, capture readers; in neither cpu_tx_pct nor cpu_rx_pct), softirq outside the workers' threads 10.0 (5.0 in cpu_tx_pct, 5.0 in cpu_rx_pct, split by segments)"
	if got := m.cpuNote(); got != want {
		t.Errorf("cpuNote() =\n%s\nwant\n%s", got, want)
	}
	res := m.result()
	if got := res.Metrics[result.MetricCPUTxPct]; math.Abs(got-55) > 1e-9 {
		t.Errorf("cpu_tx_pct = %v, want 55 (the sender threads and half the softirq)", got)
	}
}

// holdProcs raises GOMAXPROCS while any run holds it and puts the value
// from before the first back after the last.
func TestHoldProcs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	first := holdProcs(before + 3)
	second := holdProcs(before + 1)
	if got := runtime.GOMAXPROCS(0); got != before+3 {
		t.Fatalf("GOMAXPROCS with two runs holding = %d, want %d", got, before+3)
	}
	first()
	if got := runtime.GOMAXPROCS(0); got != before+3 {
		t.Errorf("GOMAXPROCS with one run still holding = %d, want %d", got, before+3)
	}
	second()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS after the last run = %d, want %d as before", got, before)
	}
}

// A worker passes when passEvery has gone by since its last pass, and
// only then: the first call passes (no pass yet), the next does not, one
// after the due time does and plans the next a passEvery later.
func TestYielderPassesWhenDue(t *testing.T) {
	runtime.LockOSThread() // as spawn's workers are
	defer runtime.UnlockOSThread()
	y := yielder{meter: new(cpuMeter)}
	before := time.Now()
	y.after()
	if y.due.Before(before.Add(passEvery)) || y.due.After(time.Now().Add(passEvery)) {
		t.Fatalf("due after the first pass = %v, want about %v from then", y.due.Sub(before), passEvery)
	}
	due := y.due
	y.after()
	if !y.due.Equal(due) {
		t.Fatalf("a call before the due time passed (due moved from %v to %v)", due, y.due)
	}
	y.due = time.Now().Add(-time.Nanosecond)
	before = time.Now()
	y.after()
	if y.due.Before(before.Add(passEvery)) {
		t.Fatalf("a call after the due time did not pass (due %v)", y.due)
	}
}

// A worker waiting on an idle socket returns by its due pass and passes
// (no call blocks past a pass, so sysmon never finds it in a system call
// for 10 ms); one whose socket is ready returns at once without passing.
func TestYielderWaitBounded(t *testing.T) {
	fds := socketPair(t)
	done := make(chan error, 1)
	y := yielder{meter: new(cpuMeter)}
	y.due = time.Now().Add(20 * time.Millisecond)
	due := y.due
	go func() {
		runtime.LockOSThread() // as spawn's workers are
		defer runtime.UnlockOSThread()
		for y.due.Equal(due) { // a signal may end a poll early
			if err := y.wait(fds[0], unix.POLLIN); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("wait on an idle socket did not return by its due pass")
	}
	if time.Now().Before(due) {
		t.Errorf("passed before the due time")
	}
	if _, err := unix.Write(fds[1], []byte{1}); err != nil {
		t.Fatal(err)
	}
	y.due = time.Now().Add(time.Hour)
	due = y.due
	go func() { done <- y.wait(fds[0], unix.POLLIN) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("wait on a readable socket did not return")
	}
	if !y.due.Equal(due) {
		t.Errorf("wait on a readable socket passed before the due time")
	}
}

// TestYielderPass checks what a worker relies on across its passes
// through the scheduler: it comes back from each on its own thread and
// stays locked to it (a Gosched then brings it back on the same thread,
// though spinning goroutines keep every P busy), and its meter sums the
// CPU of the stretches between passes.
func TestYielderPass(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	for range runtime.GOMAXPROCS(0) + 1 {
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	const passes, stretch = 10, time.Millisecond
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var m cpuMeter
		y := yielder{meter: &m}
		p0 := processCPU()
		m.start()
		for range passes {
			// A stretch of work: stretch of this thread's CPU.
			for c0 := threadCPU(); threadCPU()-c0 < stretch; {
			}
			tid := unix.Gettid()
			y.pass()
			if got := unix.Gettid(); got != tid {
				errc <- fmt.Errorf("a pass moved the worker from thread %d to %d: passes are made locked (yielder)", tid, got)
				return
			}
			for range 3 {
				runtime.Gosched()
				if got := unix.Gettid(); got != tid {
					errc <- fmt.Errorf("after a pass a Gosched moved the worker from thread %d to %d: it is not locked", tid, got)
					return
				}
			}
		}
		m.stop()
		used, all := m.used, processCPU()-p0
		if used < passes*stretch || used > all {
			errc <- fmt.Errorf("meter: got %v, want at least the stretches' %v and at most the process's %v", used, passes*stretch, all)
			return
		}
		errc <- nil
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// A sender meets a full send buffer as iperf3's client does: it calls
// again at once, and waits for room (which here never comes: no reader)
// only on its fullTries-th refused call since its last whole one; a call
// cut short does not count.
func TestYielderFullRetriesBeforeWaiting(t *testing.T) {
	fds := socketPair(t)
	if err := unix.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	for chunk := make([]byte, 4096); ; {
		if _, err := unix.Write(fds[0], chunk); errors.Is(err, unix.EAGAIN) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	runtime.LockOSThread() // as spawn's workers are
	defer runtime.UnlockOSThread()
	y := yielder{meter: new(cpuMeter), due: time.Now().Add(30 * time.Millisecond)}
	due := y.due
	for i := range fullTries - 1 {
		if err := y.full(fds[0], false); err != nil {
			t.Fatal(err)
		}
		if err := y.full(fds[0], true); err != nil {
			t.Fatal(err)
		}
		if !y.due.Equal(due) {
			t.Fatalf("refused call %d of %d waited (passed: due moved)", i+1, fullTries)
		}
	}
	if err := y.full(fds[0], false); err != nil {
		t.Fatal(err)
	}
	if y.due.Equal(due) || y.refused != 0 {
		t.Fatalf("refused call %d: got due unchanged %v, refused %d; want a wait until the due pass and the count reset", fullTries, y.due.Equal(due), y.refused)
	}
}

// socketPair is a connected pair of Unix stream sockets, closed when the
// test ends.
func socketPair(t *testing.T) [2]int {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		unix.Close(fds[0])
		unix.Close(fds[1])
	})
	return fds
}
