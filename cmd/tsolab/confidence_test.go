package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tsolab/tsolab/result"
)

// TestReportConfidence checks how -confidence ends for a workload: a
// tight interval is reported on stderr only; one still wider than asked
// is also a note on the last run, so the results file carries it.
func TestReportConfidence(t *testing.T) {
	tests := []struct {
		name      string
		values    []float64
		want      float64
		wantNotes []string
		wantErr   string
	}{
		{
			name:    "reached",
			values:  []float64{100, 101, 99, 100, 100, 100},
			want:    5,
			wantErr: "tso=true / bulk: the 95% confidence interval of throughput_bps is 2.0% of the median after 6 runs (confidence 5)\n",
		},
		{
			name:   "not reached",
			values: []float64{80, 120, 100, 90, 110, 100, 100},
			want:   10,
			wantNotes: []string{
				"confidence 10 not reached: the 95% confidence interval of throughput_bps is still 40.0% of the median after 7 runs (repeat 7 is the most)",
			},
			wantErr: "tso=true / bulk: confidence 10 not reached: the 95% confidence interval of throughput_bps is still 40.0% of the median after 7 runs (repeat 7 is the most)\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
			var last result.WorkloadResult
			reportConfidence(humanTest{c}, &last, "tso=true", "bulk", result.MetricThroughputBps, tt.values, tt.want)
			if diff := cmp.Diff(tt.wantNotes, last.Notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
			if got := errb.String(); got != tt.wantErr {
				t.Errorf("stderr = %q, want %q", got, tt.wantErr)
			}
		})
	}
}
