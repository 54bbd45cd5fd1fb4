package result

// Counts are the counters of a run its derived metrics come from, beside
// the metrics bytes, duration_s, cpu_tx_pct and cpu_rx_pct.
type Counts struct {
	SendUnits     int64 // units TCP handed the device layer (send_units)
	SendUnitBytes int64 // their summed payload
	SingleMSS     int64 // units whose payload is exactly one MSS
	Transactions  int64 // rr: completed transactions
}

// Derive sets the derived metrics of m from its bytes, duration_s,
// cpu_tx_pct and cpu_rx_pct and from c: throughput_bps, transactions_per_s,
// cpu_tx_per_gbit, cpu_per_gbit, send_units, avg_send_bytes and single_mss_fraction.
// A ratio whose divisor is 0 is 0. Both engines call it, so each derived
// metric has one definition.
func Derive(m map[string]float64, c Counts) {
	ratio := func(a, b float64) float64 {
		if b > 0 {
			return a / b
		}
		return 0
	}
	secs := m[MetricDurationS]
	m[MetricThroughputBps] = ratio(m[MetricBytes]*8, secs)
	m[MetricTransactionsPerS] = ratio(float64(c.Transactions), secs)
	m[MetricCPUTxPerGbit] = ratio(m[MetricCPUTxPct], m[MetricThroughputBps]/1e9)
	m[MetricCPUPerGbit] = ratio(m[MetricCPUTxPct]+m[MetricCPURxPct], m[MetricThroughputBps]/1e9)
	m[MetricSendUnits] = float64(c.SendUnits)
	m[MetricAvgSendBytes] = ratio(float64(c.SendUnitBytes), float64(c.SendUnits))
	m[MetricSingleMSSFrac] = ratio(float64(c.SingleMSS), float64(c.SendUnits))
}
