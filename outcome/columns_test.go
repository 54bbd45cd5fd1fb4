package outcome

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

// TestResultsTableColumns: the rr columns (TX/S, P50/P99) appear when a
// workload is request/response, whether its kind comes from the lab or,
// for a results file shown without its lab, from its runs; a lab of
// streams only has none.
func TestResultsTableColumns(t *testing.T) {
	lab, res, _ := tableFixture(t, 1)
	var streams result.Results = *res
	streams.Runs = nil
	for _, r := range res.Runs {
		if r.Kind != "rr" {
			streams.Runs = append(streams.Runs, r)
		}
	}
	for _, tc := range []struct {
		name    string
		withLab bool
		results *result.Results
		rr      bool
	}{
		{"streams and rr, with the lab", true, res, true},
		{"streams and rr, without the lab", false, res, true},
		{"streams only", true, &streams, false},
		{"streams only, without the lab", false, &streams, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if tc.withLab {
				writeResults(&buf, lab, tc.results, orderedRuns(lab, tc.results))
			} else {
				writeResults(&buf, nil, tc.results, orderedRuns(nil, tc.results))
			}
			if got := strings.Contains(buf.String(), "TX/S"); got != tc.rr {
				t.Errorf("TX/S column shown: got %v, want %v\n%s", got, tc.rr, buf.String())
			}
		})
	}
}

// TestObservedHeading: the table of observed figures calls the engine's
// figure MODEL for the model and MEASURED for the kernel.
func TestObservedHeading(t *testing.T) {
	obs := []result.Observation{{Observed: "o", Scenario: "default", Workload: "bulk", Metric: result.MetricThroughputBps, Value: 1e9, Measured: 1.1e9, Error: 0.1, Role: "predicted"}}
	for eng, want := range map[string]string{"sim": "MODEL", "kernel": "MEASURED"} {
		head := observationRows(obs, eng)[0]
		if head[5] != want {
			t.Errorf("engine %s: heading %q, want %q", eng, head[5], want)
		}
	}
}

// TestMarkdownSides: the CI summary names the sides of a workload only
// when its runs recorded where they ran.
func TestMarkdownSides(t *testing.T) {
	lab, res, verdicts := tableFixture(t, 1)
	md := func() string {
		var buf bytes.Buffer
		if err := WriteMarkdown(&buf, lab, res, verdicts, false); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	if s := md(); strings.Contains(s, "- sides:") {
		t.Errorf("runs without sides: the summary has a sides line:\n%s", s)
	}
	res.Runs[0].Sides = []result.Side{{Side: "client", Host: "tx", Machine: "r1"}}
	if s := md(); !strings.Contains(s, "- sides: bulk: client tx on machine r1") {
		t.Errorf("runs with sides: the summary lacks them:\n%s", s)
	}
}

// TestRunCount: a comparison's detail says how many runs each side had.
func TestRunCount(t *testing.T) {
	for _, tc := range []struct {
		a, b int
		want string
	}{
		{4, 4, "4 runs"}, {3, 5, "3+5 runs"}, {5, 0, "5 runs"}, {0, 5, "5 runs"},
	} {
		if got := runCount(tc.a, tc.b); got != tc.want {
			t.Errorf("runCount(%d, %d) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestCongestionWarningWithoutItsBlock: a warning about a workload the
// lab does not declare in a file (a results file's workload gone from the
// lab, a lab built in code) has no source range, rather than a broken one.
func TestCongestionWarningWithoutItsBlock(t *testing.T) {
	if r := rangeOf(nil); r != nil {
		t.Errorf("rangeOf(nil) = %v, want nil", r)
	}
	if r := rangeOf(&config.Workload{Name: "bulk"}); r != nil {
		t.Errorf("rangeOf(a workload without a file) = %v, want nil", r)
	}
}
