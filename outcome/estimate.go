package outcome

import (
	"math"

	"github.com/tsolab/tsolab/config"
)

// Estimate is the median of repeated measurements of one metric with its
// confidence interval at level Confidence, computed as the table and the
// verdicts compute it (benchmath.AssumeNothing). Other views (the HTML
// report) use it so that every number tsolab shows agrees.
type Estimate struct {
	Center float64 // the median
	// Lo and Hi bound the confidence interval of the median; they equal
	// Center with one value, and are ±Inf with too few values for a
	// finite interval (benchmath needs 6 at 95%).
	Lo, Hi float64
	N      int // number of values
}

// HasCI reports whether the estimate has an interval worth showing: two
// or more values that do not all agree.
func (e Estimate) HasCI() bool {
	return e.N > 1 && (e.Hi > e.Lo || math.IsInf(e.Lo, 0) || math.IsInf(e.Hi, 0))
}

// Finite reports whether both bounds are finite.
func (e Estimate) Finite() bool { return !math.IsInf(e.Lo, 0) && !math.IsInf(e.Hi, 0) }

// Summarize is the median of values and its confidence interval; the
// zero Estimate for no values.
func Summarize(values []float64) Estimate {
	if len(values) == 0 {
		return Estimate{}
	}
	if len(values) == 1 {
		return Estimate{Center: values[0], Lo: values[0], Hi: values[0], N: 1}
	}
	s := summarize(values)
	return Estimate{Center: s.Center, Lo: s.Lo, Hi: s.Hi, N: len(values)}
}

// Comparison says whether two samples differ: the Mann-Whitney U test
// the verdicts use (benchmath Compare).
type Comparison struct {
	P      float64 // p-value
	Alpha  float64 // significance level
	N1, N2 int     // sample sizes
	// Warning explains a test that could not find a difference whatever
	// the values ("need >= 4 samples ..."); empty otherwise.
	Warning string
}

// Compare tests whether samples a and b differ.
func Compare(a, b []float64) Comparison {
	c := compare(a, b)
	return Comparison{P: c.p, Alpha: c.alpha, N1: c.n1, N2: c.n2, Warning: c.warning}
}

// Significant reports p < alpha.
func (c Comparison) Significant() bool { return c.P < c.Alpha }

// String is "p=0.43, n=5+5", as verdict details write it.
func (c Comparison) String() string {
	return comparison{p: c.P, alpha: c.Alpha, n1: c.N1, n2: c.N2}.String()
}

// MinRunsForCI is the least number of runs with a finite 95% confidence
// interval of the median (benchmath.AssumeNothing): fewer give ±Inf.
// The language needs it too, so it lives in config.
const MinRunsForCI = config.MinRunsForCI

// RelativeWidth is the width of the estimate's confidence interval as a
// percentage of its median (netperf's -I interval): +Inf when the interval
// is infinite or the median is 0.
func (e Estimate) RelativeWidth() float64 {
	if !e.Finite() || e.Center == 0 {
		return math.Inf(1)
	}
	return 100 * (e.Hi - e.Lo) / math.Abs(e.Center)
}
