package report

import (
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/outcome"
	"github.com/tsolab/tsolab/result"
)

// Input is what a report shows.
type Input struct {
	// Results are the runs to show (the -json FILE of run or test).
	// Required.
	Results *result.Results
	// Baseline, when not nil, adds a baseline column with the change of
	// every metric and grey baseline bars to the metric charts.
	Baseline *result.Results
	// Lab, when not nil, gives the description, the order of scenarios
	// and workloads and their matrix values, and means Verdicts were
	// judged; without it the report says the verdicts were not judged.
	Lab *config.Lab
	// Verdicts are outcome.Evaluate(Lab, Results, Baseline).
	Verdicts []outcome.Verdict
	// Strict is whether inconclusive verdicts count as failures (test
	// -strict), for the summary line.
	Strict bool
	// Version is tsolab's version, shown in the footer.
	Version string
}

// Write renders the report as one HTML document.
func Write(w io.Writer, in Input) error {
	if in.Results == nil {
		return errors.New("report: no results to show")
	}
	p, err := build(in)
	if err != nil {
		return err
	}
	return page.Execute(w, p)
}

// runSet is every repetition of one workload in one scenario; key names
// one.
type (
	runSet = result.Set
	key    = result.Key
)

// info says how a metric is shown: its row of the metric table.
func info(metric string) result.Metric { return result.Describe(metric) }

// metricsOf is every metric the run sets carry that fits their kind: the
// engine's in display order, then the others sorted.
func metricsOf(sets []*runSet, rr bool) []string {
	have := map[string]bool{}
	for _, rs := range sets {
		for _, r := range rs.Runs {
			for m := range r.Metrics {
				have[m] = rr || info(m).Means(result.KindStream)
			}
		}
	}
	var out []string
	for _, m := range result.Order(have) {
		if have[m] {
			out = append(out, m)
		}
	}
	return out
}

// Page model.

type pageData struct {
	Title        string
	Lab          string
	Description  string
	Engine       string
	Profiles     []string
	Judged       bool
	Counts       outcome.Counts
	Strict       bool
	HasBaseline  bool
	BaselineName string
	// Provenance is where the results came from (tool, lab, machine), a
	// line each; BaselineChanged what the baseline's tool, lab or machine
	// has that these results' do not.
	Provenance      []string
	BaselineChanged []string
	MaxRuns         int
	Scenarios       []scenarioInfo
	OffloadFlags    []string
	NICRows         []nicRow
	Workloads       []workloadSection
	Verdicts        []verdictRow
	Version         string
}

type scenarioInfo struct {
	Name    string
	Color   template.CSS
	Profile string
	MSS     string
	Runs    int
	Matrix  string
}

type nicRow struct {
	Scenario string
	Span     int // rows the scenario cell spans; 0 on the following rows
	Color    template.CSS
	NIC      string
	Flags    []flagCell
}

type flagCell struct {
	Text  string // "on", "off", "" (not reported)
	Class string
}

type workloadSection struct {
	Name      string
	Kind      string
	Columns   []columnHead
	Rows      []metricRow
	Metrics   []chart
	AllZero   []string
	Hists     []chart
	Series    []chart
	SeriesRep string
	Model     bool
	Stops     []chart
	StopTable *countTable
	Acks      []chart
	AckTable  *countTable
	Notes     []noteRow
	Captures  []captureRow
}

// captureRow is one packet capture file of a run (-capture DIR).
type captureRow struct {
	Scenario string
	result.CaptureFile
}

// metricRow is one metric of a workload across the scenarios (columns).
type metricRow struct {
	Metric string
	Name   string
	Unit   string
	Cells  []metricCell
}

type metricCell struct {
	Present     bool
	Value       string
	Runs        int
	Baseline    string
	Change      string
	ChangeClass string
	Class       string // status class of the worst verdict reading it
	Badges      []badge
}

type columnHead struct {
	Name  string
	Color template.CSS
	Runs  int
}

type badge struct {
	Text  string
	Class string
	Title string
}

type verdictRow struct {
	Expect, Scenario, Workload string
	Status, Class              string
	Expression                 string
	Measured                   string
	Detail, Message, Where     string
	// BaselineChanged: the baseline this verdict compared with ran on
	// something else (outcome.Verdict.BaselineChanged).
	BaselineChanged []string
}

type noteRow struct {
	Scenario string
	Note     string
}

type countTable struct {
	Scenarios []string
	Rows      []countRow
}

type countRow struct {
	Name   string
	Values []string
}

type chart struct {
	Title string
	SVG   template.HTML
}

func maxRuns(sets []*runSet) int {
	n := 0
	for _, rs := range sets {
		n = max(n, len(rs.Runs))
	}
	return n
}

// profileOf is "kernel 6.18.4" or "stack linux-6"; the kernel engine's
// hosts on other machines follow ("kernel 6.18.4; rx on machine r1:
// kernel 6.1.0").
func profileOf(r *result.WorkloadResult) string {
	switch {
	case r.Kernel != "":
		p := "kernel " + r.Kernel
		for _, s := range r.Sides {
			if s.Machine != "" {
				p += "; " + s.Host + " on machine " + s.Machine + ": kernel " + s.Kernel
			}
		}
		return p
	case r.Stack != "":
		return "stack " + r.Stack
	}
	return "engine " + r.Engine
}

// offloadOrder puts the usual offloads first, in the order people say
// them, then any others sorted.
func offloadOrder(set map[string]bool) []string {
	var out []string
	for _, f := range []string{"tso", "gso", "gro", "lro", "sg", "tx_csum", "rx_csum"} {
		if set[f] {
			out = append(out, f)
			delete(set, f)
		}
	}
	return append(out, sortedKeys(set)...)
}

var stopOrder = result.StopReasons[:]
var ackOrder = []string{"delayed", "quick", "window_update", "dup", "piggyback", "timer"}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func joinInts(set map[int]bool) string {
	var xs []int
	for x := range set {
		xs = append(xs, x)
	}
	sort.Ints(xs)
	var parts []string
	for _, x := range xs {
		parts = append(parts, strconv.Itoa(x))
	}
	return strings.Join(parts, ", ")
}

func ctyString(mv config.MatrixValue) string {
	v := mv.Value
	if v.IsNull() || !v.IsKnown() {
		return "?"
	}
	switch v.Type() {
	case cty.String:
		return strconv.Quote(v.AsString())
	case cty.Bool:
		return strconv.FormatBool(v.True())
	case cty.Number:
		f, _ := v.AsBigFloat().Float64()
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return v.GoString()
}

// Verdict helpers.

func statusClass(s outcome.Status) string {
	return severityClass(severity(s))
}

// severity orders statuses for colouring a row by the worst verdict.
func severity(s outcome.Status) int {
	switch s {
	case outcome.Pass:
		return 0
	case outcome.Inconclusive:
		return 1
	case outcome.Fail:
		return 2
	}
	return 3
}

func severityClass(n int) string {
	return [...]string{"pass", "inconclusive", "fail", "error"}[n]
}

// measured is what the verdict measured (outcome.MeasuredText), an en
// dash when it measured nothing.
func measured(v outcome.Verdict) string {
	if s := outcome.MeasuredText(v); s != "" {
		return s
	}
	return "–"
}

func where(v outcome.Verdict) string {
	if v.Range.Filename == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", v.Range.Filename, v.Range.Start.Line)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Numbers.

// estimateText is a median, scaled, with the half-width of its confidence
// interval when there is one.
func estimateText(e outcome.Estimate, scale float64) string {
	out := formatNumber(e.Center * scale)
	if e.HasCI() {
		if !e.Finite() {
			out += " ±∞"
		} else {
			out += " ±" + formatNumber((e.Hi-e.Lo)/2*scale)
		}
	}
	return out
}

// baselineCells are the baseline's median and the change from it to the
// current median: the relative change, the range of changes the two
// medians' 95% intervals allow, and the Mann-Whitney p-value with two or
// more runs on each side.
func baselineCells(rs *runSet, metric string, cur []float64, curEst outcome.Estimate, scale float64) (baseline, change, class string) {
	if rs == nil {
		return "not in baseline", "", "na"
	}
	bv := rs.Values(metric)
	if len(bv) == 0 {
		return "not in baseline", "", "na"
	}
	be := outcome.Summarize(bv)
	baseline = estimateText(be, scale)
	if be.Center == 0 {
		if curEst.Center == 0 {
			return baseline, "no change", "same"
		}
		return baseline, "from 0", "na"
	}
	rel := curEst.Center/be.Center - 1
	change = signedPct(rel)
	switch {
	case len(bv) < 2 || len(cur) < 2:
		change += " (1 run: no interval)"
		class = "nointerval"
	case !be.Finite() || !curEst.Finite():
		c := outcome.Compare(bv, cur)
		change += fmt.Sprintf(" [±∞] (%s)", c)
		class = classOf(c)
	default:
		lo, hi := math.Inf(-1), math.Inf(1)
		if be.Hi > 0 {
			lo = curEst.Lo/be.Hi - 1
		}
		if be.Lo > 0 {
			hi = curEst.Hi/be.Lo - 1
		}
		c := outcome.Compare(bv, cur)
		change += fmt.Sprintf(" [%s, %s] (%s)", signedPct(lo), signedPct(hi), c)
		class = classOf(c)
	}
	return baseline, change, class
}

func classOf(c outcome.Comparison) string {
	if c.Significant() {
		return "significant"
	}
	return "noise"
}

func signedPct(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+∞"
	case math.IsInf(f, -1):
		return "−∞"
	}
	s := strconv.FormatFloat(f*100, 'f', 1, 64)
	if s == "-0.0" {
		s = "0.0"
	}
	if f > 0 && s != "0.0" {
		s = "+" + s
	}
	return strings.Replace(s, "-", "−", 1) + "%"
}

// formatNumber writes a number with 4 significant digits, all the digits
// of an integer part, and no exponent from 1e-3 to below 1e12.
func formatNumber(f float64) string { return result.FormatNumber(f, 4, 1e12) }

// shortNumber is formatNumber with an exponent from a million on
// ("2.762e10"), for raw metric values such as a chart's labels.
func shortNumber(f float64) string { return result.FormatNumber(f, 4, 1e6) }
