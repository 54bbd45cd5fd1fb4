package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/tsolab/tsolab/outcome"
	"github.com/tsolab/tsolab/result"
)

// Chart sizes. Two charts sit side by side on a 1400 px wide page.
const (
	chartW = 5 * vg.Inch
	chartH = 2.8 * vg.Inch
	// plotAreaW is about the width of the data area of a chart: what is
	// left beside the Y axis, its label and tick labels.
	plotAreaW = chartW - 0.9*vg.Inch
)

// sansFont is the text of every chart. vgsvg does not embed fonts: the
// SVG names "Liberation Sans" and the browser uses it or a sans-serif
// with the same metrics (Arial, Helvetica), so the page stays small.
var sansFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

var baselineColor = color.RGBA{0xa0, 0xa0, 0xa0, 0xff}

// palette is the colour of each scenario, the same in every chart and
// table.
type palette map[string]color.Color

func scenarioColor(i int) color.Color {
	c := plotutil.DarkColors
	return c[i%len(c)]
}

func hexColor(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

func styled(size vg.Length) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(sansFont, size),
		XAlign:  draw.XCenter,
		YAlign:  draw.YTop,
		Handler: plot.DefaultTextHandler,
	}
}

// newPlot is a plot with the report's fonts.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sansFont, 11)
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sansFont, 10)
		a.Tick.Label.Font = font.From(sansFont, 9)
	}
	p.Legend.TextStyle.Font = font.From(sansFont, 9)
	p.X.Tick.Marker = numberTicks{}
	p.Y.Tick.Marker = numberTicks{}
	return p
}

// numberTicks are gonum's default ticks labelled as the tables write
// numbers ("2.5e6", not "2500000.00").
type numberTicks struct{}

func (numberTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = shortNumber(ts[i].Value)
		}
	}
	return ts
}

// render draws p as an <svg> element to put inline in the page.
func render(p *plot.Plot, w, h vg.Length) (template.HTML, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", err
	}
	s := buf.String()
	// Drop the XML prolog and generator comment: the SVG goes inside HTML.
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("report: vgsvg wrote no <svg> element")
	}
	return template.HTML(s[i:]), nil // vgsvg escapes every text it writes
}

// bar is one bar with its interval (lo == hi == v without one).
type bar struct {
	v, lo, hi float64
	ok        bool // false: no value (not in the baseline)
}

func estimateBar(vals []float64, scale float64) bar {
	if len(vals) == 0 {
		return bar{}
	}
	e := outcome.Summarize(vals)
	b := bar{v: e.Center * scale, lo: e.Center * scale, hi: e.Center * scale, ok: true}
	if e.HasCI() && e.Finite() {
		b.lo, b.hi = e.Lo*scale, e.Hi*scale
	}
	return b
}

// ciBars are error bars from the medians' confidence intervals.
type ciBars struct {
	x    []float64
	bars []bar
}

func (c ciBars) Len() int                    { return len(c.x) }
func (c ciBars) XY(i int) (float64, float64) { return c.x[i], c.bars[i].v }
func (c ciBars) YError(i int) (float64, float64) {
	return c.bars[i].v - c.bars[i].lo, c.bars[i].hi - c.bars[i].v
}

// metricCharts draws one bar chart per metric across the scenarios, with
// grey baseline bars beside the scenario's when there is a baseline, and
// the 95% interval of the median as error bars with repeated runs.
// Metrics that are zero everywhere get no chart; they are returned apart.
func metricCharts(sets []*runSet, base map[key]*runSet, pal palette, metrics []string) ([]chart, []string, error) {
	var names []string
	for _, rs := range sets {
		names = append(names, rs.Scenario)
	}
	ordered := result.Charted(metrics) // the model counters (acks_*) have charts of their own
	var charts []chart
	var zero []string
	for _, m := range ordered {
		mi := info(m)
		cur := make([]bar, len(sets))
		old := make([]bar, len(sets))
		nonzero, hasBase := false, false
		for i, rs := range sets {
			cur[i] = estimateBar(rs.Values(m), mi.Scale)
			if b := base[key{Scenario: rs.Scenario, Workload: rs.Workload}]; b != nil {
				old[i] = estimateBar(b.Values(m), mi.Scale)
				hasBase = hasBase || old[i].ok
			}
			nonzero = nonzero || (cur[i].ok && cur[i].v != 0) || (old[i].ok && old[i].v != 0)
		}
		if !nonzero {
			zero = append(zero, m)
			continue
		}
		ylabel := mi.Display
		p := newPlot(mi.Label, "", ylabel)
		if err := addBars(p, names, cur, old, hasBase, pal); err != nil {
			return nil, nil, err
		}
		svg, err := render(p, chartW, chartH)
		if err != nil {
			return nil, nil, err
		}
		charts = append(charts, chart{Title: mi.Label, SVG: svg})
	}
	return charts, zero, nil
}

func addBars(p *plot.Plot, names []string, cur, old []bar, hasBase bool, pal palette) error {
	n := len(names)
	slot := plotAreaW / vg.Length(n)
	width := slot * 0.6
	shift := 0.0
	if hasBase {
		width = slot * 0.34
		shift = 0.19
	}
	top := 0.0
	var at plotter.XYs
	var labels []string
	var errs ciBars
	for i := range names {
		add := func(b bar, x float64, c color.Color) error {
			if !b.ok {
				return nil
			}
			bc, err := plotter.NewBarChart(plotter.Values{b.v}, width)
			if err != nil {
				return err
			}
			bc.XMin = x
			bc.Color = c
			bc.LineStyle.Width = 0
			p.Add(bc)
			if b.hi > b.lo {
				errs.x = append(errs.x, x)
				errs.bars = append(errs.bars, b)
			}
			top = math.Max(top, b.hi)
			at = append(at, plotter.XY{X: x, Y: b.hi})
			labels = append(labels, formatNumber(b.v))
			return nil
		}
		if hasBase {
			if err := add(old[i], float64(i)-shift, baselineColor); err != nil {
				return err
			}
		}
		if err := add(cur[i], float64(i)+shift, pal[names[i]]); err != nil {
			return err
		}
	}
	if errs.Len() > 0 {
		eb, err := plotter.NewYErrorBars(errs)
		if err != nil {
			return err
		}
		eb.LineStyle.Width = vg.Points(1)
		p.Add(eb)
	}
	// Value labels above each bar (above its interval).
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: at, Labels: labels})
	if err != nil {
		return err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i] = styled(8)
		lb.TextStyle[i].YAlign = draw.YBottom
	}
	lb.Offset = vg.Point{Y: vg.Points(2)}
	p.Add(lb)

	p.NominalX(names...)
	tickLabels(p, names)
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.Y.Min = 0
	if top > 0 {
		p.Y.Max = top * 1.18
	}
	if hasBase {
		p.Title.Text += " (grey: baseline)"
	}
	return nil
}

// tickLabels tilts the category names when they would not fit side by
// side.
func tickLabels(p *plot.Plot, names []string) {
	longest := 0
	for _, s := range names {
		longest = max(longest, len(s))
	}
	// About 5 pt per character at 9 pt.
	if vg.Length(longest*5*len(names)) > plotAreaW*0.95 {
		p.X.Tick.Label.Rotation = math.Pi / 12
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
		p.X.Tick.Label.Font.Size = 8
	}
}

// histogramCharts draws, per scenario, the send-unit size histogram in
// MSS units as the share of send units, summed over repeated runs.
// The charts of scenarios with the same MSS span the same sizes, so TSO on
// and off compare at a glance.
func histogramCharts(sets []*runSet, pal palette) ([]chart, error) {
	all := make([][]int64, len(sets))
	buckets := map[int]int{} // by MSS: the largest bucket in use
	for j, rs := range sets {
		for _, r := range rs.Runs {
			for i, c := range r.SendUnitHistogram {
				if i >= len(all[j]) {
					all[j] = append(all[j], make([]int64, i+1-len(all[j]))...)
				}
				all[j][i] += c
			}
		}
		mss := rs.Runs[0].MSS
		buckets[mss] = max(buckets[mss], 2)
		for i := len(all[j]) - 1; i >= 0; i-- {
			if all[j][i] != 0 {
				buckets[mss] = max(buckets[mss], i+1)
				break
			}
		}
	}
	var charts []chart
	for j, rs := range sets {
		counts := all[j]
		var total, segs int64
		for i, c := range counts {
			total += c
			segs += c * int64(i+1)
		}
		title := rs.Scenario + ": no send units recorded"
		if total > 0 {
			title = fmt.Sprintf("%s: %d send units, mean %.1f MSS", rs.Scenario, total, float64(segs)/float64(total))
		}
		p := newPlot(title, "send-unit size (MSS)", "% of send units")
		if total > 0 {
			h := &plotter.Histogram{FillColor: pal[rs.Scenario], Width: 1}
			h.LineStyle = draw.LineStyle{Color: color.White, Width: vg.Points(0.3)}
			for i, c := range counts {
				h.Bins = append(h.Bins, plotter.HistogramBin{Min: float64(i) + 0.5, Max: float64(i) + 1.5, Weight: 100 * float64(c) / float64(total)})
			}
			p.Add(h)
		}
		p.X.Min, p.X.Max = 0.5, float64(buckets[rs.Runs[0].MSS])+0.5
		p.X.Tick.Marker = intTicks{}
		p.Y.Min = 0
		svg, err := render(p, chartW, chartH)
		if err != nil {
			return nil, err
		}
		charts = append(charts, chart{Title: title, SVG: svg})
	}
	return charts, nil
}

// intTicks marks whole numbers: every one up to 10, then a round step.
type intTicks struct{}

func (intTicks) Ticks(lo, hi float64) []plot.Tick {
	first, last := math.Ceil(lo), math.Floor(hi)
	span := last - first
	step := 1.0
	for _, s := range []float64{1, 2, 5, 10, 20, 50, 100} {
		step = s
		if span/s <= 12 {
			break
		}
	}
	var ticks []plot.Tick
	for v := first; v <= last; v++ {
		t := plot.Tick{Value: v}
		if math.Mod(v, step) == 0 || (step > 1 && v == 1) {
			t.Label = fmt.Sprintf("%.0f", v)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// seriesCharts draws throughput, cwnd and send-unit size over time, one
// line per scenario (the first run of each).
func seriesCharts(sets []*runSet, pal palette) ([]chart, error) {
	type axis struct {
		title, unit string
		y           func(result.Sample, int) (float64, bool)
	}
	axes := []axis{
		{"Throughput over time", "Gb/s", func(s result.Sample, _ int) (float64, bool) { return s.ThroughputBps * 1e-9, true }},
		{"Congestion window", "segments", func(s result.Sample, _ int) (float64, bool) { return s.CwndSegments, true }},
		{"Send-unit size over time", "MSS", func(s result.Sample, mss int) (float64, bool) {
			if mss <= 0 {
				return 0, false
			}
			return s.SendUnitBytes / float64(mss), true
		}},
	}
	samples := false
	for _, rs := range sets {
		samples = samples || len(rs.Runs[0].Series) > 0
	}
	if !samples {
		return nil, nil
	}
	var charts []chart
	for _, a := range axes {
		p := newPlot(a.title, "time (s)", a.unit)
		top := 0.0
		for _, rs := range sets {
			r := rs.Runs[0]
			var xys plotter.XYs
			for _, s := range r.Series {
				if y, ok := a.y(s, r.MSS); ok {
					xys = append(xys, plotter.XY{X: s.T, Y: y})
					top = math.Max(top, y)
				}
			}
			if len(xys) == 0 {
				continue
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, err
			}
			l.Color = pal[rs.Scenario]
			l.Width = vg.Points(1.5)
			p.Add(l)
			if len(xys) == 1 {
				// One sample draws no line: mark it.
				sc, err := plotter.NewScatter(xys)
				if err != nil {
					return nil, err
				}
				sc.Color = pal[rs.Scenario]
				p.Add(sc)
			}
		}
		p.X.Min = 0
		p.Y.Min = 0
		if top > 0 {
			p.Y.Max = top * 1.1
		}
		svg, err := render(p, chartW, chartH)
		if err != nil {
			return nil, err
		}
		charts = append(charts, chart{Title: a.title, SVG: svg})
	}
	return charts, nil
}

// countChart draws counters of the model (stop reasons, ACK kinds) as
// grouped bars, one group per counter and one bar per scenario (the
// median over repeated runs), and the same numbers as a table.
func countChart(sets []*runSet, pal palette, title, unit string, known []string, get func(result.WorkloadResult) map[string]int64) ([]chart, *countTable, error) {
	have := map[string]bool{}
	for _, rs := range sets {
		for _, r := range rs.Runs {
			for k := range get(r) {
				have[k] = true
			}
		}
	}
	if len(have) == 0 {
		return nil, nil, nil
	}
	var cats []string
	for _, k := range known {
		if have[k] {
			cats = append(cats, k)
			delete(have, k)
		}
	}
	cats = append(cats, sortedKeys(have)...)

	table := &countTable{}
	for _, rs := range sets {
		table.Scenarios = append(table.Scenarios, rs.Scenario)
	}
	vals := make([][]float64, len(sets)) // [scenario][category]
	for j, rs := range sets {
		vals[j] = make([]float64, len(cats))
		for c, k := range cats {
			var per []float64
			for _, r := range rs.Runs {
				per = append(per, float64(get(r)[k]))
			}
			vals[j][c] = outcome.Summarize(per).Center
		}
	}
	top := 0.0
	for c, k := range cats {
		row := countRow{Name: k}
		for j := range sets {
			row.Values = append(row.Values, formatNumber(vals[j][c]))
			top = math.Max(top, vals[j][c])
		}
		table.Rows = append(table.Rows, row)
	}

	p := newPlot(title, "", unit)
	m := len(sets)
	group := 0.8
	slot := plotAreaW / vg.Length(len(cats))
	width := slot * vg.Length(group/float64(m)) * 0.9
	for j, rs := range sets {
		bc, err := plotter.NewBarChart(plotter.Values(vals[j]), width)
		if err != nil {
			return nil, nil, err
		}
		bc.XMin = (float64(j) - float64(m-1)/2) * group / float64(m)
		bc.Color = pal[rs.Scenario]
		bc.LineStyle.Width = 0
		p.Add(bc)
	}
	p.NominalX(cats...)
	tickLabels(p, cats)
	p.X.Min, p.X.Max = -0.5, float64(len(cats))-0.5
	p.Y.Min = 0
	if top > 0 {
		p.Y.Max = top * 1.08
	}
	svg, err := render(p, chartW, chartH)
	if err != nil {
		return nil, nil, err
	}
	return []chart{{Title: title, SVG: svg}}, table, nil
}
