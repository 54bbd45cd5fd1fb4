package result

import (
	"maps"
	"testing"
)

func TestDerive(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]float64
		c    Counts
		want map[string]float64
	}{
		{
			"stream",
			map[string]float64{MetricBytes: 1.25e9, MetricDurationS: 2, MetricCPUTxPct: 40, MetricCPURxPct: 60},
			Counts{SendUnits: 4, SendUnitBytes: 4*1448 + 2*1448, SingleMSS: 1},
			map[string]float64{MetricBytes: 1.25e9, MetricDurationS: 2, MetricCPUTxPct: 40, MetricCPURxPct: 60,
				MetricThroughputBps: 5e9, MetricTransactionsPerS: 0, MetricCPUTxPerGbit: 8, MetricCPUPerGbit: 20,
				MetricSendUnits: 4, MetricAvgSendBytes: 1.5 * 1448, MetricSingleMSSFrac: 0.25},
		},
		{
			"rr",
			map[string]float64{MetricBytes: 0, MetricDurationS: 4, MetricCPUTxPct: 10},
			Counts{Transactions: 1000},
			map[string]float64{MetricBytes: 0, MetricDurationS: 4, MetricCPUTxPct: 10,
				MetricThroughputBps: 0, MetricTransactionsPerS: 250, MetricCPUTxPerGbit: 0, MetricCPUPerGbit: 0,
				MetricSendUnits: 0, MetricAvgSendBytes: 0, MetricSingleMSSFrac: 0},
		},
		{
			"nothing measured: every ratio is 0, none is NaN",
			map[string]float64{},
			Counts{},
			map[string]float64{MetricThroughputBps: 0, MetricTransactionsPerS: 0, MetricCPUTxPerGbit: 0, MetricCPUPerGbit: 0,
				MetricSendUnits: 0, MetricAvgSendBytes: 0, MetricSingleMSSFrac: 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Derive(tt.in, tt.c)
			if !maps.Equal(tt.in, tt.want) {
				t.Errorf("Derive = %v, want %v", tt.in, tt.want)
			}
		})
	}
}

// Sides names where each workload's sides ran, once per workload, and
// nothing when all ran here.
func TestResultsSides(t *testing.T) {
	r := &Results{Runs: []WorkloadResult{
		{Workload: "bulk", Sides: []Side{{Side: "client", Host: "tx"}, {Side: "server", Host: "rx", Machine: "r1", Kernel: "6.1.0"}}},
		{Workload: "bulk", Sides: []Side{{Side: "client", Host: "tx"}, {Side: "server", Host: "rx", Machine: "r1", Kernel: "6.1.0"}}},
		{Workload: "back", Sides: []Side{{Side: "client", Host: "rx", Machine: "r1"}, {Side: "server", Host: "tx"}}},
	}}
	want := "bulk: client tx here, server rx on machine r1 (kernel 6.1.0); back: client rx on machine r1, server tx here"
	if got := r.Sides(); got != want {
		t.Errorf("Sides() = %q, want %q", got, want)
	}
	local := &Results{Runs: []WorkloadResult{{Workload: "bulk", Sides: []Side{{Side: "client", Host: "tx"}, {Side: "server", Host: "rx"}}}}}
	if got := local.Sides(); got != "" {
		t.Errorf("Sides() of a lab on one machine = %q, want \"\"", got)
	}
}
