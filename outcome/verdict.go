package outcome

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/hashicorp/hcl/v2"
)

// Status is the outcome of one expectation in one scenario.
type Status int

const (
	// Pass: the condition holds (on medians, and the statistics do not
	// contradict it; see the package documentation).
	Pass Status = iota
	// Fail: the condition does not hold.
	Fail
	// Inconclusive: with repeated runs, whether the condition holds
	// depends on a difference the runs cannot tell from noise.
	Inconclusive
	// Error: the condition could not be evaluated (a missing baseline, a
	// scenario() that names no scenario, a metric that does not exist).
	Error
)

// String returns the status as the table and JUnit show it.
func (s Status) String() string {
	switch s {
	case Pass:
		return "PASS"
	case Fail:
		return "FAIL"
	case Inconclusive:
		return "INCONCLUSIVE"
	case Error:
		return "ERROR"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// MarshalText makes a Status read as its name in JSON.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Verdict is one expectation judged in one scenario.
type Verdict struct {
	Expect   string // the expect block's name
	Scenario string // the scenario it was judged in
	Workload string // the workload whose results it read
	Status   Status
	// Message is the expect block's message, shown when it does not pass.
	Message string
	// Expression is the source text of the condition.
	Expression string
	// Metrics are the metrics the condition reads (result.NAME,
	// baseline.NAME, scenario({...}).NAME), once each, in the order it
	// names them.
	Metrics []string
	// Op is the top-level operator of the condition ("<", ">=", "&&"), or
	// "" when the condition is not a binary operation.
	Op string
	// Sides are the values of the two operands of the top-level binary
	// operation when both are numbers (LHS first); nil otherwise.
	Sides []Side
	// NotRun, for an Inconclusive verdict that was not judged, is the
	// scenario the condition compares with, which did not run (tsolab run,
	// or test -scenario); "" otherwise. The CLI turns it into the command
	// that judges the verdict.
	NotRun string
	// Measured, for a condition that is not one comparison of numbers
	// (a && b), is the condition with each comparison in it written with
	// its operands' values: "9.415e9 >= 1e9 && 3.2 < 4.1"; "" otherwise.
	Measured string
	// Detail says how the verdict was reached: "1 run: no confidence
	// interval", "no significant difference (p=0.43, n=5+5)", or the
	// error for Status Error.
	Detail string
	// BaselineChanged lists what differs between what the baseline ran on
	// and what this run ran on ("kernel: 6.1.0 -> 6.18.0"), for an
	// expectation that reads the baseline; nil when nothing differs.
	BaselineChanged []string
	// Range is where the condition is written (the expect block for
	// errors outside the condition).
	Range hcl.Range
}

// Side is one operand of the condition's top-level binary operation.
type Side struct {
	// Expr is the operand's source text.
	Expr string
	// Value is the operand evaluated on the medians of the runs (the
	// value itself with one run).
	Value float64
	// Runs is the number of runs behind Value: the smallest run count of
	// the results the operand reads (0 for an operand that reads none).
	Runs int
	// CI is the 95% confidence interval of the operand's median, nil with
	// fewer than two runs. Bounds are ±Inf when there are too few runs for
	// a finite interval at 95% (benchmath needs 6).
	CI *[2]float64
}

// MarshalJSON writes infinite CI bounds as null, which JSON can hold.
func (s Side) MarshalJSON() ([]byte, error) {
	type side struct {
		Expr  string     `json:"expr"`
		Value float64    `json:"value"`
		Runs  int        `json:"runs"`
		CI    []*float64 `json:"ci,omitempty"`
	}
	out := side{Expr: s.Expr, Value: s.Value, Runs: s.Runs}
	if s.CI != nil {
		for _, b := range s.CI {
			if math.IsInf(b, 0) || math.IsNaN(b) {
				out.CI = append(out.CI, nil)
				continue
			}
			b := b
			out.CI = append(out.CI, &b)
		}
	}
	return json.Marshal(out)
}

// Exit codes of `tsolab test` and `tsolab run`.
const (
	ExitOK    = 0 // every expectation holds
	ExitError = 1 // an expectation could not be evaluated (or any other error)
	ExitFail  = 3 // an expectation failed
)

// ExitCode maps verdicts to the exit code. An Error verdict wins over a
// Fail (a run that could not be judged says nothing about the change);
// Inconclusive counts as a pass unless strict, where it counts as a Fail.
func ExitCode(verdicts []Verdict, strict bool) int {
	code := ExitOK
	for _, v := range verdicts {
		switch v.Status {
		case Error:
			return ExitError
		case Fail:
			code = ExitFail
		case Inconclusive:
			if strict {
				code = ExitFail
			}
		}
	}
	return code
}

// Counts tallies verdicts by status.
type Counts struct {
	Pass, Fail, Inconclusive, Error int
}

// Count tallies verdicts by status.
func Count(verdicts []Verdict) Counts {
	var c Counts
	for _, v := range verdicts {
		switch v.Status {
		case Pass:
			c.Pass++
		case Fail:
			c.Fail++
		case Inconclusive:
			c.Inconclusive++
		case Error:
			c.Error++
		}
	}
	return c
}
