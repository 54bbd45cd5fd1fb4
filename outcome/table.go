package outcome

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

// WriteTable writes the human results table: one row per scenario and
// workload that ran, in the spirit of seed 001's table (throughput, sender
// and receiver CPU, average send unit, single-MSS share, retransmits, and
// for rr workloads transactions/s and latency), then the verdicts with the
// expected and measured values side by side, the details of every verdict
// that did not pass, and a count. With repeated runs every number is the
// median ± the half-width of its 95% confidence interval.
func WriteTable(w io.Writer, lab *config.Lab, results *result.Results, verdicts []Verdict) error {
	tw := &errWriter{w: w}
	sets := orderedRuns(lab, results)
	writeResults(tw, lab, results, sets)
	writeObservations(tw, results)
	if len(verdicts) > 0 {
		fmt.Fprintln(tw)
		writeVerdicts(tw, verdicts)
	}
	c := Count(verdicts)
	errs := "errors"
	if c.Error == 1 {
		errs = "error"
	}
	fmt.Fprintf(tw, "\nExpectations: %d passed, %d failed, %d inconclusive, %d %s.\n", c.Pass, c.Fail, c.Inconclusive, c.Error, errs)
	return tw.err
}

// namedRuns is the runs of one workload in one scenario, for a table row.
type namedRuns struct {
	scenario, workload, kind string
	set                      *runSet
}

// orderedRuns lists the run sets in OrderOf's order, each with its
// workload's kind (the lab's, else its first run's).
func orderedRuns(lab *config.Lab, results *result.Results) []namedRuns {
	idx := indexRuns(results)
	kinds := map[runKey]string{}
	if lab != nil {
		for _, sc := range lab.Scenarios {
			for _, wl := range sc.Workloads {
				kinds[runKey{Scenario: sc.Name, Workload: wl.Name}] = string(wl.Kind)
			}
		}
	}
	var out []namedRuns
	for _, k := range OrderOf(lab, results).Runs {
		rs := idx[k]
		kind := kinds[k]
		if kind == "" {
			kind = rs.Runs[0].Kind
		}
		out = append(out, namedRuns{k.Scenario, k.Workload, kind, rs})
	}
	return out
}

func writeResults(w io.Writer, lab *config.Lab, results *result.Results, sets []namedRuns) {
	name, eng := "", ""
	if lab != nil {
		name = lab.Name
	}
	if results != nil {
		eng = results.Engine
		if name == "" {
			name = results.Lab
		}
	}
	maxRuns, hasRR := 0, false
	for _, s := range sets {
		maxRuns = max(maxRuns, len(s.set.Runs))
		hasRR = hasRR || s.kind == string(config.RR)
	}
	fmt.Fprintf(w, "Lab %s, engine %s: ", name, eng)
	switch {
	case len(sets) == 0:
		fmt.Fprintln(w, "no results.")
		return
	case maxRuns == 1:
		fmt.Fprintln(w, "1 run per workload.")
	case maxRuns < MinRunsForCI:
		fmt.Fprintf(w, "up to %d runs per workload; median ± half-width of the 95%% confidence interval (±∞: fewer than %d runs give no finite interval; repeat %d or more for one).\n", maxRuns, MinRunsForCI, MinRunsForCI)
	default:
		fmt.Fprintf(w, "up to %d runs per workload; median ± half-width of the 95%% confidence interval.\n", maxRuns)
	}
	fmt.Fprintln(w)
	writeTabbed(w, resultRows(sets, hasRR))
}

// resultRows is the results table: a header, then one row per scenario
// and workload.
func resultRows(sets []namedRuns, hasRR bool) [][]string {
	head := []string{"SCENARIO", "WORKLOAD", "RUNS", "GB/S", "CPU TX %", "CPU RX %", "AVG SEND", "1-MSS %", "RETRANS"}
	if hasRR {
		head = append(head, "TX/S", "P50/P99 µS")
	}
	rows := [][]string{head}
	for _, s := range sets {
		m := func(metric string) string {
			d := result.Describe(metric)
			return metricCell(s.set, metric, d.Scale, d.Decimals)
		}
		cells := []string{
			s.scenario, s.workload, strconv.Itoa(len(s.set.Runs)),
			m(result.MetricThroughputBps),
			m(result.MetricCPUTxPct),
			m(result.MetricCPURxPct),
			sendUnitCell(s.set),
			m(result.MetricSingleMSSFrac),
			m(result.MetricRetransmits),
		}
		if hasRR {
			if s.kind == string(config.RR) {
				cells = append(cells,
					m(result.MetricTransactionsPerS),
					m(result.MetricLatencyP50us)+" / "+m(result.MetricLatencyP99us))
			} else {
				cells = append(cells, "-", "-")
			}
		}
		rows = append(rows, cells)
	}
	return rows
}

// writeTabbed writes rows as columns aligned with spaces.
func writeTabbed(w io.Writer, rows [][]string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

// metricCell is one metric of a run set, scaled, with its CI half-width
// when there are several runs; "-" when the runs do not carry it.
func metricCell(rs *runSet, metric string, scale float64, prec int) string {
	vs := rs.Values(metric)
	if len(vs) == 0 {
		return "-"
	}
	s := summarize(vs)
	out := strconv.FormatFloat(s.Center*scale, 'f', prec, 64)
	if len(vs) > 1 {
		switch {
		case math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0):
			out += " ±∞"
		case s.Hi > s.Lo:
			// Runs that all agree show no interval.
			out += " ±" + strconv.FormatFloat((s.Hi-s.Lo)/2*scale, 'f', prec, 64)
		}
	}
	return out
}

// sendUnitCell is the average send unit in bytes and in MSS.
func sendUnitCell(rs *runSet) string {
	d := result.Describe(result.MetricAvgSendBytes)
	cell := metricCell(rs, d.Name, d.Scale, d.Decimals)
	if cell == "-" {
		return cell
	}
	cell += " B"
	if mss := rs.Runs[0].MSS; mss > 0 {
		cell += " (" + inMSS(summarize(rs.Values(result.MetricAvgSendBytes)).Center, mss) + ")"
	}
	return cell
}

// inMSS is a send unit's size in MSS: one decimal from one MSS up
// ("24.8 MSS"), and below it the MSS itself, since a small write (rr, or
// on loopback, whose MSS is 65483) is a fraction that rounds to nothing
// ("< 1 MSS of 65483 B").
func inMSS(bytes float64, mss int) string {
	if bytes > 0 && bytes < float64(mss) {
		return fmt.Sprintf("< 1 MSS of %d B", mss)
	}
	return fmt.Sprintf("%.1f MSS", bytes/float64(mss))
}

// verdictRows is the verdicts table: a header, then one row a verdict.
func verdictRows(verdicts []Verdict) [][]string {
	rows := [][]string{{"EXPECT", "SCENARIO", "WORKLOAD", "VERDICT", "EXPECTED", "MEASURED"}}
	for _, v := range verdicts {
		rows = append(rows, []string{v.Expect, v.Scenario, v.Workload, v.Status.String(), oneLine(v.Expression), measuredText(v)})
	}
	return rows
}

func writeVerdicts(w io.Writer, verdicts []Verdict) {
	writeTabbed(w, verdictRows(verdicts))

	for _, v := range verdicts {
		if v.Status == Pass {
			if len(v.BaselineChanged) > 0 {
				fmt.Fprintf(w, "\n%s %s in scenario %s (workload %s)\n", v.Status, v.Expect, v.Scenario, v.Workload)
				for _, l := range baselineLines(v) {
					fmt.Fprintf(w, "  %s\n", l)
				}
			}
			continue
		}
		fmt.Fprintf(w, "\n%s %s in scenario %s (workload %s)\n", v.Status, v.Expect, v.Scenario, v.Workload)
		if v.Message != "" {
			fmt.Fprintf(w, "  %s\n", v.Message)
		}
		fmt.Fprintf(w, "  %s: %s\n", v.Range, oneLine(v.Expression))
		for _, l := range sideLines(v) {
			fmt.Fprintf(w, "    %s\n", l)
		}
		if v.Detail != "" {
			fmt.Fprintf(w, "  %s\n", v.Detail)
		}
		for _, l := range baselineLines(v) {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
}

// baselineLines say that a verdict compared with a baseline that ran on
// something else, and what: a heading, then one indented line a change.
func baselineLines(v Verdict) []string {
	if len(v.BaselineChanged) == 0 {
		return nil
	}
	out := []string{"the baseline ran on something else; compare with care:"}
	for _, c := range v.BaselineChanged {
		out = append(out, "  "+c)
	}
	return out
}

// sideLines are "EXPR = VALUE" for each side of a verdict, leaving out
// literals ("0.1 = 0.1" says nothing).
func sideLines(v Verdict) []string {
	var out []string
	for _, s := range v.Sides {
		expr, text := oneLine(s.Expr), sideText(s)
		if text != expr {
			out = append(out, expr+" = "+text)
		}
	}
	return out
}

// measuredText is MeasuredText, "-" when the verdict measured nothing.
func measuredText(v Verdict) string {
	if s := MeasuredText(v); s != "" {
		return s
	}
	return "-"
}

// MeasuredText is what a verdict measured, as tables and the report show
// it: the sides joined by the operator ("47 < 55", each side with the
// half-width of its confidence interval), the detail when there are no
// numeric sides, true or false; "" when it measured nothing.
func MeasuredText(v Verdict) string {
	if len(v.Sides) == 2 {
		return sideText(v.Sides[0]) + " " + v.Op + " " + sideText(v.Sides[1])
	}
	if v.Measured != "" {
		return v.Measured
	}
	switch v.Status {
	case Pass:
		return "true"
	case Fail:
		return "false"
	}
	return ""
}

// sideText is a side's value, with the half-width of its CI when it has
// one.
func sideText(s Side) string {
	out := formatNumber(s.Value)
	if s.CI != nil {
		if math.IsInf(s.CI[0], 0) || math.IsInf(s.CI[1], 0) {
			out += " ±∞"
		} else if hw := (s.CI[1] - s.CI[0]) / 2; hw != 0 {
			out += " ±" + result.FormatNumber(hw, 2, 1e6)
		}
	}
	return out
}

// formatNumber writes a measured value with 4 significant digits (all
// the digits of an integer part below a million), exponents short
// ("6.1e9").
func formatNumber(f float64) string { return result.FormatNumber(f, 4, 1e6) }

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}
