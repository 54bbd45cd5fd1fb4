package sim

import (
	"math"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
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
		if m[engine.MetricRetransmits] != 0 || m[engine.MetricBytes] != 2000*mss {
			t.Fatalf("retransmits %v, bytes %v: the run should deliver %d bytes without loss", m[engine.MetricRetransmits], m[engine.MetricBytes], 2000*mss)
		}
		// Every payload byte went in exactly one send unit.
		if got := m[engine.MetricAvgSendBytes] * m[engine.MetricSendUnits]; !near(got, 2000*mss) {
			t.Errorf("avg_send_bytes %v x send_units %v = %v, want the %d bytes sent", m[engine.MetricAvgSendBytes], m[engine.MetricSendUnits], got, 2000*mss)
		}
		// Every byte in whole MSS segments: data_packets is bytes / MSS.
		if m[engine.MetricDataPackets] != 2000 || m[engine.MetricSendUnits] >= 2000 {
			t.Errorf("data_packets %v, send_units %v: want 2000 segments in fewer TSO units", m[engine.MetricDataPackets], m[engine.MetricSendUnits])
		}
		if got := m[engine.MetricCPUTxPerGbit] * m[engine.MetricThroughputBps] / 1e9; !near(got, m[engine.MetricCPUTxPct]) {
			t.Errorf("cpu_tx_per_gbit %v x Gb/s %v = %v, want cpu_tx_pct %v", m[engine.MetricCPUTxPerGbit], m[engine.MetricThroughputBps]/1e9, got, m[engine.MetricCPUTxPct])
		}
		if got := m[engine.MetricBytes] * 8 / m[engine.MetricDurationS]; !near(got, m[engine.MetricThroughputBps]) {
			t.Errorf("bytes x 8 / duration = %v, throughput_bps %v", got, m[engine.MetricThroughputBps])
		}
	})

	t.Run("without TSO every unit is one full segment", func(t *testing.T) {
		p := pair{stack: "linux-2.6.27", mtu: 1500, rate: 1e9, delay: 50 * time.Microsecond, offTx: noTSO, offRx: noTSO,
			wl: config.Workload{Bytes: 1000 * mss, WriteSize: 10 * mss}}
		m := runScenario(t, New(Options{}), p.scenario()).Metrics
		if m[engine.MetricSendUnits] != 1000 || m[engine.MetricDataPackets] != 1000 || m[engine.MetricRetransmits] != 0 {
			t.Fatalf("send_units %v, data_packets %v, retransmits %v: want 1000 one-segment units without loss",
				m[engine.MetricSendUnits], m[engine.MetricDataPackets], m[engine.MetricRetransmits])
		}
		if m[engine.MetricSingleMSSFrac] != 1 || m[engine.MetricAvgSendBytes] != mss {
			t.Errorf("single_mss_fraction %v, avg_send_bytes %v: want 1 and %d", m[engine.MetricSingleMSSFrac], m[engine.MetricAvgSendBytes], mss)
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
		if got := r.Metrics[engine.MetricCwndMeanSegments]; len(r.Series) == 0 || math.Abs(got/avg-1) > 0.01 {
			t.Errorf("cwnd_mean_segments %v, the %d samples average %v: want the same within 1%%", got, len(r.Series), avg)
		}
	})
}
