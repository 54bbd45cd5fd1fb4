package outcome

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The JUnit shape as a CI reporter reads it, written apart from the
// writer's own types so the round trip checks the XML, not the structs.
type readSuites struct {
	XMLName  xml.Name    `xml:"testsuites"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Suites   []readSuite `xml:"testsuite"`
}

type readSuite struct {
	Name     string     `xml:"name,attr"`
	Tests    int        `xml:"tests,attr"`
	Failures int        `xml:"failures,attr"`
	Errors   int        `xml:"errors,attr"`
	Skipped  int        `xml:"skipped,attr"`
	Cases    []readCase `xml:"testcase"`
}

type readCase struct {
	Name      string       `xml:"name,attr"`
	Classname string       `xml:"classname,attr"`
	File      string       `xml:"file,attr"`
	Line      int          `xml:"line,attr"`
	Failure   *readProblem `xml:"failure"`
	Error     *readProblem `xml:"error"`
	Skipped   *readProblem `xml:"skipped"`
}

type readProblem struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

func TestWriteJUnit(t *testing.T) {
	lab, _, verdicts := tableFixture(t, 6)
	// A message with XML's special characters must survive.
	verdicts[4].Message = `single-MSS share < 10% & "rare" ]]>`

	var buf bytes.Buffer
	if err := WriteJUnit(&buf, lab.Name, verdicts, nil); err != nil {
		t.Fatalf("WriteJUnit: %v", err)
	}

	// Well-formed: a strict decoder reads every token to the end.
	dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, buf.String())
		}
	}

	var got readSuites
	if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	// Keep the problem texts out of the structural comparison; they are
	// checked below.
	texts := map[string]string{}
	for i := range got.Suites {
		for j := range got.Suites[i].Cases {
			c := &got.Suites[i].Cases[j]
			for _, p := range []*readProblem{c.Failure, c.Error, c.Skipped} {
				if p != nil {
					texts[c.Name] = p.Text
					p.Text = ""
				}
			}
		}
	}

	line := func(i int) int { return lab.Expects[i].Condition.Range().Start.Line }
	pass := func(name, class string, expect int) readCase {
		return readCase{Name: name, Classname: class, File: expectFile, Line: line(expect)}
	}
	want := readSuites{
		XMLName: xml.Name{Local: "testsuites"},
		Name:    "tso-basics", Tests: 9, Failures: 3, Errors: 1, Skipped: 1,
		Suites: []readSuite{{
			Name: "tso-basics", Tests: 9, Failures: 3, Errors: 1, Skipped: 1,
			Cases: []readCase{
				pass("tso_cuts_cpu [tso=true,mtu=1500]", "tso-basics.bulk", 0),
				pass("tso_cuts_cpu [tso=true,mtu=9000]", "tso-basics.bulk", 0),
				pass("few_single_mss [tso=true,mtu=1500]", "tso-basics.bulk", 1),
				pass("few_single_mss [tso=true,mtu=9000]", "tso-basics.bulk", 1),
				{
					Name: "few_single_mss [tso=false,mtu=1500]", Classname: "tso-basics.bulk", File: expectFile, Line: line(1),
					Failure: &readProblem{Message: `single-MSS share < 10% & "rare" ]]>: measured 1 <= 0.1`},
				},
				{
					Name: "few_single_mss [tso=false,mtu=9000]", Classname: "tso-basics.bulk", File: expectFile, Line: line(1),
					Failure: &readProblem{Message: "Most send units should carry more than one MSS: measured 1 <= 0.1"},
				},
				{
					Name: "tbench_not_slower [tso=true,mtu=1500]", Classname: "tso-basics.tbench", File: expectFile, Line: line(2),
					Failure: &readProblem{Message: "tbench_not_slower should hold: measured 35420 ±100 >= 36140 ±100"},
				},
				{
					Name: "tbench_latency [tso=true,mtu=1500]", Classname: "tso-basics.tbench", File: expectFile, Line: line(3),
					Skipped: &readProblem{Message: "inconclusive: no significant difference (p=0.43, n=6+6); < needs a real difference"},
				},
				{
					Name: "gro_helps [tso=true,mtu=9000]", Classname: "tso-basics.bulk", File: expectFile, Line: line(4),
					Error: &readProblem{Message: `gro_helps should hold: Invalid function argument: Invalid value for "matrix" parameter: "gro" is not a matrix axis; the axes are: tso, mtu.`},
				},
			},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JUnit (-want +got):\n%s", diff)
	}

	// A failure's text tells the whole story: scenario, expression, the
	// value of each side, and how it was judged.
	if got, want := texts["few_single_mss [tso=false,mtu=1500]"], `message: single-MSS share < 10% & "rare" ]]>`; !strings.Contains(got, want) {
		t.Errorf("failure text lacks %q:\n%s", want, got)
	}
	failure := texts["tbench_not_slower [tso=true,mtu=1500]"]
	for _, w := range []string{
		"FAIL tbench_not_slower in scenario tso=true,mtu=1500 (workload tbench)",
		"result.transactions_per_s >= scenario({tso = false}).transactions_per_s",
		"result.transactions_per_s = 35420 ±100",
		"scenario({tso = false}).transactions_per_s = 36140 ±100",
		"significant difference (p=0.0022, n=6+6)",
	} {
		if !strings.Contains(failure, w) {
			t.Errorf("failure text lacks %q:\n%s", w, failure)
		}
	}
}

func TestWriteJUnitEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, "empty", nil, nil); err != nil {
		t.Fatal(err)
	}
	var got readSuites
	if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("unmarshal: %v\n%s", err, buf.String())
	}
	if got.Tests != 0 || len(got.Suites) != 1 || got.Suites[0].Name != "empty" {
		t.Errorf("got %+v, want one empty suite named empty", got)
	}
}

func TestExitCode(t *testing.T) {
	v := func(ss ...Status) []Verdict {
		var out []Verdict
		for _, s := range ss {
			out = append(out, Verdict{Status: s})
		}
		return out
	}
	for _, tt := range []struct {
		name     string
		verdicts []Verdict
		strict   bool
		want     int
	}{
		{"no expectations", nil, false, ExitOK},
		{"all pass", v(Pass, Pass), false, ExitOK},
		{"a failure", v(Pass, Fail), false, ExitFail},
		{"inconclusive passes", v(Pass, Inconclusive), false, ExitOK},
		{"inconclusive fails when strict", v(Pass, Inconclusive), true, ExitFail},
		{"an error wins over a failure", v(Fail, Error, Pass), false, ExitError},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExitCode(tt.verdicts, tt.strict); got != tt.want {
				t.Errorf("ExitCode = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestSideJSON(t *testing.T) {
	for _, tt := range []struct {
		name string
		side Side
		want string
	}{
		{"one run", Side{Expr: "result.bytes", Value: 1e9, Runs: 1}, `{"expr":"result.bytes","value":1000000000,"runs":1}`},
		{"finite interval", Side{Expr: "x", Value: 2, Runs: 6, CI: &[2]float64{1, 3}}, `{"expr":"x","value":2,"runs":6,"ci":[1,3]}`},
		{"infinite bound", Side{Expr: "x", Value: 2, Runs: 5, CI: &[2]float64{math.Inf(-1), 3}}, `{"expr":"x","value":2,"runs":5,"ci":[null,3]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.side)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("json = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestStatusString(t *testing.T) {
	for _, tt := range []struct {
		s    Status
		want string
	}{
		{Pass, "PASS"}, {Fail, "FAIL"}, {Inconclusive, "INCONCLUSIVE"}, {Error, "ERROR"}, {Status(9), "Status(9)"},
	} {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("Status(%d).String() = %q, want %q", tt.s, got, tt.want)
		}
	}
}
