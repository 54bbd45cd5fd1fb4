package report

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/outcome"
	"github.com/tsolab/tsolab/provenance"
	"github.com/tsolab/tsolab/result"
)

// pageBuilder makes the page's data in steps: the header, the scenarios
// with their offloads, the verdicts, then one section per workload.
type pageBuilder struct {
	in                   Input
	p                    *pageData
	scenarios, workloads []string // outcome.OrderOf's
	idx, base            map[key]*runSet
	pal                  palette
	colors               map[string]template.CSS
	byMetric             map[verdictKey][]outcome.Verdict // the verdicts that read each metric
}

// verdictKey names one metric of one workload in one scenario.
type verdictKey struct{ scenario, workload, metric string }

func build(in Input) (*pageData, error) {
	o := outcome.OrderOf(in.Lab, in.Results)
	b := &pageBuilder{
		in: in, scenarios: o.Scenarios, workloads: o.Workloads,
		idx: result.Index(in.Results), base: result.Index(in.Baseline),
		pal: palette{}, colors: map[string]template.CSS{},
	}
	for i, s := range b.scenarios {
		b.pal[s] = scenarioColor(i)
		b.colors[s] = template.CSS(hexColor(b.pal[s]))
	}
	b.header()
	b.scenarioRows()
	b.verdictRows()
	for _, w := range b.workloads {
		sec, err := b.workloadSection(w)
		if err != nil {
			return nil, err
		}
		b.p.Workloads = append(b.p.Workloads, sec)
	}
	return b.p, nil
}

// header is the lab, the engine, the counts and where the results (and
// the baseline) came from.
func (b *pageBuilder) header() {
	in, res := b.in, b.in.Results
	p := &pageData{
		Lab:         res.Lab,
		Engine:      res.Engine,
		Judged:      in.Lab != nil,
		Counts:      outcome.Count(in.Verdicts),
		Strict:      in.Strict,
		HasBaseline: in.Baseline != nil,
		Version:     in.Version,
		Provenance:  res.Provenance.Summary(),
	}
	if in.Lab != nil {
		p.Description = in.Lab.Description
		if p.Lab == "" {
			p.Lab = in.Lab.Name
		}
	}
	if in.Baseline != nil {
		p.BaselineName = fmt.Sprintf("%s, engine %s, %d runs", in.Baseline.Lab, in.Baseline.Engine, len(in.Baseline.Runs))
		p.BaselineChanged = provenance.Compare(in.Baseline.Provenance, res.Provenance)
	}
	p.Title = fmt.Sprintf("tsolab report: %s (%s engine)", p.Lab, p.Engine)
	b.p = p
}

// nicOffloads is the offloads of one NIC in one scenario's first run.
type nicOffloads struct {
	scenario, nic string
	flags         map[string]bool
}

// scenarioRows lists each scenario that ran with its profile, MSS, runs
// and matrix values, and the offloads of its NICs.
func (b *pageBuilder) scenarioRows() {
	p := b.p
	profiles := map[string]bool{}
	flagSet := map[string]bool{}
	var nics []nicOffloads
	for _, s := range b.scenarios {
		si, first := b.scenarioInfo(s)
		if first == nil {
			continue
		}
		profiles[si.Profile] = true
		p.Scenarios = append(p.Scenarios, si)
		for _, nic := range sortedKeys(first.Offloads) {
			nics = append(nics, nicOffloads{s, nic, first.Offloads[nic]})
			for f := range first.Offloads[nic] {
				flagSet[f] = true
			}
		}
	}
	p.Profiles = sortedKeys(profiles)
	p.OffloadFlags = offloadOrder(flagSet)
	for i, n := range nics {
		row := nicRow{Scenario: n.scenario, Color: b.colors[n.scenario], NIC: n.nic}
		if i == 0 || nics[i-1].scenario != n.scenario {
			for j := i; j < len(nics) && nics[j].scenario == n.scenario; j++ {
				row.Span++
			}
		}
		for _, f := range p.OffloadFlags {
			on, ok := n.flags[f]
			switch {
			case !ok:
				row.Flags = append(row.Flags, flagCell{"–", "na"})
			case on:
				row.Flags = append(row.Flags, flagCell{"on", "on"})
			default:
				row.Flags = append(row.Flags, flagCell{"off", "off"})
			}
		}
		p.NICRows = append(p.NICRows, row)
	}
}

// scenarioInfo describes scenario s, and returns its first run (nil when
// it has none).
func (b *pageBuilder) scenarioInfo(s string) (scenarioInfo, *result.WorkloadResult) {
	si := scenarioInfo{Name: s, Color: b.colors[s]}
	var first *result.WorkloadResult
	mss := map[int]bool{}
	for _, w := range b.workloads {
		if rs := b.idx[key{Scenario: s, Workload: w}]; rs != nil {
			if first == nil {
				first = &rs.Runs[0]
			}
			si.Runs += len(rs.Runs)
			for _, r := range rs.Runs {
				mss[r.MSS] = true
			}
		}
	}
	if first == nil {
		return si, nil
	}
	si.Profile = profileOf(first)
	si.MSS = joinInts(mss)
	if b.in.Lab != nil {
		if sc := b.in.Lab.Scenario(s); sc != nil {
			var parts []string
			for _, mv := range sc.Matrix {
				parts = append(parts, mv.Name+" = "+ctyString(mv))
			}
			si.Matrix = strings.Join(parts, ", ")
		}
	}
	return si, first
}

// verdictRows lists the verdicts, and notes which metric cells each
// colours.
func (b *pageBuilder) verdictRows() {
	b.byMetric = map[verdictKey][]outcome.Verdict{}
	for _, v := range b.in.Verdicts {
		b.p.Verdicts = append(b.p.Verdicts, verdictRow{
			Expect: v.Expect, Scenario: v.Scenario, Workload: v.Workload,
			Status: v.Status.String(), Class: statusClass(v.Status),
			Expression: oneLine(v.Expression), Measured: measured(v),
			Detail: v.Detail, Message: v.Message, Where: where(v),
			BaselineChanged: v.BaselineChanged,
		})
		for _, m := range v.Metrics {
			k := verdictKey{v.Scenario, v.Workload, m}
			b.byMetric[k] = append(b.byMetric[k], v)
		}
	}
}

// workloadSection is workload w across the scenarios: its metric table,
// charts, notes and capture files.
func (b *pageBuilder) workloadSection(w string) (workloadSection, error) {
	var sets []*runSet
	rr := false
	for _, s := range b.scenarios {
		if rs := b.idx[key{Scenario: s, Workload: w}]; rs != nil {
			sets = append(sets, rs)
			rr = rr || rs.Kind == string(config.RR)
			b.p.MaxRuns = max(b.p.MaxRuns, len(rs.Runs))
		}
	}
	sec := workloadSection{Name: w, Kind: sets[0].Kind}
	for _, rs := range sets {
		sec.Columns = append(sec.Columns, columnHead{Name: rs.Scenario, Color: b.colors[rs.Scenario], Runs: len(rs.Runs)})
	}
	metrics := metricsOf(sets, rr)
	for _, m := range metrics {
		sec.Rows = append(sec.Rows, b.metricRow(w, m, sets))
	}
	if err := b.charts(&sec, sets, metrics); err != nil {
		return sec, err
	}
	for _, rs := range sets {
		seen := map[string]bool{}
		for _, r := range rs.Runs {
			for _, n := range r.Notes {
				if !seen[n] {
					seen[n] = true
					sec.Notes = append(sec.Notes, noteRow{rs.Scenario, n})
				}
			}
			for _, c := range r.Captures {
				sec.Captures = append(sec.Captures, captureRow{rs.Scenario, c})
			}
		}
	}
	return sec, nil
}

// metricRow is metric m of workload w in each of sets: the estimate, the
// change from the baseline, and the verdicts that read it.
func (b *pageBuilder) metricRow(w, m string, sets []*runSet) metricRow {
	mi := info(m)
	row := metricRow{Metric: m, Name: mi.Label, Unit: mi.Display}
	for _, rs := range sets {
		vals := rs.Values(m)
		if len(vals) == 0 {
			row.Cells = append(row.Cells, metricCell{})
			continue
		}
		est := outcome.Summarize(vals)
		cell := metricCell{Present: true, Value: estimateText(est, mi.Scale), Runs: len(vals)}
		if b.in.Baseline != nil {
			cell.Baseline, cell.Change, cell.ChangeClass = baselineCells(b.base[key{Scenario: rs.Scenario, Workload: w}], m, vals, est, mi.Scale)
		}
		worst := -1
		for _, v := range b.byMetric[verdictKey{rs.Scenario, w, m}] {
			cell.Badges = append(cell.Badges, badge{Text: v.Expect, Class: statusClass(v.Status), Title: v.Status.String() + ": " + oneLine(v.Expression)})
			worst = max(worst, severity(v.Status))
		}
		if worst >= 0 {
			cell.Class = "cell-" + severityClass(worst)
		}
		row.Cells = append(row.Cells, cell)
	}
	return row
}

// charts draws a workload's charts: a bar chart per metric, the send-unit
// histogram, the time series, and for the model why sends stopped and
// the ACKs by kind.
func (b *pageBuilder) charts(sec *workloadSection, sets []*runSet, metrics []string) error {
	var err error
	if sec.Metrics, sec.AllZero, err = metricCharts(sets, b.base, b.pal, metrics); err != nil {
		return err
	}
	if sec.Hists, err = histogramCharts(sets, b.pal); err != nil {
		return err
	}
	if sec.Series, err = seriesCharts(sets, b.pal); err != nil {
		return err
	}
	if maxRuns(sets) > 1 {
		sec.SeriesRep = "the first run of each scenario"
	}
	for _, rs := range sets {
		if rs.Runs[0].StopReasons != nil || rs.Runs[0].Acks != nil {
			sec.Model = true
		}
	}
	if !sec.Model {
		return nil
	}
	stops := func(r result.WorkloadResult) map[string]int64 { return r.StopReasons }
	acks := func(r result.WorkloadResult) map[string]int64 { return r.Acks }
	if sec.Stops, sec.StopTable, err = countChart(sets, b.pal, "Why sends stopped", "stops", stopOrder, stops); err != nil {
		return err
	}
	sec.Acks, sec.AckTable, err = countChart(sets, b.pal, "ACKs by kind", "ACKs", ackOrder, acks)
	return err
}
