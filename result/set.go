package result

import "sort"

// Key names the runs of one workload in one scenario.
type Key struct{ Scenario, Workload string }

// Set is every repetition of one workload in one scenario.
type Set struct {
	Scenario, Workload, Kind string
	Runs                     []WorkloadResult // by Repetition
}

// Index groups the runs of res by scenario and workload, each set ordered
// by Repetition; empty for nil.
func Index(res *Results) map[Key]*Set {
	out := map[Key]*Set{}
	if res == nil {
		return out
	}
	for _, r := range res.Runs {
		k := Key{r.Scenario, r.Workload}
		s := out[k]
		if s == nil {
			s = &Set{Scenario: r.Scenario, Workload: r.Workload, Kind: r.Kind}
			out[k] = s
		}
		s.Runs = append(s.Runs, r)
	}
	for _, s := range out {
		sort.SliceStable(s.Runs, func(i, j int) bool { return s.Runs[i].Repetition < s.Runs[j].Repetition })
	}
	return out
}

// Values is one metric over the runs that carry it.
func (s *Set) Values(metric string) []float64 {
	var vs []float64
	for _, r := range s.Runs {
		if v, ok := r.Metrics[metric]; ok {
			vs = append(vs, v)
		}
	}
	return vs
}

// MetricNames is every metric the runs carry, in Order.
func (s *Set) MetricNames() []string {
	have := map[string]bool{}
	for _, r := range s.Runs {
		for k := range r.Metrics {
			have[k] = true
		}
	}
	return Order(have)
}
