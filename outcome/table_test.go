package outcome

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// tableFixture is seed 001's first table as four scenarios of workload
// bulk, a tbench rr workload at MTU 1500, and three expectations: TSO cuts
// sender CPU per Gb/s (passes), TSO keeps single-MSS sends rare (fails at
// TSO off), tbench is not slower with TSO (seed 004: it is), its latency
// is lower with TSO (noise: inconclusive with repeats), and one that names
// an axis the lab does not have (an error).
func tableFixture(t *testing.T, reps int) (*config.Lab, *result.Results, []Verdict) {
	t.Helper()
	lab := testLab()
	addExpect(t, lab, "tso_cuts_cpu", "bulk", "matrix.tso",
		"result.cpu_tx_per_gbit < scenario({tso = false}).cpu_tx_per_gbit")
	addExpect(t, lab, "few_single_mss", "bulk", "", "result.single_mss_fraction <= 0.1")
	addExpect(t, lab, "tbench_not_slower", "tbench", "matrix.tso && matrix.mtu == 1500",
		"result.transactions_per_s >= scenario({tso = false}).transactions_per_s")
	addExpect(t, lab, "tbench_latency", "tbench", "matrix.tso && matrix.mtu == 1500",
		"result.latency_p50_us < scenario({tso = false}).latency_p50_us")
	addExpect(t, lab, "gro_helps", "bulk", "matrix.tso && matrix.mtu == 9000",
		"result.cpu_rx_pct < scenario({gro = false}).cpu_rx_pct")
	lab.Expects[1].Message = "Most send units should carry more than one MSS"

	type cell struct {
		scenario    string
		gbps, cpu   float64
		cpuRx       float64
		avgSend     float64
		singleMSS   float64
		retransmits float64
	}
	bulk := []cell{
		{"tso=true,mtu=1500", 4.0, 47, 61, 43440, 0.02, 0},
		{"tso=true,mtu=9000", 6.1, 35, 44, 62640, 0, 3},
		{"tso=false,mtu=1500", 2.5, 55, 58, 1448, 1, 12},
		{"tso=false,mtu=9000", 5.3, 40, 41, 8948, 1, 0},
	}
	var rs [][]result.WorkloadResult
	for _, c := range bulk {
		var set []result.WorkloadResult
		for i := 0; i < reps; i++ {
			jitter := 1 + 0.01*[]float64{0, 1, -1}[i%3] // 0, +1%, -1%
			m := allMetrics(map[string]float64{
				result.MetricThroughputBps: c.gbps * 1e9 * jitter,
				result.MetricCPUTxPct:      c.cpu * jitter,
				result.MetricCPURxPct:      c.cpuRx,
				result.MetricCPUTxPerGbit:  c.cpu / c.gbps * jitter,
				result.MetricAvgSendBytes:  c.avgSend,
				result.MetricSingleMSSFrac: c.singleMSS,
				result.MetricRetransmits:   c.retransmits,
			})
			set = append(set, runs(c.scenario, "bulk", m, result.MetricBytes, 1e9)[0])
			set[i].Repetition = i
		}
		rs = append(rs, set)
	}
	for _, sc := range []struct {
		name      string
		tps, p50  float64
		p99, gbps float64
	}{
		{"tso=true,mtu=1500", 35420, 220, 910, 0.35},
		{"tso=false,mtu=1500", 36140, 215, 870, 0.36},
	} {
		var set []result.WorkloadResult
		for i := 0; i < reps; i++ {
			m := allMetrics(map[string]float64{
				result.MetricThroughputBps:    sc.gbps * 1e9,
				result.MetricCPUTxPct:         98,
				result.MetricCPURxPct:         97,
				result.MetricAvgSendBytes:     2048,
				result.MetricLatencyP50us:     sc.p50 + 10*[]float64{0, 1, -1}[i%3],
				result.MetricLatencyP99us:     sc.p99,
				result.MetricSingleMSSFrac:    0.1,
				result.MetricTransactionsPerS: sc.tps + 100*[]float64{0, 1, -1}[i%3],
			})
			set = append(set, runs(sc.name, "tbench", m, result.MetricBytes, 1e8)[0])
			set[i].Repetition = i
		}
		rs = append(rs, set)
	}
	res := results(rs...)
	verdicts, diags := Evaluate(lab, res, nil)
	checkDiags(t, diags, []string{`"gro" is not a matrix axis`})
	return lab, res, verdicts
}

func TestWriteTable(t *testing.T) {
	for _, tt := range []struct {
		golden string
		reps   int
	}{
		{"table_1run.golden", 1},
		{"table_6runs.golden", 6},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			lab, res, verdicts := tableFixture(t, tt.reps)
			var buf bytes.Buffer
			if err := WriteTable(&buf, lab, res, verdicts); err != nil {
				t.Fatalf("WriteTable: %v", err)
			}
			path := filepath.Join("testdata", tt.golden)
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			if diff := cmp.Diff(string(want), buf.String()); diff != "" {
				t.Errorf("table (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFormatNumber(t *testing.T) {
	for _, tt := range []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{47, "47"},
		{11.75, "11.75"},
		{1.0 / 3, "0.3333"},
		{0.02, "0.02"},
		{35320, "35320"},
		{999999, "999999"},
		{6.1e9, "6.1e9"},
		{3.325e9, "3.325e9"},
		{3.3256e9, "3.326e9"},
		{1e-7, "1e-7"},
		{-2.5e12, "-2.5e12"},
		{math.Inf(1), "+Inf"},
	} {
		if got := formatNumber(tt.in); got != tt.want {
			t.Errorf("formatNumber(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestWriteTableReportsWriteErrors(t *testing.T) {
	lab, res, verdicts := tableFixture(t, 1)
	if err := WriteTable(failingWriter{}, lab, res, verdicts); err != os.ErrClosed {
		t.Errorf("WriteTable to a failing writer = %v, want %v", err, os.ErrClosed)
	}
}

func TestInMSS(t *testing.T) {
	tests := []struct {
		bytes float64
		mss   int
		want  string
	}{
		{35841, 1448, "24.8 MSS"},
		{1448, 1448, "1.0 MSS"},
		{256, 65483, "< 1 MSS of 65483 B"}, // an rr request on loopback, not "0.0 MSS"
		{1000, 1448, "< 1 MSS of 1448 B"},
		{0, 1448, "0.0 MSS"},
	}
	for _, tt := range tests {
		if got := inMSS(tt.bytes, tt.mss); got != tt.want {
			t.Errorf("inMSS(%v, %d) = %q, want %q", tt.bytes, tt.mss, got, tt.want)
		}
	}
}
