package outcome

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/tsolab/tsolab/result"
)

// JUnit XML, the dialect Jenkins, GitLab and GitHub test reporters read:
// <testsuites><testsuite><testcase> with <failure>, <error> or <skipped>.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string           `xml:"name,attr"`
	Properties *junitProperties `xml:"properties"`
	Tests      int              `xml:"tests,attr"`
	Failures   int              `xml:"failures,attr"`
	Errors     int              `xml:"errors,attr"`
	Skipped    int              `xml:"skipped,attr"`
	Cases      []junitCase      `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
	Failure   *junitProblem `xml:"failure"`
	Error     *junitProblem `xml:"error"`
	Skipped   *junitProblem `xml:"skipped"`
	SystemOut *junitText    `xml:"system-out"`
}

// junitProperties are the suite's <properties>: where the results came
// from (provenance), as JUnit readers show a suite's environment.
type junitProperties struct {
	Property []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",cdata"` // CDATA keeps the lines readable
}

type junitText struct {
	Text string `xml:",cdata"`
}

// WriteJUnit writes the verdicts as JUnit XML: one testsuite named after
// the lab, one testcase per expectation and scenario, named "EXPECT
// [SCENARIO]" in class "LAB.WORKLOAD". A Fail is a <failure> and an Error
// an <error>, each with the message, the expression, the values on each
// side, the scenario and how the verdict was reached; an Inconclusive
// verdict is <skipped> with the reason (it neither passes nor fails:
// the CI's exit code, from ExitCode, decides with or without strict).
// Passing and inconclusive testcases carry the same account in
// <system-out>.
//
// The suite's <properties> carry the results' provenance: the tool, lab
// and machine, then what the first run of each scenario ran on, named
// "SCENARIO.nic.tx0.driver" and so on.
func WriteJUnit(w io.Writer, labName string, verdicts []Verdict, results *result.Results) error {
	suite := junitSuite{Name: labName, Properties: junitProps(results)}
	for _, v := range verdicts {
		c := junitCase{
			Name:      fmt.Sprintf("%s [%s]", v.Expect, v.Scenario),
			Classname: labName + "." + v.Workload,
			File:      v.Range.Filename,
			Line:      v.Range.Start.Line,
		}
		switch v.Status {
		case Pass:
			c.SystemOut = &junitText{account(v)}
		case Fail:
			suite.Failures++
			c.Failure = &junitProblem{Message: problemMessage(v), Type: "expectation failed", Text: account(v)}
		case Error:
			suite.Errors++
			c.Error = &junitProblem{Message: problemMessage(v), Type: "expectation not evaluated", Text: account(v)}
		case Inconclusive:
			suite.Skipped++
			c.Skipped = &junitProblem{Message: "inconclusive: " + v.Detail}
			c.SystemOut = &junitText{account(v)}
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, c)
	}
	doc := junitSuites{
		Name: labName, Tests: suite.Tests, Failures: suite.Failures,
		Errors: suite.Errors, Skipped: suite.Skipped,
		Suites: []junitSuite{suite},
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func junitProps(results *result.Results) *junitProperties {
	if results == nil || results.Provenance == nil {
		return nil
	}
	props := &junitProperties{}
	add := func(ps []result.Property) {
		for _, p := range ps {
			props.Property = append(props.Property, junitProperty{p.Name, p.Value})
		}
	}
	add(results.Provenance.Properties())
	seen := map[string]bool{}
	for _, r := range results.Runs {
		if seen[r.Scenario] {
			continue
		}
		seen[r.Scenario] = true
		add(r.Provenance.Properties(r.Scenario + "."))
	}
	return props
}

// problemMessage is the one-line message of a failure or error: the
// expect block's message, then what was measured.
func problemMessage(v Verdict) string {
	parts := []string{}
	if v.Message != "" {
		parts = append(parts, v.Message)
	}
	if v.Status == Error {
		parts = append(parts, v.Detail)
	} else if len(v.Sides) == 2 {
		parts = append(parts, "measured "+measuredText(v))
	}
	return strings.Join(parts, ": ")
}

// account is the full story of a verdict, as the table's detail block
// tells it.
func account(v Verdict) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s in scenario %s (workload %s)\n", v.Status, v.Expect, v.Scenario, v.Workload)
	if v.Message != "" {
		fmt.Fprintf(&b, "message: %s\n", v.Message)
	}
	fmt.Fprintf(&b, "expression (%s): %s\n", v.Range, oneLine(v.Expression))
	for _, l := range sideLines(v) {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	if v.Detail != "" {
		fmt.Fprintf(&b, "%s\n", v.Detail)
	}
	for _, l := range baselineLines(v) {
		fmt.Fprintf(&b, "%s\n", l)
	}
	return b.String()
}
