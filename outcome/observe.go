package outcome

import (
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

// Observe puts every observed figure of the lab beside the median of the
// runs of its scenario and workload (over the median of its RelativeTo
// scenario's, for a relative figure), marked fitted (a calibration was
// fitted to it) or predicted. Figures whose cells did not run are left
// out.
func Observe(lab *config.Lab, results *result.Results) []result.Observation {
	idx := indexRuns(results)
	var out []result.Observation
	for _, o := range lab.Observed {
		rs := idx[runKey{Scenario: o.Scenario, Workload: o.Workload}]
		base := idx[runKey{Scenario: o.RelativeTo, Workload: o.Workload}]
		if rs == nil || o.RelativeTo != "" && base == nil {
			continue
		}
		role := "predicted"
		if lab.Fitted(o.Name) {
			role = "fitted"
		}
		metrics := make([]string, 0, len(o.Values))
		for m := range o.Values {
			metrics = append(metrics, m)
		}
		sort.Strings(metrics)
		for _, m := range metrics {
			vs := rs.Values(m)
			if len(vs) == 0 {
				continue
			}
			got := summarize(vs).Center
			if o.RelativeTo != "" {
				bs := base.Values(m)
				if len(bs) == 0 || summarize(bs).Center == 0 {
					continue
				}
				got /= summarize(bs).Center
			}
			out = append(out, result.Observation{
				Observed: o.Name, Source: o.Source, Scenario: o.Scenario, RelativeTo: o.RelativeTo, Workload: o.Workload,
				Metric: m, Value: o.Values[m], Measured: got, Error: got/o.Values[m] - 1, Role: role,
			})
		}
	}
	return out
}

// observationRows is the table of observed figures: a header, then one
// row a figure.
func observationRows(obs []result.Observation, engineName string) [][]string {
	rows := [][]string{{"OBSERVED", "SCENARIO", "WORKLOAD", "METRIC", "VALUE", engineHeading(engineName), "ERROR", "ROLE"}}
	for _, o := range obs {
		scenario := o.Scenario
		if o.RelativeTo != "" {
			scenario += " / " + o.RelativeTo
		}
		rows = append(rows, []string{o.Observed, scenario, o.Workload, o.Metric,
			strconv.FormatFloat(o.Value, 'g', 4, 64), strconv.FormatFloat(o.Measured, 'g', 4, 64),
			fmt.Sprintf("%+.1f%%", 100*o.Error), o.Role})
	}
	return rows
}

func engineHeading(name string) string {
	if name == "sim" {
		return "MODEL"
	}
	return "MEASURED"
}

// writeObservations writes the observed figures' table, if the results
// hold any.
func writeObservations(w io.Writer, results *result.Results) {
	if results == nil || len(results.Observations) == 0 {
		return
	}
	fmt.Fprintln(w, "\nObserved figures (fitted: a calibration was fitted to it; predicted: never tuned to):")
	writeTabbed(w, observationRows(results.Observations, results.Engine))
}
