package outcome

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSummarize(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name   string
		values []float64
		want   Estimate
		hasCI  bool
		finite bool
	}{
		{"none", nil, Estimate{}, false, true},
		{"one", []float64{3}, Estimate{Center: 3, Lo: 3, Hi: 3, N: 1}, false, true},
		{"three", []float64{1, 2, 3}, Estimate{Center: 2, Lo: -inf, Hi: inf, N: 3}, true, false},
		{"six", []float64{6, 1, 5, 2, 4, 3}, Estimate{Center: 3.5, Lo: 1, Hi: 6, N: 6}, true, true},
		{"six equal", []float64{2, 2, 2, 2, 2, 2}, Estimate{Center: 2, Lo: 2, Hi: 2, N: 6}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize(tt.values)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Summarize(%v) (-want +got):\n%s", tt.values, diff)
			}
			if got.HasCI() != tt.hasCI || got.Finite() != tt.finite {
				t.Errorf("HasCI, Finite = %v, %v; want %v, %v", got.HasCI(), got.Finite(), tt.hasCI, tt.finite)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	a := []float64{10, 10.1, 9.9, 10.2, 9.8, 10}
	b := []float64{11, 11.1, 10.9, 11.2, 10.8, 11}
	c := Compare(a, b)
	if !c.Significant() || c.N1 != 6 || c.N2 != 6 {
		t.Errorf("Compare(a, b) = %+v, want a significant difference with n=6+6", c)
	}
	if got, want := c.String(), "p=0.0022, n=6+6"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if c := Compare(a[:3], b[:3]); c.Significant() || c.Warning == "" {
		t.Errorf("Compare with 3 runs a side = %+v, want not significant with a warning", c)
	}
}

func TestRelativeWidth(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		want   float64
	}{
		{"identical runs", []float64{5, 5, 5, 5, 5, 5}, 0},
		{"too few for an interval", []float64{9, 10, 11, 10, 10}, math.Inf(1)},
		// Six values: the 95% interval of the median is the smallest to
		// the largest (benchmath.AssumeNothing), 9..11 around 10.
		{"six runs", []float64{9, 10, 11, 10, 10, 10}, 20},
		{"zero median", []float64{0, 0, 0, 0, 0, 0}, math.Inf(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Summarize(tt.values).RelativeWidth(); got != tt.want {
				t.Errorf("RelativeWidth(%v) = %v, want %v", tt.values, got, tt.want)
			}
		})
	}
}
