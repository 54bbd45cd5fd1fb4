package outcome

import (
	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

// Order is how results are laid out, the one rule for the results table,
// the Markdown summary and the HTML report: what the lab declares first,
// in its order, then what it does not declare (results of another version
// of the lab), in the order the results have it. Only what ran is listed.
type Order struct {
	Runs      []result.Key // the (scenario, workload) pairs: the table's rows
	Scenarios []string     // the scenarios alone: the report's columns
	Workloads []string     // the workloads alone: the report's rows
}

// OrderOf lays out res after lab, which may be nil; res may be nil too.
func OrderOf(lab *config.Lab, res *result.Results) Order {
	var declS, declW, runS, runW []string
	var declK, runK []result.Key
	if lab != nil {
		for _, sc := range lab.Scenarios {
			declS = append(declS, sc.Name)
			for _, wl := range sc.Workloads {
				declW = append(declW, wl.Name)
				declK = append(declK, result.Key{Scenario: sc.Name, Workload: wl.Name})
			}
		}
	}
	if res != nil {
		for _, r := range res.Runs {
			runS = append(runS, r.Scenario)
			runW = append(runW, r.Workload)
			runK = append(runK, result.Key{Scenario: r.Scenario, Workload: r.Workload})
		}
	}
	return Order{Runs: arrange(declK, runK), Scenarios: arrange(declS, runS), Workloads: arrange(declW, runW)}
}

// arrange lists each member of ran once: those in declared first, in its
// order, then the others in the order of ran.
func arrange[K comparable](declared, ran []K) []K {
	did := map[K]bool{}
	for _, k := range ran {
		did[k] = true
	}
	seen := map[K]bool{}
	var out []K
	for _, list := range [][]K{declared, ran} {
		for _, k := range list {
			if did[k] && !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}
