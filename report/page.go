package report

import "html/template"

// page is the whole document. It loads nothing: the style is inline, the
// charts are inline SVG, and there is no script.
var page = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="tsolab {{.Version}}">
<title>{{.Title}}</title>
<style>
:root { --pass:#1a7f37; --pass-bg:#dafbe1; --fail:#cf222e; --fail-bg:#ffebe9;
  --inc:#9a6700; --inc-bg:#fff8c5; --err:#8250df; --err-bg:#fbefff; --line:#d0d7de; --muted:#57606a; }
* { box-sizing: border-box; }
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 0 auto; padding: 16px 24px 48px;
  max-width: 1400px; color: #1f2328; background: #fff; font-size: 14px; line-height: 1.4; }
h1 { font-size: 22px; margin: 8px 0 4px; }
h2 { font-size: 18px; margin: 32px 0 8px; padding-top: 8px; border-top: 2px solid var(--line); }
h3 { font-size: 15px; margin: 20px 0 6px; }
p.lead { color: var(--muted); margin: 0 0 12px; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0 16px; }
dl.meta dt { font-weight: bold; }
dl.meta dd { margin: 0; }
nav ul { margin: 4px 0 8px; padding-left: 20px; }
table { border-collapse: collapse; margin: 6px 0 12px; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
code { font-family: "Liberation Mono", Menlo, Consolas, monospace; font-size: 12px; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 6px; vertical-align: -1px; }
.on { background: var(--pass-bg); color: var(--pass); text-align: center; }
.off { background: #eaeef2; color: var(--muted); text-align: center; }
.na { color: var(--muted); text-align: center; }
.status { font-weight: bold; white-space: nowrap; }
.status.pass, .badge.pass { color: var(--pass); background: var(--pass-bg); }
.status.fail, .badge.fail { color: var(--fail); background: var(--fail-bg); }
.status.inconclusive, .badge.inconclusive { color: var(--inc); background: var(--inc-bg); }
.status.error, .badge.error { color: var(--err); background: var(--err-bg); }
.badge { display: inline-block; padding: 0 6px; margin: 1px 2px; border-radius: 10px; font-size: 12px; font-weight: bold; }
td.cell-pass { background: var(--pass-bg); }
td.cell-fail { background: var(--fail-bg); }
td.cell-inconclusive { background: var(--inc-bg); }
td.cell-error { background: var(--err-bg); }
.base, .change { font-size: 12px; color: var(--muted); }
.change.significant { font-weight: bold; color: #1f2328; }
.counts span { margin-right: 12px; padding: 1px 8px; border-radius: 10px; font-weight: bold; }
.grid { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 8px 16px; }
figure { margin: 0; }
figure svg { width: 100%; height: auto; display: block; }
.legend span { margin-right: 16px; white-space: nowrap; }
.muted { color: var(--muted); }
footer { margin-top: 32px; color: var(--muted); font-size: 12px; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .Description}}<p class="lead">{{.Description}}</p>{{end}}
<dl class="meta">
<dt>Lab</dt><dd>{{.Lab}}</dd>
<dt>Engine</dt><dd>{{.Engine}}</dd>
<dt>Kernel or stack</dt><dd>{{range $i, $p := .Profiles}}{{if $i}}; {{end}}{{$p}}{{end}}</dd>
<dt>Runs</dt><dd>{{if gt .MaxRuns 1}}up to {{.MaxRuns}} per workload; numbers are medians ± the half-width of their 95% confidence interval (±∞ below 6 runs){{else}}1 per workload: no confidence intervals{{end}}</dd>
<dt>Baseline</dt><dd>{{if .HasBaseline}}{{.BaselineName}}{{if .BaselineChanged}}<br><span class="status inconclusive">ran on something else</span>{{range .BaselineChanged}}<br>{{.}}{{end}}{{end}}{{else}}none{{end}}</dd>
{{if .Provenance}}<dt>Provenance</dt><dd>{{range $i, $l := .Provenance}}{{if $i}}<br>{{end}}{{$l}}{{end}}</dd>{{end}}
<dt>Expectations</dt><dd class="counts">{{if .Judged}}<span class="status pass">{{.Counts.Pass}} passed</span><span class="status fail">{{.Counts.Fail}} failed</span><span class="status inconclusive">{{.Counts.Inconclusive}} inconclusive{{if .Strict}} (counted as failures: -strict){{end}}</span><span class="status error">{{.Counts.Error}} errors</span>{{else}}<span class="muted">not judged: the report was made without the lab (tsolab report -lab DIR judges them)</span>{{end}}</dd>
</dl>

<nav><strong>Contents</strong>
<ul>
<li><a href="#scenarios">Scenarios and offloads in force</a></li>
{{if .Judged}}<li><a href="#verdicts">Verdicts</a></li>{{end}}
{{range $i, $w := .Workloads}}<li><a href="#wl-{{$i}}">Workload {{$w.Name}}</a> ({{$w.Kind}})</li>
{{end}}</ul>
</nav>

<h2 id="scenarios">Scenarios and offloads in force</h2>
<table>
<tr><th>Scenario</th><th>Matrix</th><th>Kernel or stack</th><th>MSS</th><th>Runs</th></tr>
{{range .Scenarios}}<tr><td><span class="swatch" style="background:{{.Color}}"></span>{{.Name}}</td><td>{{.Matrix}}</td><td>{{.Profile}}</td><td class="num">{{.MSS}}</td><td class="num">{{.Runs}}</td></tr>
{{end}}</table>
<p class="muted">Offloads as the engine found them in force during the first run: read back from the device (kernel engine), or as the model resolved them after the kernel's feature fix-ups (sim engine). A feature the stack does not have is not shown (–): the model's FreeBSD profiles have neither GSO nor GRO, Linux before 2.6.29 no GRO.</p>
<table>
<tr><th>Scenario</th><th>NIC</th>{{range .OffloadFlags}}<th>{{.}}</th>{{end}}</tr>
{{range .NICRows}}<tr>{{if .Span}}<td rowspan="{{.Span}}"><span class="swatch" style="background:{{.Color}}"></span>{{.Scenario}}</td>{{end}}<td>{{.NIC}}</td>{{range .Flags}}<td class="{{.Class}}">{{.Text}}</td>{{end}}</tr>
{{end}}</table>

{{if .Judged}}
<h2 id="verdicts">Verdicts</h2>
{{if .Verdicts}}<table>
<tr><th>Expectation</th><th>Scenario</th><th>Workload</th><th>Verdict</th><th>Condition</th><th>Measured</th><th>How it was judged</th></tr>
{{range .Verdicts}}<tr><td>{{.Expect}}{{if .Where}}<br><span class="muted">{{.Where}}</span>{{end}}</td><td>{{.Scenario}}</td><td>{{.Workload}}</td><td class="status {{.Class}}">{{.Status}}</td><td><code>{{.Expression}}</code>{{if and .Message (ne .Class "pass")}}<br>{{.Message}}{{end}}</td><td class="num">{{.Measured}}</td><td>{{.Detail}}{{if .BaselineChanged}}<br><span class="muted">the baseline ran on something else: {{range $i, $c := .BaselineChanged}}{{if $i}}; {{end}}{{$c}}{{end}}</span>{{end}}</td></tr>
{{end}}</table>
{{else}}<p class="muted">The lab has no expect blocks that apply to these scenarios.</p>{{end}}
{{end}}

{{range $i, $w := .Workloads}}
<h2 id="wl-{{$i}}">Workload {{$w.Name}} <span class="muted">({{$w.Kind}})</span></h2>
<p class="legend">{{range $.Scenarios}}<span><span class="swatch" style="background:{{.Color}}"></span>{{.Name}}</span>{{end}}</p>
<h3>Results</h3>
<table class="results">
<tr><th>Metric</th><th>Unit</th>{{range $w.Columns}}<th><span class="swatch" style="background:{{.Color}}"></span>{{.Name}}</th>{{end}}</tr>
<tr><td>Runs</td><td></td>{{range $w.Columns}}<td class="num">{{.Runs}}</td>{{end}}</tr>
{{range $w.Rows}}<tr><td title="{{.Metric}}">{{.Name}}</td><td>{{.Unit}}</td>{{range .Cells}}{{if .Present}}<td class="num {{.Class}}">{{.Value}}{{range .Badges}} <span class="badge {{.Class}}" title="{{.Title}}">{{.Text}}</span>{{end}}{{if $.HasBaseline}}<div class="base">baseline {{.Baseline}}</div>{{if .Change}}<div class="change {{.ChangeClass}}">{{.Change}}</div>{{end}}{{end}}</td>{{else}}<td class="na">–</td>{{end}}{{end}}</tr>
{{end}}</table>
{{if $.HasBaseline}}<p class="muted">Under each value: the baseline's median, then the change of the median, in brackets the range of changes the two medians' 95% confidence intervals allow, and the Mann-Whitney U test between the two sets of runs (bold: significant at 0.05).</p>{{end}}

<h3>Metrics across scenarios</h3>
<div class="grid">{{range $w.Metrics}}<figure>{{.SVG}}</figure>
{{end}}</div>
{{if $w.AllZero}}<p class="muted">Zero in every scenario, not charted: {{range $j, $m := $w.AllZero}}{{if $j}}, {{end}}{{$m}}{{end}}.</p>{{end}}

<h3>Send-unit sizes</h3>
<p class="muted">Share of send units (TSO/GSO super-packets count once) by payload size in MSS units; bucket n holds units of n segments.{{if gt $.MaxRuns 1}} Summed over the repeated runs.{{end}}</p>
<div class="grid">{{range $w.Hists}}<figure>{{.SVG}}</figure>
{{end}}</div>

<h3>Over time</h3>
{{if $w.Series}}{{if $w.SeriesRep}}<p class="muted">Lines show {{$w.SeriesRep}}.</p>{{end}}
<div class="grid">{{range $w.Series}}<figure>{{.SVG}}</figure>
{{end}}</div>{{else}}<p class="muted">The runs recorded no time series.</p>{{end}}

{{if $w.Model}}
<h3>Model counters</h3>
<div class="grid">{{range $w.Stops}}<figure>{{.SVG}}</figure>{{end}}{{range $w.Acks}}<figure>{{.SVG}}</figure>{{end}}</div>
<div class="grid">
{{with $w.StopTable}}<div><table><tr><th>Why sends stopped</th>{{range .Scenarios}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr><td>{{.Name}}</td>{{range .Values}}<td class="num">{{.}}</td>{{end}}</tr>
{{end}}</table></div>{{end}}
{{with $w.AckTable}}<div><table><tr><th>ACKs by kind</th>{{range .Scenarios}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr><td>{{.Name}}</td>{{range .Values}}<td class="num">{{.}}</td>{{end}}</tr>
{{end}}</table></div>{{end}}
</div>
{{end}}

{{if $w.Notes}}<h3>Notes</h3>
<ul>{{range $w.Notes}}<li>{{.Scenario}}: {{.Note}}</li>
{{end}}</ul>{{end}}
{{if $w.Captures}}<h3>Packet captures</h3>
<table><tr><th>scenario</th><th>NIC</th><th>direction</th><th>file</th><th>frames</th><th>TCP data packets</th><th>dropped by the ring</th></tr>
{{range $w.Captures}}<tr><td>{{.Scenario}}</td><td>{{.NIC}} ({{.Interface}})</td><td>{{.Direction}}</td><td><code>{{.File}}</code></td><td class="num">{{.Frames}}</td><td class="num">{{.DataPackets}}</td><td class="num">{{.Dropped}}</td></tr>
{{end}}</table>{{end}}
{{end}}

<footer>Made by tsolab {{.Version}}. This file is self-contained: it loads no scripts, styles or fonts.</footer>
</body>
</html>
`))
