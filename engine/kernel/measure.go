package kernel

import (
	"fmt"
	"math"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/engine/kernel/capture"
)

// tcpTotals sums the TCP_INFO counters of one side's sockets.
type tcpTotals struct {
	Sockets     int
	SegsIn      uint64 // tcpi_segs_in
	SegsOut     uint64 // tcpi_segs_out
	DataSegsOut uint64 // tcpi_data_segs_out
	Retrans     uint64 // tcpi_total_retrans
}

func (t *tcpTotals) add(i *unix.TCPInfo) {
	t.Sockets++
	t.SegsIn += uint64(i.Segs_in)
	t.SegsOut += uint64(i.Segs_out)
	t.DataSegsOut += uint64(i.Data_segs_out)
	t.Retrans += uint64(i.Total_retrans)
}

// tapResult is one capture with the interface's tx_packets delta.
type tapResult struct {
	Interface string
	Result    capture.Result
	TxPackets uint64
}

// measurement is everything a run measured, before it becomes metrics.
type measurement struct {
	Kind       config.WorkloadKind
	Duration   time.Duration // wall time from the start to the last worker's end
	Bytes      int64         // payload received, both directions for rr
	MSS        int           // tcpi_snd_mss of the client
	Captured   bool          // captures ran
	CPUThreads [2]time.Duration
	// Outside is CPU time no thread ran (interrupts and softirqs on idle
	// CPUs); Softirqd the runtime of the ksoftirqd threads. Both are
	// split between the sides by the segments each sent and received.
	Outside, Softirqd time.Duration
	TCP               [2]tcpTotals // by side
	Latencies         []time.Duration
	Taps              []tapResult
}

// tolerance is how far two counts of the same packets may differ before a
// Note says so.
const tolerance = 0.02

// result turns a measurement into metrics, histogram and notes.
func (m measurement) result() *engine.WorkloadResult {
	res := &engine.WorkloadResult{
		Kind:    string(m.Kind),
		MSS:     m.MSS,
		Metrics: map[string]float64{},
	}
	for _, name := range engine.MetricNames() {
		res.Metrics[name] = 0
	}
	secs := m.Duration.Seconds()
	met := res.Metrics
	met[engine.MetricBytes] = float64(m.Bytes)
	met[engine.MetricDurationS] = secs
	if secs > 0 {
		met[engine.MetricThroughputBps] = float64(m.Bytes) * 8 / secs
	}

	if m.Kind == config.RR {
		lat := append([]time.Duration(nil), m.Latencies...)
		sortDurations(lat)
		if secs > 0 {
			met[engine.MetricTransactionsPerS] = float64(len(lat)) / secs
		}
		met[engine.MetricLatencyP50us] = float64(percentile(lat, 0.50)) / float64(time.Microsecond)
		met[engine.MetricLatencyP99us] = float64(percentile(lat, 0.99)) / float64(time.Microsecond)
	}

	softTx, softRx := splitSoftirq(m.Outside+m.Softirqd,
		m.TCP[sideTx].SegsIn+m.TCP[sideTx].SegsOut, m.TCP[sideRx].SegsIn+m.TCP[sideRx].SegsOut)
	if secs > 0 {
		met[engine.MetricCPUTxPct] = (m.CPUThreads[sideTx] + softTx).Seconds() / secs * 100
		met[engine.MetricCPURxPct] = (m.CPUThreads[sideRx] + softRx).Seconds() / secs * 100
	}
	if gbps := met[engine.MetricThroughputBps] / 1e9; gbps > 0 {
		met[engine.MetricCPUTxPerGbit] = met[engine.MetricCPUTxPct] / gbps
	}
	met[engine.MetricRetransmits] = float64(m.TCP[sideTx].Retrans + m.TCP[sideRx].Retrans)

	if !m.Captured {
		res.Notes = append(res.Notes, "capture disabled: send_units, avg_send_bytes, data_packets and single_mss_fraction were not measured (0)")
		return res
	}
	sizes := map[int]int64{}
	var seen, dropped int64
	for _, t := range m.Taps {
		for p, n := range t.Result.Sizes {
			sizes[p] += n
		}
		seen += t.Result.Seen
		dropped += t.Result.Dropped
		if t.Result.Dropped > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("capture on %s dropped %d of %d packets (%.2f%%): send-unit counts are low by that much",
				t.Interface, t.Result.Dropped, t.Result.Seen, 100*float64(t.Result.Dropped)/float64(max(t.Result.Seen, 1))))
		}
		if secs > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("capture on %s: %d packets, reader thread used %.1f%% of a core (not counted in cpu_tx_pct)",
				t.Interface, t.Result.Seen, t.Result.ReaderCPU.Seconds()/secs*100))
		}
		captured := t.Result.Seen - t.Result.Dropped
		if t.TxPackets > 0 && disagree(float64(captured), float64(t.TxPackets)) {
			res.Notes = append(res.Notes, fmt.Sprintf("capture on %s saw %d outgoing TCP packets, the interface counted %d transmitted packets (other traffic, or a driver that counts segments)",
				t.Interface, captured, t.TxPackets))
		}
	}
	met[engine.MetricCaptureLoss] = float64(dropped)
	if m.MSS <= 0 {
		return res
	}
	s := capture.Summarize(sizes, m.MSS)
	met[engine.MetricSendUnits] = float64(s.SendUnits)
	met[engine.MetricAvgSendBytes] = s.AvgSendBytes
	met[engine.MetricDataPackets] = float64(s.DataPackets)
	met[engine.MetricSingleMSSFrac] = s.SingleMSSFraction
	res.SendUnitHistogram = s.Histogram

	// The send units are the client's data (for rr: the requests), which
	// is what the client sockets' tcpi_data_segs_out counts.
	tcpData := m.TCP[sideTx].DataSegsOut
	if dropped == 0 && disagree(float64(s.DataPackets), float64(tcpData)) {
		res.Notes = append(res.Notes, fmt.Sprintf("capture counted %d data packets, TCP_INFO tcpi_data_segs_out says %d (segments cut to a smaller MSS than the first connection's %d?)",
			s.DataPackets, tcpData, m.MSS))
	}
	return res
}

// disagree reports whether a and b differ by more than tolerance.
func disagree(a, b float64) bool {
	if a == b {
		return false
	}
	return math.Abs(a-b) > tolerance*math.Max(math.Abs(a), math.Abs(b))
}
