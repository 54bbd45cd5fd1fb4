package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLatencyQuantiles checks latencies' quantiles against the sorted list
// of every latency they replaced, for few and for many distinct values.
func TestLatencyQuantiles(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n        int
		distinct int64
	}{
		{"one", 1, 1},
		{"two", 2, 2},
		{"few distinct", 10000, 3},
		{"all distinct", 5000, 1 << 40},
		{"hundred", 101, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(1, uint64(tc.n)))
			var l latencies
			var list []int64
			for range tc.n {
				v := 1000 + rnd.Int64N(tc.distinct)*997
				l.add(v)
				list = append(list, v)
			}
			slices.Sort(list)
			for _, pct := range []int64{0, 1, 50, 99, 100} {
				want := list[(len(list)-1)*int(pct)/100]
				if got := l.at(pct); got != want {
					t.Errorf("at(%d) of %d latencies: got %d, want %d", pct, tc.n, got, want)
				}
			}
		})
	}
}
