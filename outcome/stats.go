package outcome

import (
	"fmt"
	"strings"

	"golang.org/x/perf/benchmath"
)

// Confidence is the level of every confidence interval outcome reports.
const Confidence = 0.95

// assumption is the statistics benchstat uses by default: medians with
// their confidence interval, and the Mann-Whitney U test to compare two
// samples, assuming nothing about the distribution.
var assumption = benchmath.AssumeNothing

func newSample(values []float64) *benchmath.Sample {
	th := benchmath.DefaultThresholds
	// NewSample sorts in place: never hand it the caller's slice.
	return benchmath.NewSample(append([]float64(nil), values...), &th)
}

// summarize is the median of values and its 95% confidence interval.
// With fewer than 6 values the interval is infinite (benchmath says so in
// the summary's warnings).
func summarize(values []float64) benchmath.Summary {
	if len(values) == 0 {
		return benchmath.Summary{}
	}
	return assumption.Summary(newSample(values), Confidence)
}

// comparison is whether two samples differ, with its p-value.
type comparison struct {
	p      float64
	alpha  float64
	n1, n2 int
	// warning explains a test that could not find a difference whatever
	// the values ("need >= 4 samples to detect a difference at alpha
	// level 0.05").
	warning string
}

func compare(a, b []float64) comparison {
	c := assumption.Compare(newSample(a), newSample(b))
	out := comparison{p: c.P, alpha: c.Alpha, n1: c.N1, n2: c.N2}
	var ws []string
	for _, w := range c.Warnings {
		ws = append(ws, w.Error())
	}
	out.warning = strings.Join(ws, "; ")
	return out
}

func (c comparison) significant() bool { return c.p < c.alpha }

// String is "p=0.43, n=5+5".
func (c comparison) String() string {
	return fmt.Sprintf("p=%.2g, n=%d+%d", c.p, c.n1, c.n2)
}
