package report

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/outcome"
	"github.com/tsolab/tsolab/result"
)

// fourScenarios is a lab's worth of results: 4 scenarios (tso x mtu), one
// stream workload, reps runs each, 10 s of series sampled every 10 ms
// (the model's rate: 1000 samples, far more than the kernel engine's one a
// second), a 45-bucket send-unit histogram and the model's counters.
// scale multiplies throughput, to make a baseline that differs.
func fourScenarios(reps int, scale float64) *result.Results {
	res := &result.Results{FormatVersion: 1, Lab: "tso-basics", Engine: "sim"}
	i := 0
	for _, tso := range []bool{true, false} {
		for _, mtu := range []int{1500, 9000} {
			name := fmt.Sprintf("tso=%t,mtu=%d", tso, mtu)
			mss := mtu - 52
			for rep := range reps {
				jitter := 1 + 0.01*float64(rep%3) - 0.01
				gbps := 4.0 * scale * jitter
				units := 40.0
				if !tso {
					gbps, units = 2.5*scale*jitter, 1
				}
				r := result.WorkloadResult{
					Scenario: name, Workload: "bulk", Kind: "stream", Repetition: rep,
					Engine: "sim", Stack: "linux-6", MSS: mss,
					Offloads: map[string]map[string]bool{
						"tx0": {"tso": tso, "gso": true, "gro": true, "sg": true, "tx_csum": true},
						"rx0": {"tso": tso, "gso": true, "gro": true, "sg": true, "tx_csum": true},
					},
					Metrics: map[string]float64{
						result.MetricThroughputBps: gbps * 1e9,
						result.MetricBytes:         gbps * 1e9 / 8 * 10,
						result.MetricDurationS:     10,
						result.MetricCPUTxPct:      55 - 8*float64(i) + float64(rep),
						result.MetricCPURxPct:      70 + float64(rep),
						result.MetricCPUTxPerGbit:  (55 - 8*float64(i)) / gbps,
						result.MetricSendUnits:     gbps * 1e9 / 8 * 10 / (units * float64(mss)),
						result.MetricAvgSendBytes:  units * float64(mss),
						result.MetricDataPackets:   gbps * 1e9 / 8 * 10 / float64(mss),
						result.MetricSingleMSSFrac: 1 / units,
						result.MetricRetransmits:   float64(3 + rep),
						result.MetricCaptureLoss:   0,
					},
					StopReasons: map[string]int64{"cwnd": 10, "rwnd": 2, "nagle": 100, "defer": int64(500 * i), "split": 7, "sndbuf": 3000},
					Acks:        map[string]int64{"delayed": 9000, "quick": 12, "window_update": 40, "dup": 0},
					Notes:       []string{"nic.rx0: a note worth showing"},
				}
				r.SendUnitHistogram = make([]int64, 45)
				for b := range r.SendUnitHistogram {
					r.SendUnitHistogram[b] = int64(10 + b)
				}
				if tso {
					r.SendUnitHistogram[44] = 100000
				} else {
					r.SendUnitHistogram[0] = 100000
				}
				for k := 1; k <= 1000; k++ {
					t := float64(k) / 100
					r.Series = append(r.Series, result.Sample{
						T:             t,
						ThroughputBps: gbps * 1e9 * (1 + 0.05*math.Sin(t)),
						CwndSegments:  10 + float64(k%200),
						SendUnitBytes: units * float64(mss) * (1 - 0.1*math.Cos(t)),
					})
				}
				res.Runs = append(res.Runs, r)
			}
			i++
		}
	}
	return res
}

// labFor is a lab whose scenarios are the results' (in reverse, to check
// the lab's order wins).
func labFor(res *result.Results) *config.Lab {
	lab := &config.Lab{Name: res.Lab, Description: "TSO on and off at two MTUs", Engine: config.EngineSim}
	seen := map[string]bool{}
	for _, r := range res.Runs {
		if !seen[r.Scenario] {
			seen[r.Scenario] = true
			sc := &config.Scenario{Name: r.Scenario, Workloads: []*config.Workload{{Name: "bulk", Kind: config.Stream}}}
			lab.Scenarios = append([]*config.Scenario{sc}, lab.Scenarios...)
		}
	}
	return lab
}

func verdicts() []outcome.Verdict {
	rng := hcl.Range{Filename: "lab.tsolab.hcl", Start: hcl.Pos{Line: 12}}
	return []outcome.Verdict{
		{Expect: "floor", Scenario: "tso=true,mtu=1500", Workload: "bulk", Status: outcome.Pass,
			Expression: "result.throughput_bps >= 1e9", Metrics: []string{"throughput_bps"}, Op: ">=",
			Sides: []outcome.Side{{Expr: "result.throughput_bps", Value: 4e9, Runs: 6}, {Expr: "1e9", Value: 1e9}}, Range: rng},
		{Expect: "tso_cuts_cpu", Scenario: "tso=true,mtu=9000", Workload: "bulk", Status: outcome.Fail,
			Expression: "result.cpu_tx_pct < scenario({tso = false}).cpu_tx_pct", Metrics: []string{"cpu_tx_pct"}, Op: "<", Message: "TSO must cut sender CPU",
			Sides:  []outcome.Side{{Expr: "result.cpu_tx_pct", Value: 47, Runs: 6, CI: &[2]float64{46, 48}}, {Expr: "scenario({tso = false}).cpu_tx_pct", Value: 39, Runs: 6, CI: &[2]float64{math.Inf(-1), math.Inf(1)}}},
			Detail: "significant difference (p=0.0022, n=6+6)", Range: rng},
		{Expect: "no_regression", Scenario: "tso=false,mtu=1500", Workload: "bulk", Status: outcome.Inconclusive,
			Expression: "result.throughput_bps >= baseline.throughput_bps", Metrics: []string{"throughput_bps"}, Op: ">=",
			Detail: "no significant difference (p=0.7, n=6+6)", Range: rng},
		{Expect: "broken", Scenario: "tso=false,mtu=9000", Workload: "bulk", Status: outcome.Error,
			Expression: "result.nope > 1", Metrics: []string{"nope"}, Detail: "unsupported attribute", Range: rng},
	}
}

func renderPage(t testing.TB, in Input) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.Bytes()
}

func fullInput() Input {
	res := fourScenarios(6, 1)
	return Input{
		Results:  res,
		Baseline: fourScenarios(6, 1/1.1),
		Lab:      labFor(res),
		Verdicts: verdicts(),
		Version:  "test",
	}
}

// Charts per workload of fourScenarios: 11 metric charts (12 stream
// metrics, capture_loss is zero), 4 histograms, 3 time series, stop
// reasons and ACKs.
const wantCharts = 11 + 4 + 3 + 2

func TestWriteSelfContained(t *testing.T) {
	out := renderPage(t, fullInput())
	page := string(out)

	if n := len(out); n >= 2<<20 {
		t.Errorf("report is %d bytes, want < 2 MiB", n)
	}
	t.Logf("report size: %d bytes", len(out))

	if got := strings.Count(page, "<svg"); got != wantCharts {
		t.Errorf("got %d <svg> elements, want %d", got, wantCharts)
	}
	if got, want := strings.Count(page, "<figure>"), wantCharts; got != want {
		t.Errorf("got %d <figure> elements, want %d", got, want)
	}
	for _, fig := range strings.Split(page, "<figure>")[1:] {
		body, _, _ := strings.Cut(fig, "</figure>")
		if !strings.HasPrefix(body, "<svg") || strings.Count(body, "<svg") != 1 {
			t.Errorf("figure does not hold exactly one inline <svg>: %.80q", body)
		}
	}

	// Nothing that would load from anywhere.
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)<script`),
		regexp.MustCompile(`(?i)<link`),
		regexp.MustCompile(`(?i)<img`),
		regexp.MustCompile(`(?i)<iframe`),
		regexp.MustCompile(`(?i)@import`),
		regexp.MustCompile(`(?i)url\(`),
		regexp.MustCompile(`(?i)\ssrc\s*=`),
		regexp.MustCompile(`(?i)@font-face`),
		regexp.MustCompile(`(?i)href\s*=\s*"(?:https?:)?//`),
		regexp.MustCompile(`(?i)xlink:href\s*=\s*"(?:https?:)?//`),
	} {
		if m := bad.FindString(page); m != "" {
			t.Errorf("report loads a resource: found %q", m)
		}
	}
	for _, m := range regexp.MustCompile(`\shref="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[1], "#") {
			t.Errorf("link %q leaves the page", m[1])
		}
	}
	// The only http URLs are the SVG namespace names, which load nothing.
	for _, m := range regexp.MustCompile(`https?://[^"'\s<>)]*`).FindAllString(page, -1) {
		if m != "http://www.w3.org/2000/svg" && m != "http://www.w3.org/1999/xlink" {
			t.Errorf("unexpected URL %q in the report", m)
		}
	}
}

func TestWriteDeterministic(t *testing.T) {
	a := renderPage(t, fullInput())
	for range 3 {
		if b := renderPage(t, fullInput()); !bytes.Equal(a, b) {
			t.Fatalf("two renderings of the same input differ (%d vs %d bytes)", len(a), len(b))
		}
	}
}

func TestWriteContent(t *testing.T) {
	page := string(renderPage(t, fullInput()))
	for _, want := range []string{
		"<title>tsolab report: tso-basics (sim engine)</title>",
		"TSO on and off at two MTUs",
		"stack linux-6",
		// Offloads in force, per NIC.
		`<td>rx0</td><td class="on">on</td>`,
		`<td>tx0</td><td class="off">off</td>`,
		// Verdicts in colour.
		`<td class="status pass">PASS</td>`,
		`<td class="status fail">FAIL</td>`,
		`<td class="status inconclusive">INCONCLUSIVE</td>`,
		`<td class="status error">ERROR</td>`,
		`<span class="status pass">1 passed</span>`,
		"TSO must cut sender CPU",
		"47 ±1 &lt; 39 ±∞",
		// The failing verdict colours the metric it reads.
		`cell-fail`,
		`<span class="badge fail" title="FAIL: result.cpu_tx_pct &lt; scenario({tso = false}).cpu_tx_pct">tso_cuts_cpu</span>`,
		// Baseline column: 6 runs a side, throughput up 10%.
		"the Mann-Whitney U test between the two sets of runs",
		`<div class="change significant">&#43;10.0% [`, // html/template writes + as &#43;
		// Model counters.
		"Why sends stopped", "ACKs by kind", "<td>window_update</td>",
		"Zero in every scenario, not charted: capture_loss.",
		"nic.rx0: a note worth showing",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// The lab's order of scenarios wins over the results'.
	first := strings.Index(page, "tso=false,mtu=9000")
	second := strings.Index(page, "tso=true,mtu=1500")
	if first < 0 || second < 0 || first > second {
		t.Errorf("scenarios not in the lab's order: tso=false,mtu=9000 at %d, tso=true,mtu=1500 at %d", first, second)
	}
}

func TestWriteWithoutLab(t *testing.T) {
	in := Input{Results: fourScenarios(1, 1), Version: "test"}
	page := string(renderPage(t, in))
	for _, want := range []string{"not judged", "1 per workload: no confidence intervals"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, unwanted := range []string{`id="verdicts"`, "Baseline</th>", "±"} {
		if strings.Contains(page, unwanted) {
			t.Errorf("report without lab, baseline or repeats has %q", unwanted)
		}
	}
	if got := strings.Count(page, "<svg"); got != wantCharts {
		t.Errorf("got %d charts, want %d", got, wantCharts)
	}
}

func TestWriteKernelResults(t *testing.T) {
	// A kernel run: one sample a second, no model counters, a histogram
	// that stops at 7 MSS.
	res := fourScenarios(1, 1)
	res.Engine = "kernel"
	for i := range res.Runs {
		r := &res.Runs[i]
		r.Engine, r.Stack, r.Kernel = "kernel", "", "6.18.4"
		r.StopReasons, r.Acks = nil, nil
		r.SendUnitHistogram = r.SendUnitHistogram[:7]
		r.Series = []result.Sample{{T: 1, ThroughputBps: 1e9, CwndSegments: 10, SendUnitBytes: 3000}}
	}
	res.Runs[0].Captures = []result.CaptureFile{{NIC: "tx0", Interface: "tx0", Direction: "out", File: "caps/tso=true/bulk/tx0.pcapng", Frames: 1234, DataPackets: 1200, Dropped: 7}}
	page := string(renderPage(t, Input{Results: res}))
	if !strings.Contains(page, "kernel 6.18.4") {
		t.Errorf("report lacks the kernel release")
	}
	if !strings.Contains(page, "<code>caps/tso=true/bulk/tx0.pcapng</code>") || !strings.Contains(page, ">1200<") || !strings.Contains(page, ">7<") {
		t.Errorf("report does not list the capture file with its counts")
	}
	if strings.Contains(page, "Model counters") {
		t.Errorf("kernel report shows model counters")
	}
	if got, want := strings.Count(page, "<svg"), 11+4+3; got != want {
		t.Errorf("got %d charts, want %d", got, want)
	}
}

func TestWriteNoResults(t *testing.T) {
	if err := Write(&bytes.Buffer{}, Input{}); err == nil {
		t.Errorf("Write without results: got no error")
	}
}

func TestNumbers(t *testing.T) {
	tests := []struct {
		f           float64
		format, sci string
	}{
		{0, "0", "0"},
		{27.6166, "27.62", "27.62"},
		{0.002579, "0.002579", "0.002579"},
		{1517123, "1517123", "1.517e6"},
		{2.7616e10, "27616000000", "2.762e10"},
		{-3.5, "-3.5", "-3.5"},
		{5e6, "5000000", "5e6"},
	}
	for _, tt := range tests {
		if got := formatNumber(tt.f); got != tt.format {
			t.Errorf("formatNumber(%v) = %q, want %q", tt.f, got, tt.format)
		}
		if got := shortNumber(tt.f); got != tt.sci {
			t.Errorf("shortNumber(%v) = %q, want %q", tt.f, got, tt.sci)
		}
	}
	pcts := []struct {
		f    float64
		want string
	}{{0.1, "+10.0%"}, {-0.034, "−3.4%"}, {0, "0.0%"}, {-0.00001, "0.0%"}, {math.Inf(1), "+∞"}}
	for _, tt := range pcts {
		if got := signedPct(tt.f); got != tt.want {
			t.Errorf("signedPct(%v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}

func TestBaselineCells(t *testing.T) {
	runs := func(vals ...float64) *runSet {
		rs := &runSet{}
		for i, v := range vals {
			rs.Runs = append(rs.Runs, result.WorkloadResult{Repetition: i, Metrics: map[string]float64{"m": v}})
		}
		return rs
	}
	est := func(vals ...float64) outcome.Estimate { return outcome.Summarize(vals) }
	six := []float64{10, 10.1, 9.9, 10.2, 9.8, 10}
	up := []float64{11, 11.1, 10.9, 11.2, 10.8, 11}
	tests := []struct {
		name                 string
		base                 *runSet
		cur                  []float64
		wantBase, wantChange string
		wantClass            string
	}{
		{"missing", nil, []float64{1}, "not in baseline", "", "na"},
		{"one run", runs(10), []float64{11}, "10", "+10.0% (1 run: no interval)", "nointerval"},
		{"both zero", runs(0), []float64{0}, "0", "no change", "same"},
		{"from zero", runs(0), []float64{3}, "0", "from 0", "na"},
		{"six runs up", runs(six...), up, "10 ±0.2", "+10.0% [+5.9%, +14.3%] (p=0.0022, n=6+6)", "significant"},
		{"three runs", runs(10, 10.1, 9.9), []float64{10, 10.2, 9.8}, "10 ±∞", "0.0% [±∞] (p=1, n=3+3)", "noise"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotBase, gotChange, gotClass := baselineCells(tt.base, "m", tt.cur, est(tt.cur...), 1)
			if gotBase != tt.wantBase || gotChange != tt.wantChange || gotClass != tt.wantClass {
				t.Errorf("got (%q, %q, %q), want (%q, %q, %q)", gotBase, gotChange, gotClass, tt.wantBase, tt.wantChange, tt.wantClass)
			}
		})
	}
}

// BenchmarkWrite renders the 4-scenario, 10 s report; B/report is its
// size.
func BenchmarkWrite(b *testing.B) {
	in := fullInput()
	var size int
	for b.Loop() {
		var buf bytes.Buffer
		if err := Write(&buf, in); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
	}
	b.ReportMetric(float64(size), "B/report")
}

// BenchmarkEmptyChart renders a chart with no data (title, axes and
// their labels in the report's fonts) at the report's chart size, as the
// report does (fonts=named: the SVG names Liberation Sans) and with the
// fonts embedded; B/chart is its size, the cost that keeps embedding off.
func BenchmarkEmptyChart(b *testing.B) {
	for _, embed := range []bool{false, true} {
		name := "fonts=named"
		if embed {
			name = "fonts=embedded"
		}
		b.Run(name, func(b *testing.B) {
			var size int
			for b.Loop() {
				c := vgsvg.NewWith(vgsvg.UseWH(chartW, chartH), vgsvg.EmbedFonts(embed))
				newPlot("Throughput", "scenario", "Gb/s").Draw(draw.New(c))
				var buf bytes.Buffer
				if _, err := c.WriteTo(&buf); err != nil {
					b.Fatal(err)
				}
				size = buf.Len()
			}
			b.ReportMetric(float64(size), "B/chart")
		})
	}
}

func TestWriteEdgeCases(t *testing.T) {
	rr := fourScenarios(1, 1)
	for i := range rr.Runs {
		r := &rr.Runs[i]
		r.Workload, r.Kind = "ping", "rr"
		r.Metrics[result.MetricTransactionsPerS] = 20000
		r.Metrics[result.MetricLatencyP50us] = 40
		r.Metrics[result.MetricLatencyP99us] = 90
	}
	mixed := fourScenarios(1, 1)
	mixed.Runs = append(mixed.Runs, rr.Runs[0]) // rr only in the first scenario
	tests := []struct {
		name   string
		res    *result.Results
		want   []string
		charts int
	}{
		{"no runs", &result.Results{FormatVersion: 1, Lab: "empty", Engine: "sim"}, []string{"tsolab report: empty (sim engine)"}, 0},
		{"rr", rr, []string{"Latency p99", "Transactions"}, 14 + 4 + 3 + 2},
		{"a workload in one scenario only", mixed, []string{"Workload ping", "Workload bulk"}, (11 + 4 + 3 + 2) + (14 + 1 + 3 + 2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := string(renderPage(t, Input{Results: tt.res}))
			for _, w := range tt.want {
				if !strings.Contains(page, w) {
					t.Errorf("report lacks %q", w)
				}
			}
			if got := strings.Count(page, "<svg"); got != tt.charts {
				t.Errorf("got %d charts, want %d", got, tt.charts)
			}
		})
	}
}

// A run whose hosts live on other machines names their machines and
// kernels beside the client's.
func TestProfileNamesOtherMachines(t *testing.T) {
	r := &result.WorkloadResult{Engine: "kernel", Kernel: "6.18.4", Sides: []result.Side{
		{Side: "client", Host: "tx", Kernel: "6.18.4"},
		{Side: "server", Host: "rx", Machine: "r1", Kernel: "6.1.0"},
	}}
	if got, want := profileOf(r), "kernel 6.18.4; rx on machine r1: kernel 6.1.0"; got != want {
		t.Errorf("profileOf = %q, want %q", got, want)
	}
}
