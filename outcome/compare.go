package outcome

import (
	"fmt"
	"io"
	"strings"

	"github.com/tsolab/tsolab/result"
)

// Agreement is one expectation in one scenario judged by two engines (the
// kernel's, then the model's), with the metrics its condition reads on
// each: whether the model's verdict agrees with the kernel's.
type Agreement struct {
	Expect, Scenario, Workload string
	// A and B are the verdicts of the first and the second engine; nil
	// when that engine did not judge it (a `when` that reads engine).
	A, B *Verdict
	// Metrics are the metrics the condition reads, each with the median
	// of the scenario's runs on both engines.
	Metrics []MetricPair
}

// MetricPair is one metric of one scenario and workload on two engines.
type MetricPair struct {
	Metric string
	// A and B are the medians of the engines' runs; HasA/HasB say
	// whether the runs carry the metric at all.
	A, B       float64
	HasA, HasB bool
}

// Agrees reports whether both engines judged it and reached the same
// status.
func (a Agreement) Agrees() bool { return a.A != nil && a.B != nil && a.A.Status == a.B.Status }

// CompareEngines pairs the verdicts of two engines run on one lab (a on ra, b on
// rb) by expectation, scenario and workload, in a's order and then b's
// verdicts that a lacks.
func CompareEngines(ra *result.Results, a []Verdict, rb *result.Results, b []Verdict) []Agreement {
	type key struct{ e, s, w string }
	ia, ib := result.Index(ra), result.Index(rb)
	var out []Agreement
	at := map[key]int{}
	add := func(v *Verdict, first bool) {
		k := key{v.Expect, v.Scenario, v.Workload}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			ag := Agreement{Expect: v.Expect, Scenario: v.Scenario, Workload: v.Workload}
			rk := result.Key{Scenario: v.Scenario, Workload: v.Workload}
			for _, m := range v.Metrics {
				p := MetricPair{Metric: m}
				p.A, p.HasA = median(ia[rk], m)
				p.B, p.HasB = median(ib[rk], m)
				ag.Metrics = append(ag.Metrics, p)
			}
			out = append(out, ag)
		}
		if first {
			out[i].A = v
		} else {
			out[i].B = v
		}
	}
	for i := range a {
		add(&a[i], true)
	}
	for i := range b {
		add(&b[i], false)
	}
	return out
}

func median(s *result.Set, metric string) (float64, bool) {
	if s == nil {
		return 0, false
	}
	vs := s.Values(metric)
	if len(vs) == 0 {
		return 0, false
	}
	return result.Median(vs), true
}

// WriteComparison writes the agreements as a table, one row per metric a
// condition reads (the verdicts on its first row), and a closing line
// that counts them. nameA and nameB head the engines' columns.
func WriteComparison(w io.Writer, nameA, nameB string, ags []Agreement) {
	rows := [][]string{{"EXPECT", "SCENARIO", "WORKLOAD", "METRIC", strings.ToUpper(nameA), strings.ToUpper(nameB), "DIFF", strings.ToUpper(nameA) + " VERDICT", strings.ToUpper(nameB) + " VERDICT", "AGREE"}}
	agree, differ, one := 0, 0, 0
	for _, ag := range ags {
		status := func(v *Verdict) string {
			if v == nil {
				return "not judged"
			}
			return v.Status.String()
		}
		word := "yes"
		switch {
		case ag.A == nil || ag.B == nil:
			word = "-"
			one++
		case ag.Agrees():
			agree++
		default:
			word = "NO"
			differ++
		}
		verdicts := []string{status(ag.A), status(ag.B), word}
		if len(ag.Metrics) == 0 {
			rows = append(rows, append([]string{ag.Expect, ag.Scenario, ag.Workload, "-", "-", "-", "-"}, verdicts...))
		}
		for i, p := range ag.Metrics {
			row := []string{ag.Expect, ag.Scenario, ag.Workload, p.Metric, valueOr(p.A, p.HasA), valueOr(p.B, p.HasB), diff(p)}
			if i > 0 {
				row[0], row[1], row[2] = "", "", ""
				verdicts = []string{"", "", ""}
			}
			rows = append(rows, append(row, verdicts...))
		}
	}
	writeTabbed(w, rows)
	for _, ag := range ags {
		if ag.A == nil || ag.B == nil || ag.Agrees() {
			continue
		}
		fmt.Fprintf(w, "\nDISAGREE %s in scenario %s (workload %s)\n", ag.Expect, ag.Scenario, ag.Workload)
		for _, e := range []struct {
			name string
			v    *Verdict
		}{{nameA, ag.A}, {nameB, ag.B}} {
			fmt.Fprintf(w, "  %s: %s  %s", e.name, e.v.Status, measuredText(*e.v))
			if e.v.Detail != "" {
				fmt.Fprintf(w, "  (%s)", e.v.Detail)
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintf(w, "\nVerdicts: %d agree, %d disagree, %d judged on one engine only.\n", agree, differ, one)
}

func valueOr(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	return formatNumber(v)
}

// diff is B against A: "+12.3%".
func diff(p MetricPair) string {
	if !p.HasA || !p.HasB || p.A == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*(p.B/p.A-1))
}
