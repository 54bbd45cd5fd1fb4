package result

import (
	"slices"
	"sort"
)

// Metric names: every workload result carries each metric its engine
// reports (one meaningful only for some kinds, as rr's latency, is 0 for
// the others). Both engines give each shared metric the same meaning.
const (
	MetricThroughputBps    = "throughput_bps"
	MetricBytes            = "bytes"
	MetricDurationS        = "duration_s"
	MetricTransactionsPerS = "transactions_per_s"
	MetricLatencyP50us     = "latency_p50_us"
	MetricLatencyP99us     = "latency_p99_us"
	MetricCPUTxPct         = "cpu_tx_pct"
	MetricCPURxPct         = "cpu_rx_pct"
	MetricCPUTxPerGbit     = "cpu_tx_per_gbit"
	MetricCPUPerGbit       = "cpu_per_gbit"
	MetricSendUnits        = "send_units"
	MetricAvgSendBytes     = "avg_send_bytes"
	MetricDataPackets      = "data_packets"
	MetricSingleMSSFrac    = "single_mss_fraction"
	MetricRetransmits      = "retransmits"
	MetricCaptureLoss      = "capture_loss"
	MetricCwndMeanSegments = "cwnd_mean_segments"
)

// Workload kinds and engines, as the table names them (config's
// WorkloadKind and EngineKind values).
const (
	KindStream   = "stream"
	KindRR       = "rr"
	KindSendfile = "sendfile"

	EngineKernel = "kernel"
	EngineSim    = "sim"
)

// Metric is one row of the metric table.
type Metric struct {
	Name string
	// Unit is the unit of the value in a results file.
	Unit string
	// Label and Display name the metric and its unit in tables and
	// charts, which show the value times Scale with Decimals digits after
	// the point. An engine's own counter has no Label: it is shown by its
	// name.
	Label    string
	Display  string
	Scale    float64
	Decimals int
	// Kinds are the workload kinds it means something for; Engines the
	// engines that report it.
	Kinds   []string
	Engines []string
	// Chart is its place among the report's per-metric charts (1 first),
	// 0 for none.
	Chart       int
	Description string
}

var (
	allKinds   = []string{KindStream, KindRR, KindSendfile}
	rrOnly     = []string{KindRR}
	bothEngine = []string{EngineKernel, EngineSim}
	simOnly    = []string{EngineSim}
)

// table is every metric, in display order: the ones both engines report,
// then the model's own.
var table = append([]Metric{
	{MetricThroughputBps, "bit/s", "Throughput", "Gb/s", 1e-9, 2, allKinds, bothEngine, 1,
		"application payload bits per second received"},
	{MetricBytes, "bytes", "Payload moved", "MB", 1e-6, 1, allKinds, bothEngine, 14,
		"payload bytes moved"},
	{MetricDurationS, "s", "Duration", "s", 1, 2, allKinds, bothEngine, 15,
		"seconds taken"},
	{MetricTransactionsPerS, "1/s", "Transactions", "per s", 1, 0, rrOnly, bothEngine, 5,
		"completed transactions per second"},
	{MetricLatencyP50us, "µs", "Latency p50", "µs", 1, 0, rrOnly, bothEngine, 6,
		"median transaction latency"},
	{MetricLatencyP99us, "µs", "Latency p99", "µs", 1, 0, rrOnly, bothEngine, 7,
		"99th percentile of the transaction latency"},
	{MetricCPUTxPct, "% of one core", "Sender CPU", "% of a core", 1, 1, allKinds, bothEngine, 2,
		"sender CPU, softirq included"},
	{MetricCPURxPct, "% of one core", "Receiver CPU", "% of a core", 1, 1, allKinds, bothEngine, 3,
		"receiver CPU, softirq included"},
	{MetricCPUTxPerGbit, "% of one core per Gb/s", "Sender CPU per Gb/s", "% per Gb/s", 1, 1, allKinds, bothEngine, 4,
		"cpu_tx_pct per Gb/s carried (derived)"},
	{MetricCPUPerGbit, "% of one core per Gb/s", "CPU per Gb/s, both ends", "% per Gb/s", 1, 1, allKinds, bothEngine, 0,
		"cpu_tx_pct + cpu_rx_pct per Gb/s carried: the whole path's cost where both ends share the cores (derived)"},
	{MetricSendUnits, "count", "Send units", "count", 1, 0, allKinds, bothEngine, 10,
		"TCP data packets handed to the NIC (a TSO/GSO super-packet counts once)"},
	{MetricAvgSendBytes, "bytes", "Average send unit", "bytes", 1, 0, allKinds, bothEngine, 8,
		"mean payload of a send unit (derived)"},
	{MetricDataPackets, "count", "Data packets", "count", 1, 0, allKinds, bothEngine, 11,
		"data segments on the wire (send units cut to MSS)"},
	{MetricSingleMSSFrac, "fraction (0 to 1)", "Single-MSS send units", "%", 100, 1, allKinds, bothEngine, 9,
		"share of send units whose payload is exactly one MSS (derived)"},
	{MetricRetransmits, "count", "Retransmits", "count", 1, 0, allKinds, bothEngine, 12,
		"retransmitted segments"},
	{MetricCaptureLoss, "packets", "Capture loss", "packets", 1, 0, allKinds, bothEngine, 13,
		"packets the capture missed (the model's is 0)"},
}, modelMetrics()...)

// AckKinds are the kinds of ACK the model counts, each the metric
// acks_KIND and the key of WorkloadResult.Acks.
var AckKinds = [...]string{"quick", "delayed", "timer", "dup", "window_update", "piggyback"}

// ackMeanings describes AckKinds, in their order.
var ackMeanings = [len(AckKinds)]string{
	"pure ACKs sent in quickack mode, one per segment",
	"pure ACKs of the delayed-ACK policy's second full segment",
	"pure ACKs sent when the delayed-ACK timer fired",
	"immediate duplicate ACKs for out-of-order or duplicate data",
	"pure ACKs sent after the application read: one the input path left to the read, or a window that opened a lot",
	"pending ACKs carried by a data segment",
}

// StopReasons are why the model's sender stopped an output pass with data
// unsent, the keys of WorkloadResult.StopReasons: the congestion window,
// the receive window, Nagle, TSO deferral, a send cut to fit the windows,
// the send buffer, pacing, TCP Small Queues, autocorking (tcp_push held
// a small tail for the TSQ handler).
var StopReasons = [...]string{"cwnd", "rwnd", "nagle", "defer", "split", "sndbuf", "pacing", "tsq", "autocork"}

// MetricAcks is the metric counting ACKs of kind (one of AckKinds).
func MetricAcks(kind string) string { return "acks_" + kind }

// modelMetrics are the metrics only the model reports.
func modelMetrics() []Metric {
	var out []Metric
	for i, k := range AckKinds {
		out = append(out, Metric{Name: MetricAcks(k), Unit: "count", Scale: 1,
			Kinds: allKinds, Engines: simOnly, Description: ackMeanings[i]})
	}
	return append(out, Metric{Name: MetricCwndMeanSegments, Unit: "segments", Scale: 1, Decimals: 1,
		Kinds: allKinds, Engines: simOnly,
		Description: "time-averaged congestion window of the first connection"})
}

// Metrics is the metric table, in display order.
func Metrics() []Metric { return slices.Clone(table) }

// Lookup is the table's row for name.
func Lookup(name string) (Metric, bool) {
	i := slices.IndexFunc(table, func(m Metric) bool { return m.Name == name })
	if i < 0 {
		return Metric{}, false
	}
	return table[i], true
}

// Describe is how name is shown: its row, labelled by its name when the
// row has no label; a name not in the table (a newer engine's) is shown
// by its name, unscaled, for every kind.
func Describe(name string) Metric {
	m, ok := Lookup(name)
	if !ok {
		m = Metric{Name: name, Scale: 1, Kinds: allKinds}
	}
	if m.Label == "" {
		m.Label = name
	}
	return m
}

// Means says whether the metric means something for workloads of kind.
func (m Metric) Means(kind string) bool { return slices.Contains(m.Kinds, kind) }

// ReportedBy says whether engine reports the metric.
func (m Metric) ReportedBy(engine string) bool { return slices.Contains(m.Engines, engine) }

// Names lists the metrics every engine reports, in display order.
func Names() []string {
	var out []string
	for _, m := range table {
		if m.ReportedBy(EngineKernel) && m.ReportedBy(EngineSim) {
			out = append(out, m.Name)
		}
	}
	return out
}

// EngineNames lists the metrics engine reports, in display order.
func EngineNames(engine string) []string {
	var out []string
	for _, m := range table {
		if m.ReportedBy(engine) {
			out = append(out, m.Name)
		}
	}
	return out
}

// Order returns the metric names in have for display: those every engine
// reports in the table's order, then the others (an engine's own, as the
// model's ACK counts) sorted.
func Order(have map[string]bool) []string {
	out := make([]string, 0, len(have))
	for _, n := range Names() {
		if have[n] {
			out = append(out, n)
		}
	}
	var extra []string
	for n := range have {
		if !slices.Contains(out, n) {
			extra = append(extra, n)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

// Charted returns the metrics among names that have a chart, in chart
// order.
func Charted(names []string) []string {
	var rows []Metric
	for _, n := range names {
		if m, ok := Lookup(n); ok && m.Chart > 0 {
			rows = append(rows, m)
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Chart < rows[j].Chart })
	out := make([]string, len(rows))
	for i, m := range rows {
		out[i] = m.Name
	}
	return out
}
