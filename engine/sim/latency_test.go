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
		run      int64 // longest run of one latency in a row (add's fast path)
	}{
		{"one", 1, 1, 1},
		{"two", 2, 2, 1},
		{"few distinct", 10000, 3, 1},
		{"all distinct", 5000, 1 << 40, 1},
		{"hundred", 101, 7, 1},
		{"runs", 10000, 5, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(1, uint64(tc.n)))
			var l latencies
			var list []int64
			check := func() {
				sorted := slices.Sorted(slices.Values(list))
				for _, pct := range []int64{0, 1, 50, 99, 100} {
					want := sorted[(len(sorted)-1)*int(pct)/100]
					if got := l.at(pct); got != want {
						t.Errorf("at(%d) of %d latencies: got %d, want %d", pct, len(sorted), got, want)
					}
				}
			}
			mid := false
			for len(list) < tc.n {
				v := 1000 + rnd.Int64N(tc.distinct)*997
				for range min(1+rnd.Int64N(tc.run), int64(tc.n-len(list))) {
					l.add(v)
					list = append(list, v)
				}
				if !mid && len(list) >= tc.n/2 {
					mid = true
					check() // quantiles asked mid-run, then more added
				}
			}
			check()
		})
	}
}
