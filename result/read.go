package result

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
)

// ReadFile reads a results file (what `-json FILE` writes).
func ReadFile(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s is not a tsolab results file (written by -json FILE): %v", path, err)
	}
	if r.FormatVersion != 1 {
		return nil, fmt.Errorf("%s has results format %d; this tsolab reads format 1", path, r.FormatVersion)
	}
	return &r, nil
}

// Median is the median of values (the mean of the middle two for an even
// count), as the verdicts' statistics take it; 0 for none.
func Median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
