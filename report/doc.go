// Package report renders measured results as one self-contained HTML
// file: the lab, the engine and the kernel or stack profile, the offloads
// in force on every NIC, the results table with the verdicts in colour
// (and, given a baseline, the change and its confidence interval), and
// SVG charts drawn with gonum.org/v1/plot: a bar chart per metric across
// scenarios, the send-unit size histogram in MSS units, the time series of
// throughput, cwnd and send-unit size, and for the model engine the
// reasons sends stopped and the ACKs by kind.
//
// It owns the page's layout and its charts; labels, units, scales and the
// charts' order come from the metric table of package result, the order
// of scenarios and workloads from outcome.OrderOf, and the
// metric cells a verdict colours from the metrics its condition reads
// (outcome.Verdict.Metrics). It does not judge anything:
// verdicts come from outcome.Evaluate and every median and interval from
// outcome.Summarize and outcome.Compare, so the report, the table and the
// exit code agree. It never reads files or the clock and never loads
// anything from the network: the page has no scripts, fonts are the
// viewer's (vgsvg does not embed them), and the same Input gives the same
// bytes.
package report
