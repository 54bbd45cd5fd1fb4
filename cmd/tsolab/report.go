package main

import (
	"fmt"
	"io"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/outcome"
	"github.com/tsolab/tsolab/report"
	"github.com/tsolab/tsolab/result"
)

// reportCmd renders a results file as an HTML report:
//
//	tsolab report [-baseline OLD.json] [-lab DIR [-var k=v] [-name NAME]] [-strict] -o report.html RESULTS.json
//
// A results file holds the lab's name, not its directory (it is meant to
// travel: a CI artifact, a baseline kept in git), so the metrics and
// charts need only the file, and the verdicts need the lab: -lab DIR
// judges the lab's expect blocks as `tsolab test` would. The exit code
// says whether the report was written, not whether expectations held.
func (c *cli) reportCmd(args []string) int {
	fs := newFlagSet("report", c.stderr, "report [options] -o FILE RESULTS.json")
	var vars varFlags
	vars.register(fs)
	fs.StringVar(&vars.name, "name", "", "with -lab: the `NAME` the results were run under (test -name NAME), when it is not the lab block's")
	var out, baselineFile, labDirFlag string
	var strict bool
	fs.StringVar(&out, "o", "", "write the HTML report to `FILE` (- for stdout); required")
	fs.StringVar(&baselineFile, "baseline", "", "an earlier results `FILE`: adds the baseline column, the change and its confidence interval")
	fs.StringVar(&labDirFlag, "lab", "", "the lab directory `DIR` the results came from: judge its expectations and show the verdicts (default: no verdicts)")
	fs.BoolVar(&strict, "strict", false, "with -lab: count inconclusive verdicts as failures in the summary")
	pos, err := c.parse(fs, args)
	if err != nil {
		return exitError
	}
	if len(pos) != 1 {
		fmt.Fprintf(c.stderr, "Error: give one results file (written by run or test -json FILE), got %d arguments\n", len(pos))
		fs.Usage()
		return exitError
	}
	if out == "" {
		fmt.Fprintln(c.stderr, "Error: -o FILE is required: where to write the report")
		return exitError
	}
	if labDirFlag == "" && (len(vars.vars) > 0 || len(vars.varFiles) > 0 || vars.name != "" || strict) {
		fmt.Fprintln(c.stderr, "Error: -var, -var-file, -name and -strict apply to the lab's expectations: give -lab DIR too")
		return exitError
	}
	results, err := readResults(pos[0])
	if err != nil {
		fmt.Fprintln(c.stderr, "Error:", err)
		return exitError
	}
	in := report.Input{Results: results, Strict: strict, Version: version}
	if baselineFile != "" {
		if in.Baseline, err = readResults(baselineFile); err != nil {
			fmt.Fprintln(c.stderr, "Error:", err)
			return exitError
		}
	}
	if labDirFlag != "" {
		lab := c.loadLab(labDirFlag, &vars)
		if lab == nil {
			return exitError
		}
		if results.Lab != "" && lab.Name != results.Lab {
			fmt.Fprintf(c.stderr, "Error: %s holds results of lab %q, but %s is lab %q: give the lab the results came from (or -name %s if they were run under that name)\n", pos[0], results.Lab, labDirFlag, lab.Name, results.Lab)
			return exitError
		}
		verdicts, diags := outcome.Evaluate(lab, results, in.Baseline)
		c.writeDiags(lab.Sources, diags)
		in.Lab, in.Verdicts = lab, verdicts
	}
	if err := writeReport(out, in); err != nil {
		fmt.Fprintln(c.stderr, "Error:", err)
		return exitError
	}
	if out != "-" {
		fmt.Fprintf(c.stderr, "Wrote %s.\n", out)
	}
	return exitOK
}

func writeReport(path string, in report.Input) error {
	return writeFile(path, func(w io.Writer) error { return report.Write(w, in) })
}

// reportInput is what run and test hand to -report FILE.
func reportInput(lab *config.Lab, results, baseline *result.Results, verdicts []outcome.Verdict, strict bool) report.Input {
	return report.Input{Results: results, Baseline: baseline, Lab: lab, Verdicts: verdicts, Strict: strict, Version: version}
}
