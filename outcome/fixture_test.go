package outcome

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

const expectFile = "expect.tsolab.hcl"

// testLab is a lab with a tso x mtu matrix (four scenarios), workloads
// "bulk" (stream) and "tbench" (rr), and no expectations yet.
func testLab() *config.Lab {
	lab := &config.Lab{
		Name:    "tso-basics",
		Sources: map[string][]byte{expectFile: nil},
		Variables: []*config.Variable{
			{Name: "streams", Type: cty.Number, Value: cty.NumberIntVal(8)},
		},
		Matrix: []*config.MatrixAxis{
			{Name: "tso", Values: []cty.Value{cty.True, cty.False}},
			{Name: "mtu", Values: []cty.Value{cty.NumberIntVal(1500), cty.NumberIntVal(9000)}},
		},
	}
	for _, tso := range []bool{true, false} {
		for _, mtu := range []int64{1500, 9000} {
			lab.Scenarios = append(lab.Scenarios, &config.Scenario{
				Name: fmt.Sprintf("tso=%t,mtu=%d", tso, mtu),
				Matrix: []config.MatrixValue{
					{Name: "tso", Value: cty.BoolVal(tso)},
					{Name: "mtu", Value: cty.NumberIntVal(mtu)},
				},
				Workloads: []*config.Workload{
					{Name: "bulk", Kind: config.Stream},
					{Name: "tbench", Kind: config.RR},
				},
			})
		}
	}
	return lab
}

// parseExpr appends text as a new line of the lab's expect file and parses
// it there, so ranges and source text are real.
func parseExpr(t testing.TB, lab *config.Lab, text string) hcl.Expression {
	t.Helper()
	src := lab.Sources[expectFile]
	pos := hcl.Pos{Line: strings.Count(string(src), "\n") + 1, Column: 1, Byte: len(src)}
	src = append(src, text...)
	src = append(src, '\n')
	lab.Sources[expectFile] = src
	expr, diags := hclsyntax.ParseExpression([]byte(text), expectFile, pos)
	if diags.HasErrors() {
		t.Fatalf("parse %q: %s", text, diags)
	}
	return expr
}

// addExpect adds an expect block reading workload with the given
// condition and when ("" = none).
func addExpect(t testing.TB, lab *config.Lab, name, workload, when, condition string) *config.Expect {
	t.Helper()
	ex := &config.Expect{Name: name, Workload: workload, Message: name + " should hold"}
	if when != "" {
		ex.When = parseExpr(t, lab, when)
	}
	ex.Condition = parseExpr(t, lab, condition)
	ex.Range = ex.Condition.Range()
	lab.Expects = append(lab.Expects, ex)
	return ex
}

// runs makes one WorkloadResult per value: repetition i has metric = values[i],
// the other metrics taken from base.
func runs(scenario, workload string, base map[string]float64, metric string, values ...float64) []result.WorkloadResult {
	var out []result.WorkloadResult
	for i, v := range values {
		m := map[string]float64{}
		for k, bv := range base {
			m[k] = bv
		}
		m[metric] = v
		kind := "stream"
		if workload == "tbench" {
			kind = "rr"
		}
		out = append(out, result.WorkloadResult{
			Scenario: scenario, Workload: workload, Kind: kind,
			Repetition: i, Engine: "sim", MSS: 1448, Metrics: m,
		})
	}
	return out
}

// allMetrics is a full metrics map with every engine metric set.
func allMetrics(over map[string]float64) map[string]float64 {
	m := map[string]float64{}
	for _, n := range result.Names() {
		m[n] = 0
	}
	for k, v := range over {
		m[k] = v
	}
	return m
}

func results(rs ...[]result.WorkloadResult) *result.Results {
	out := &result.Results{FormatVersion: 1, Lab: "tso-basics", Engine: "sim"}
	for _, r := range rs {
		out.Runs = append(out.Runs, r...)
	}
	return out
}
