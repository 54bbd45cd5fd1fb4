package outcome

import (
	"fmt"
	"io"
	"strings"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

// WriteMarkdown writes a summary for a CI job's page (GitHub's
// $GITHUB_STEP_SUMMARY, a GitLab merge-request note): a heading with the
// lab and the outcome, where the results came from, the results and
// verdicts tables of WriteTable, and the account of every verdict that
// did not pass or that compared with a baseline from elsewhere.
func WriteMarkdown(w io.Writer, lab *config.Lab, results *result.Results, verdicts []Verdict, strict bool) error {
	ew := &errWriter{w: w}
	name := results.Lab
	if lab != nil {
		name = lab.Name
	}
	outcome := "passed"
	switch ExitCode(verdicts, strict) {
	case ExitFail:
		outcome = "failed"
	case ExitError:
		outcome = "errors"
	}
	fmt.Fprintf(ew, "## tsolab: %s %s\n\n", name, outcome)
	c := Count(verdicts)
	fmt.Fprintf(ew, "%d passed, %d failed, %d inconclusive%s, %d errors; engine %s.\n\n",
		c.Pass, c.Fail, c.Inconclusive, map[bool]string{true: " (counted as failures)"}[strict], c.Error, results.Engine)
	for _, l := range results.Provenance.Summary() {
		fmt.Fprintf(ew, "- %s\n", mdEscape(l))
	}
	if s := results.Sides(); s != "" {
		fmt.Fprintf(ew, "- sides: %s\n", mdEscape(s))
	}
	if results.Provenance != nil {
		fmt.Fprintln(ew)
	}
	sets := orderedRuns(lab, results)
	hasRR := false
	for _, s := range sets {
		hasRR = hasRR || s.kind == string(config.RR)
	}
	fmt.Fprintf(ew, "### Results\n\n")
	writeMarkdownTable(ew, resultRows(sets, hasRR))
	if len(results.Observations) > 0 {
		fmt.Fprintf(ew, "\n### Observed figures\n\nfitted: a calibration was fitted to it; predicted: never tuned to.\n\n")
		writeMarkdownTable(ew, observationRows(results.Observations, results.Engine))
	}
	if len(verdicts) > 0 {
		fmt.Fprintf(ew, "\n### Verdicts\n\n")
		writeMarkdownTable(ew, verdictRows(verdicts))
		for _, v := range verdicts {
			if v.Status == Pass && len(v.BaselineChanged) == 0 {
				continue
			}
			fmt.Fprintf(ew, "\n<details><summary>%s %s in scenario %s</summary>\n\n```\n%s```\n</details>\n",
				v.Status, mdEscape(v.Expect), mdEscape(v.Scenario), account(v))
		}
	}
	return ew.err
}

// writeMarkdownTable writes rows as a Markdown table, the first row the
// header.
func writeMarkdownTable(w io.Writer, rows [][]string) {
	for i, r := range rows {
		cells := make([]string, len(r))
		for j, c := range r {
			cells[j] = mdEscape(c)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
		if i == 0 {
			fmt.Fprintf(w, "|%s\n", strings.Repeat(" --- |", len(r)))
		}
	}
}

// mdEscape keeps a cell's text literal in a Markdown table: pipes and
// markup characters are escaped.
var mdEscape = strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;").Replace
