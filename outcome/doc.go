// Package outcome judges measured results against a lab's expect blocks
// and shows the verdicts: a results table for people, JUnit XML for CI,
// and the exit code of `tsolab test`.
//
// It owns the evaluation of expectations (the `when` filter, the
// condition's context, the scenario() function), the statistics that
// decide whether a difference between repeated runs is real, the Verdict
// type, its views, and the order results are shown in (OrderOf, which
// the report uses too). It reads config.Lab and result.Results and never
// runs, provisions or measures anything, nor writes files itself: views
// write to the io.Writer they are given.
//
// # What a condition sees
//
// `when` is evaluated with var (the lab's variables) and matrix (this
// scenario's matrix values). `condition` additionally sees:
//
//   - result: this scenario's metrics for the expectation's workload, an
//     object of numbers named as in result.Metrics();
//   - baseline: the same scenario and workload in the -baseline results; a
//     condition that reads baseline without one, or whose scenario is
//     missing from it, is an Error naming the scenario;
//   - scenario({axis = value, ...}): the metrics of the sibling scenario
//     whose matrix values are this scenario's with the given ones changed
//     (values are converted to the axis type, so {mtu = "9000"} works). A
//     key that is not an axis, or values that name no scenario, are an
//     Error listing the axes or the scenarios;
//   - the functions of hcl.Functions().
//
// A scenario with no run at all (left out with -scenario, or not the applied
// one for tsolab run) is skipped; a condition that reads such a scenario
// through scenario() is Inconclusive ("not judged", naming the scenario to
// add); a scenario that ran without the expectation's workload is an Error.
//
// # Repeated runs
//
// With several runs of a workload in a scenario, every metric in result,
// baseline and scenario() is the median of the runs, and the condition is
// evaluated on medians. Each operand of the top-level binary operation is
// also evaluated once per run (an operand reading several run sets pairs
// them by repetition and uses as many runs as the smallest has), giving a
// sample per side; a side shows its median's 95% confidence interval
// (benchmath.AssumeNothing, as benchstat does; it is infinite below 6
// runs).
//
// A comparison <, <=, > or >= whose two sides both read measured results
// (result, baseline or scenario()), each with at least two runs, is
// judged with the Mann-Whitney U test between the two side samples
// (benchmath Compare, alpha 0.05):
//
//   - significant difference (p < alpha): Pass or Fail as the medians say;
//   - no significant difference: the two sides cannot be told apart, so
//     they count as equal. Equal satisfies <= and >=: Pass when the
//     medians satisfy the condition too, Inconclusive when the medians
//     violate it by less than the noise. Equal never satisfies < or >: a
//     strict ordering claims a real change the runs do not show, so it is
//     Inconclusive whatever the medians say.
//
// So `result.cpu_tx_pct < scenario({tso = false}).cpu_tx_pct` ("TSO cuts
// CPU") passes only on a significant drop, while `result.throughput_bps >=
// baseline.throughput_bps * 0.95` ("no regression beyond 5%") passes when
// the medians hold it or the difference is noise, and is Inconclusive
// when the medians break it but the difference is noise. The verdict's
// Detail says which: "significant difference (p=0.0022, n=6+6)" or "no
// significant difference (p=0.7, n=6+6)". Fewer than 4 runs a side can
// never be significant at 0.05, and the Detail says so.
//
// Everything else is judged on medians alone, and the Detail says why
// there is no test: a single run ("1 run: no confidence interval"), a
// side that reads no results (a constant threshold), a side with one run,
// an operator that is not an ordering, a condition that is not a
// comparison of numbers (a && b).
//
// # Views
//
// WriteTable prints one row per scenario and workload (Gb/s, sender and
// receiver CPU %, average send unit in bytes and MSS, single-MSS share,
// retransmits, and for rr transactions/s and p50/p99 latency; medians ±
// CI half-width with repeats), then one row per verdict with the
// condition and the measured sides joined by its operator, then the
// message, expression, values and detail of every verdict that did not
// pass. WriteJUnit writes one testcase per expectation and scenario: Fail
// is a <failure>, Error an <error>, Inconclusive a <skipped> with the
// reason.
//
// # Exit codes
//
// ExitCode gives 0 when every verdict passes, 3 when one fails, 1 when one
// is an Error (an error wins over a failure). Inconclusive counts as a
// pass unless strict, where it counts as a failure: CI gates that must not
// let an unproven improvement through run strict; everyday runs do not
// fail on noise.
package outcome
