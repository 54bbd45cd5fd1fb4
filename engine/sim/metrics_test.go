package sim

import (
	"math"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

// TestMetricDefinitions checks each derived metric against what it is
// defined from, on runs where that is known: a metric computed off by a
// factor fails here even when every comparison between scenarios, which
// would scale both sides, still holds.
func TestMetricDefinitions(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
	tso := offloads(map[config.Offload]bool{config.TSO: true, config.SG: true, config.TxCsum: true})
	noTSO := offloads(map[config.Offload]bool{config.TSO: false, config.GSO: false, config.SG: true, config.TxCsum: true})
	const mss = 1448

	t.Run("a TSO stream of whole segments", func(t *testing.T) {
		p := pair{stack: "linux-2.6.27", mtu: 1500, rate: 1e9, delay: 50 * time.Microsecond, offTx: tso, offRx: tso,
			wl: config.Workload{Bytes: 2000 * mss, WriteSize: 64 * mss}}
		m := runScenario(t, New(Options{}), p.scenario()).Metrics
		if m[result.MetricRetransmits] != 0 || m[result.MetricBytes] != 2000*mss {
			t.Fatalf("retransmits %v, bytes %v: the run should deliver %d bytes without loss", m[result.MetricRetransmits], m[result.MetricBytes], 2000*mss)
		}
		// Every payload byte went in exactly one send unit.
		if got := m[result.MetricAvgSendBytes] * m[result.MetricSendUnits]; !near(got, 2000*mss) {
			t.Errorf("avg_send_bytes %v x send_units %v = %v, want the %d bytes sent", m[result.MetricAvgSendBytes], m[result.MetricSendUnits], got, 2000*mss)
		}
		// Every byte in whole MSS segments: data_packets is bytes / MSS.
		if m[result.MetricDataPackets] != 2000 || m[result.MetricSendUnits] >= 2000 {
			t.Errorf("data_packets %v, send_units %v: want 2000 segments in fewer TSO units", m[result.MetricDataPackets], m[result.MetricSendUnits])
		}
		if got := m[result.MetricCPUTxPerGbit] * m[result.MetricThroughputBps] / 1e9; !near(got, m[result.MetricCPUTxPct]) {
			t.Errorf("cpu_tx_per_gbit %v x Gb/s %v = %v, want cpu_tx_pct %v", m[result.MetricCPUTxPerGbit], m[result.MetricThroughputBps]/1e9, got, m[result.MetricCPUTxPct])
		}
		if got := m[result.MetricBytes] * 8 / m[result.MetricDurationS]; !near(got, m[result.MetricThroughputBps]) {
			t.Errorf("bytes x 8 / duration = %v, throughput_bps %v", got, m[result.MetricThroughputBps])
		}
	})

	t.Run("without TSO every unit is one full segment", func(t *testing.T) {
		p := pair{stack: "linux-2.6.27", mtu: 1500, rate: 1e9, delay: 50 * time.Microsecond, offTx: noTSO, offRx: noTSO,
			wl: config.Workload{Bytes: 1000 * mss, WriteSize: 10 * mss}}
		m := runScenario(t, New(Options{}), p.scenario()).Metrics
		if m[result.MetricSendUnits] != 1000 || m[result.MetricDataPackets] != 1000 || m[result.MetricRetransmits] != 0 {
			t.Fatalf("send_units %v, data_packets %v, retransmits %v: want 1000 one-segment units without loss",
				m[result.MetricSendUnits], m[result.MetricDataPackets], m[result.MetricRetransmits])
		}
		if m[result.MetricSingleMSSFrac] != 1 || m[result.MetricAvgSendBytes] != mss {
			t.Errorf("single_mss_fraction %v, avg_send_bytes %v: want 1 and %d", m[result.MetricSingleMSSFrac], m[result.MetricAvgSendBytes], mss)
		}
	})

	t.Run("the mean cwnd of a flow that holds it", func(t *testing.T) {
		// 2.6.12's 1000-byte writes hold the cwnd at one value from the
		// first 100 ms sample on (examples/super-tso-patches).
		r := runEdited(t, patchLab("linux-2.6.12", true, patchSmallWrites), nil)
		var sum float64
		for _, s := range r.Series {
			sum += s.CwndSegments
		}
		avg := sum / float64(len(r.Series))
		if got := r.Metrics[result.MetricCwndMeanSegments]; len(r.Series) == 0 || math.Abs(got/avg-1) > 0.01 {
			t.Errorf("cwnd_mean_segments %v, the %d samples average %v: want the same within 1%%", got, len(r.Series), avg)
		}
	})
}
