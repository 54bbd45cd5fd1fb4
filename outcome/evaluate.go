package outcome

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/tsolab/tsolab/config"
	tslhcl "github.com/tsolab/tsolab/hcl"
	"github.com/tsolab/tsolab/provenance"
	"github.com/tsolab/tsolab/result"
)

// Names an expectation's condition can read.
const (
	varResult    = "result"
	varBaseline  = "baseline"
	varMatrix    = "matrix"
	varVar       = "var"
	varEngine    = "engine"
	funcScenario = "scenario"
)

// Evaluate judges every expect block of the lab in every scenario that has
// results and whose `when` holds, against results and, where a condition
// reads `baseline`, the baseline results (nil when there are none).
//
// Verdicts come in the order of the lab's expect blocks, then of its
// scenarios. A scenario without any run in results (left out with
// -scenario) is skipped; one that ran but lacks the expectation's workload
// gets an Error verdict. Every Error verdict has a matching error
// diagnostic; identical diagnostics are reported once.
func Evaluate(lab *config.Lab, results *result.Results, baseline *result.Results) ([]Verdict, hcl.Diagnostics) {
	e := &evaluator{
		lab:     lab,
		results: indexRuns(results),
		ran:     map[string]bool{},
	}
	if results != nil {
		e.engine = results.Engine
		for _, r := range results.Runs {
			e.ran[r.Scenario] = true
		}
	}
	if baseline != nil {
		e.baseline = indexRuns(baseline)
		var now *result.Provenance
		if results != nil {
			now = results.Provenance
		}
		e.changed = provenance.Compare(baseline.Provenance, now)
	}

	var verdicts []Verdict
	var diags hcl.Diagnostics
	seen := map[string]bool{}
	for _, ex := range lab.Expects {
		for _, sc := range lab.Scenarios {
			if !e.ran[sc.Name] {
				continue
			}
			v, d := e.judge(ex, sc)
			for _, diag := range d {
				k := diagKey(diag)
				if !seen[k] {
					seen[k] = true
					diags = append(diags, diag)
				}
			}
			if v != nil {
				v.BaselineChanged = e.baselineChanged(ex, sc)
				verdicts = append(verdicts, *v)
			}
		}
	}
	return verdicts, diags
}

// baselineChanged lists what the baseline ran on that this run did not,
// for an expectation that compares with the baseline: the tool, lab and
// machine, then the NICs, sysctls or model of the workload's first run in
// the scenario on each side. Nil when the expectation does not read the
// baseline or nothing differs.
func (e *evaluator) baselineChanged(ex *config.Expect, sc *config.Scenario) []string {
	if e.baseline == nil || !roots(ex.Condition)[varBaseline] {
		return nil
	}
	out := append([]string(nil), e.changed...)
	k := runKey{Scenario: sc.Name, Workload: ex.Workload}
	base, now := e.baseline[k], e.results[k]
	if base != nil && now != nil && len(base.Runs) > 0 && len(now.Runs) > 0 && base.Runs[0].Provenance != nil {
		out = append(out, provenance.CompareRun(base.Runs[0].Provenance, now.Runs[0].Provenance)...)
	}
	return out
}

func diagKey(d *hcl.Diagnostic) string {
	s := fmt.Sprintf("%d|%s|%s", d.Severity, d.Summary, d.Detail)
	if d.Subject != nil {
		s += "|" + d.Subject.String()
	}
	return s
}

// runKey identifies the runs of one workload in one scenario.
type runKey = result.Key

// runSet is every repetition of one workload in one scenario, with what
// conditions read of it.
type runSet struct {
	*result.Set
	metrics []string   // attribute names of the metrics object
	median  *cty.Value // cached metrics object of medians
}

func indexRuns(res *result.Results) map[runKey]*runSet {
	out := map[runKey]*runSet{}
	for k, s := range result.Index(res) {
		out[k] = &runSet{Set: s, metrics: s.MetricNames()}
	}
	return out
}

// pick chooses which value of a run set a condition sees: the median of
// the runs, or one repetition (an index into runs).
type pick int

const pickMedian pick = -1

// value is the metrics object the condition sees as result, baseline or
// scenario(...).
func (rs *runSet) value(p pick) cty.Value {
	if p == pickMedian {
		if rs.median == nil {
			attrs := map[string]cty.Value{}
			for _, m := range rs.metrics {
				attrs[m] = cty.NumberFloatVal(summarize(rs.Values(m)).Center)
			}
			v := cty.ObjectVal(attrs)
			rs.median = &v
		}
		return *rs.median
	}
	if int(p) >= len(rs.Runs) {
		// Fewer runs here than in the result: an operand that reads this
		// set has a sample no longer than its run count, so only an operand
		// that does not read it gets here, and never looks.
		return cty.DynamicVal
	}
	attrs := map[string]cty.Value{}
	for m, v := range rs.Runs[p].Metrics {
		attrs[m] = cty.NumberFloatVal(v)
	}
	return cty.ObjectVal(attrs)
}

type evaluator struct {
	lab      *config.Lab
	results  map[runKey]*runSet
	baseline map[runKey]*runSet // nil when no baseline was given
	ran      map[string]bool    // scenarios with at least one run
	// engine is the engine the results come from (the `engine` of
	// when and condition).
	engine string
	// changed is what differs between the baseline's tool, lab and
	// machine and this run's (provenance.Compare); nil without a baseline.
	changed []string
}

// judge evaluates one expectation in one scenario; nil when `when` is
// false.
func (e *evaluator) judge(ex *config.Expect, sc *config.Scenario) (*Verdict, hcl.Diagnostics) {
	v := &Verdict{
		Expect:     ex.Name,
		Scenario:   sc.Name,
		Workload:   ex.Workload,
		Message:    ex.Message,
		Expression: e.text(ex.Condition),
		Range:      ex.Range,
	}
	if ex.Condition != nil {
		v.Range = ex.Condition.Range()
		v.Metrics = tslhcl.ConditionMetrics(ex.Condition)
	}
	fail := func(diags hcl.Diagnostics) (*Verdict, hcl.Diagnostics) {
		v.Status = Error
		v.Detail = diagText(diags)
		return v, diags
	}

	base := map[string]cty.Value{
		varVar:    e.varObject(),
		varMatrix: matrixObject(sc),
		varEngine: cty.StringVal(e.engine),
	}
	if ex.When != nil {
		ctx := &hcl.EvalContext{Variables: base, Functions: tslhcl.Functions()}
		ok, diags := boolValue(ex.When, ctx, "when")
		if diags.HasErrors() {
			return fail(diags)
		}
		if !ok {
			return nil, nil
		}
	}
	if ex.Condition == nil {
		return fail(hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Expectation without a condition",
			Detail:   fmt.Sprintf("expect %q has no condition: add condition = <a bool expression over result>.", ex.Name),
			Subject:  ex.Range.Ptr(),
		}})
	}

	j := &judgement{e: e, ex: ex, sc: sc, base: base}
	j.result = e.results[runKey{Scenario: sc.Name, Workload: ex.Workload}]
	if j.result == nil {
		return fail(hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "No results for the expectation's workload",
			Detail: fmt.Sprintf("expect %q reads workload %q, but scenario %s has no run of it; the workloads that ran there are: %s.",
				ex.Name, ex.Workload, sc.Name, e.workloadsRun(sc.Name)),
			Subject: ex.Range.Ptr(),
		}})
	}
	refs := roots(ex.Condition)
	if refs[varBaseline] {
		if diags := j.bindBaseline(); diags.HasErrors() {
			return fail(diags)
		}
	}

	used := map[string]int{}
	holds, diags := boolValue(ex.Condition, j.ctx(pickMedian, used), "condition")
	if diags.HasErrors() && j.notRun != "" {
		v.Status = Inconclusive
		v.NotRun = j.notRun
		v.Detail = fmt.Sprintf("not judged: the condition compares with scenario %s, which did not run here (a tsolab test that runs both judges it)", j.notRun)
		return v, nil
	}
	if diags.HasErrors() {
		return fail(diags)
	}

	return j.weigh(v, holds, used), nil
}

// weigh settles v, whose condition evaluated to holds on medians (used:
// how many runs each set the condition read has): Pass or Fail, the
// operands of a top-level comparison, and whether the runs back it
// (decide).
func (j *judgement) weigh(v *Verdict, holds bool, used map[string]int) *Verdict {
	maxRuns := len(j.result.Runs)
	if j.baseline != nil && len(j.baseline.Runs) > maxRuns {
		maxRuns = len(j.baseline.Runs)
	}
	for _, n := range used {
		maxRuns = max(maxRuns, n)
	}
	if holds {
		v.Status = Pass
	} else {
		v.Status = Fail
	}

	// The operands of the top-level binary operation, evaluated apart.
	bin := topBinary(j.ex.Condition)
	if bin == nil {
		v.Detail = runsDetail(maxRuns, "the condition is not a comparison: judged on medians")
		return v
	}
	v.Op = opString(bin.Op)
	lhs, ld := j.side(bin.LHS)
	rhs, rd := j.side(bin.RHS)
	if ld.HasErrors() || rd.HasErrors() || lhs == nil || rhs == nil {
		// Operands that are not numbers (a && b): each comparison in
		// them shows its operands.
		v.Measured = j.spell(j.ex.Condition)
		v.Detail = runsDetail(maxRuns, "the condition is not a comparison of numbers: judged on medians")
		return v
	}
	v.Sides = []Side{lhs.Side, rhs.Side}

	ordering := v.Op == "<" || v.Op == "<=" || v.Op == ">" || v.Op == ">="
	switch {
	case maxRuns <= 1:
		v.Detail = "1 run: no confidence interval"
	case !ordering:
		v.Detail = fmt.Sprintf("%s is not an ordering: judged on medians of %s", v.Op, runCount(lhs.Runs, rhs.Runs))
	case lhs.Runs == 0 || rhs.Runs == 0:
		v.Detail = fmt.Sprintf("one side reads no results: judged on medians of %d runs, no significance test", max(lhs.Runs, rhs.Runs))
	case lhs.Runs == 1 || rhs.Runs == 1:
		v.Detail = fmt.Sprintf("1 run on one side (n=%d+%d): no confidence interval, judged on medians", lhs.Runs, rhs.Runs)
	default:
		c := compare(lhs.sample, rhs.sample)
		v.Status, v.Detail = decide(v.Op, holds, c)
	}
	return v
}

// decide applies the significance rule of the package documentation to an
// ordering whose medians say holds.
func decide(op string, holds bool, c comparison) (Status, string) {
	if c.significant() {
		detail := fmt.Sprintf("significant difference (%s)", c)
		if holds {
			return Pass, detail
		}
		return Fail, detail
	}
	detail := fmt.Sprintf("no significant difference (%s)", c)
	if c.warning != "" {
		detail += ": " + c.warning
	}
	switch op {
	case "<=", ">=":
		if holds {
			return Pass, detail
		}
		return Inconclusive, detail + "; the medians violate " + op + " by less than the noise"
	}
	return Inconclusive, detail + "; " + op + " needs a real difference"
}

func runsDetail(runs int, what string) string {
	if runs <= 1 {
		return "1 run: no confidence interval"
	}
	return fmt.Sprintf("%s of %d runs, no significance test", what, runs)
}

func runCount(a, b int) string {
	if a == b || b == 0 {
		return fmt.Sprintf("%d runs", a)
	}
	if a == 0 {
		return fmt.Sprintf("%d runs", b)
	}
	return fmt.Sprintf("%d+%d runs", a, b)
}

// judgement is one expectation being judged in one scenario.
type judgement struct {
	e        *evaluator
	ex       *config.Expect
	sc       *config.Scenario
	base     map[string]cty.Value // var and matrix
	result   *runSet
	baseline *runSet // nil unless the condition reads baseline
	// notRun names a sibling scenario the condition reads that this
	// invocation did not run (tsolab run, or test -scenario): the
	// expectation is then not judged rather than an error.
	notRun string
}

func (j *judgement) bindBaseline() hcl.Diagnostics {
	rng := j.ex.Condition.Range().Ptr()
	for _, t := range j.ex.Condition.Variables() {
		if t.RootName() == varBaseline {
			rng = t.SourceRange().Ptr()
			break
		}
	}
	if j.e.baseline == nil {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "No baseline results",
			Detail:   fmt.Sprintf("expect %q reads baseline, but no baseline was given: pass -baseline FILE with the -json results of an earlier run.", j.ex.Name),
			Subject:  rng,
		}}
	}
	j.baseline = j.e.baseline[runKey{Scenario: j.sc.Name, Workload: j.ex.Workload}]
	if j.baseline == nil {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Scenario missing from the baseline",
			Detail: fmt.Sprintf("expect %q reads baseline, but the baseline has no run of workload %q in scenario %s; it has: %s. Record the baseline with the same matrix and workloads.",
				j.ex.Name, j.ex.Workload, j.sc.Name, keysOf(j.e.baseline)),
			Subject: rng,
		}}
	}
	return nil
}

// ctx is the evaluation context of a condition. With used not nil,
// scenario() records the run count of every sibling it returns.
func (j *judgement) ctx(p pick, used map[string]int) *hcl.EvalContext {
	vars := map[string]cty.Value{
		varVar:    j.base[varVar],
		varMatrix: j.base[varMatrix],
		varEngine: j.base[varEngine],
		varResult: j.result.value(p),
	}
	if j.baseline != nil {
		vars[varBaseline] = j.baseline.value(p)
	}
	funcs := tslhcl.Functions()
	funcs[funcScenario] = j.scenarioFunc(p, used)
	return &hcl.EvalContext{Variables: vars, Functions: funcs}
}

// scenarioFunc is scenario(obj): the metrics of the sibling scenario whose
// matrix values are this scenario's with the ones in obj changed.
func (j *judgement) scenarioFunc(p pick, used map[string]int) function.Function {
	return function.New(&function.Spec{
		Description: "The metrics of the sibling scenario whose matrix values are this scenario's with the given ones changed.",
		Params: []function.Parameter{{
			Name:        "matrix",
			Description: "matrix values to change, like {tso = false}",
			Type:        cty.DynamicPseudoType,
		}},
		Type: function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			sib, err := j.e.sibling(j.sc, args[0])
			if err != nil {
				return cty.DynamicVal, function.NewArgError(0, err)
			}
			rs := j.e.results[runKey{Scenario: sib.Name, Workload: j.ex.Workload}]
			if rs == nil {
				if !j.e.ran[sib.Name] {
					j.notRun = sib.Name
					return cty.DynamicVal, function.NewArgErrorf(0, "scenario %s has no results: it was not run (run it too, or leave it out of -scenario)", sib.Name)
				}
				return cty.DynamicVal, function.NewArgErrorf(0, "scenario %s has no run of workload %q", sib.Name, j.ex.Workload)
			}
			if used != nil {
				used[sib.Name] = len(rs.Runs)
			}
			if p != pickMedian && int(p) >= len(rs.Runs) {
				return cty.DynamicVal, function.NewArgErrorf(0, "scenario %s has %d runs, repetition %d was asked", sib.Name, len(rs.Runs), p)
			}
			return rs.value(p), nil
		},
	})
}

// sibling finds the scenario whose matrix values are cur's with those of
// arg changed.
func (e *evaluator) sibling(cur *config.Scenario, arg cty.Value) (*config.Scenario, error) {
	ty := arg.Type()
	if arg.IsNull() || !(ty.IsObjectType() || ty.IsMapType()) {
		return nil, fmt.Errorf("scenario() takes an object of matrix values, like scenario({tso = false}); got %s", ty.FriendlyName())
	}
	want := make([]cty.Value, len(cur.Matrix))
	for i, mv := range cur.Matrix {
		want[i] = mv.Value
	}
	for it := arg.ElementIterator(); it.Next(); {
		k, val := it.Element()
		name := k.AsString()
		i := matrixIndex(cur, name)
		if i < 0 {
			if len(cur.Matrix) == 0 {
				return nil, fmt.Errorf("%q is not a matrix axis: this lab has no matrix, so scenario() can only name this scenario (%s)", name, cur.Name)
			}
			return nil, fmt.Errorf("%q is not a matrix axis; the axes are: %s", name, axesOf(cur))
		}
		cv, err := convert.Convert(val, cur.Matrix[i].Value.Type())
		if err != nil || !cv.IsKnown() {
			return nil, fmt.Errorf("%s = %s: the axis %s holds %s values", name, valueString(val), name, cur.Matrix[i].Value.Type().FriendlyName())
		}
		want[i] = cv
	}
	for _, s := range e.lab.Scenarios {
		if matrixEquals(s, cur, want) {
			return s, nil
		}
	}
	parts := make([]string, len(want))
	for i, v := range want {
		parts[i] = cur.Matrix[i].Name + "=" + valueString(v)
	}
	var names []string
	for _, s := range e.lab.Scenarios {
		names = append(names, s.Name)
	}
	return nil, fmt.Errorf("no scenario has %s; the scenarios are: %s", strings.Join(parts, ","), strings.Join(names, "; "))
}

func matrixIndex(s *config.Scenario, name string) int {
	for i, mv := range s.Matrix {
		if mv.Name == name {
			return i
		}
	}
	return -1
}

func matrixEquals(s, cur *config.Scenario, want []cty.Value) bool {
	if len(s.Matrix) != len(want) {
		return false
	}
	for i, mv := range s.Matrix {
		if mv.Name != cur.Matrix[i].Name || !mv.Value.IsKnown() || mv.Value.IsNull() || want[i].IsNull() {
			return false
		}
		if !mv.Value.Equals(want[i]).True() {
			return false
		}
	}
	return true
}

func axesOf(s *config.Scenario) string {
	var names []string
	for _, mv := range s.Matrix {
		names = append(names, mv.Name)
	}
	return strings.Join(names, ", ")
}

func (e *evaluator) workloadsRun(scenario string) string {
	var names []string
	for k := range e.results {
		if k.Scenario == scenario {
			names = append(names, k.Workload)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func keysOf(m map[runKey]*runSet) string {
	var ks []string
	for k := range m {
		ks = append(ks, k.Workload+" in "+k.Scenario)
	}
	if len(ks) == 0 {
		return "no runs at all"
	}
	sort.Strings(ks)
	return strings.Join(ks, "; ")
}

func (e *evaluator) varObject() cty.Value {
	attrs := map[string]cty.Value{}
	for _, v := range e.lab.Variables {
		attrs[v.Name] = v.Value
	}
	return cty.ObjectVal(attrs)
}

func matrixObject(s *config.Scenario) cty.Value {
	attrs := map[string]cty.Value{}
	for _, mv := range s.Matrix {
		attrs[mv.Name] = mv.Value
	}
	return cty.ObjectVal(attrs)
}

// measured is one operand of the top-level comparison.
type measured struct {
	Side
	sample []float64 // the operand once per repetition (nil with < 2 runs)
}

// side evaluates one operand on medians and, with repetitions, once per
// repetition. It returns nil when the operand is not a number.
func (j *judgement) side(expr hcl.Expression) (*measured, hcl.Diagnostics) {
	used := map[string]int{}
	val, diags := expr.Value(j.ctx(pickMedian, used))
	f, ok := number(val)
	if diags.HasErrors() || !ok {
		return nil, diags
	}
	m := &measured{Side: Side{Expr: j.e.text(expr), Value: f}}

	refs := roots(expr)
	n := -1
	count := func(c int) {
		if n < 0 || c < n {
			n = c
		}
	}
	if refs[varResult] {
		count(len(j.result.Runs))
	}
	if refs[varBaseline] && j.baseline != nil {
		count(len(j.baseline.Runs))
	}
	for _, c := range used {
		count(c)
	}
	if n < 0 {
		n = 0
	}
	m.Runs = n
	if n < 2 {
		return m, nil
	}
	for i := 0; i < n; i++ {
		v, d := expr.Value(j.ctx(pick(i), nil))
		f, ok := number(v)
		if d.HasErrors() || !ok {
			// A value that exists on medians but not in one run: no
			// sample, the comparison falls back to medians.
			m.Runs = 1
			m.sample = nil
			return m, nil
		}
		m.sample = append(m.sample, f)
	}
	s := summarize(m.sample)
	m.CI = &[2]float64{s.Lo, s.Hi}
	return m, nil
}

// roots is the set of root names of the variables expr reads (result,
// baseline, matrix, var).
func roots(expr hcl.Expression) map[string]bool {
	out := map[string]bool{}
	for _, t := range expr.Variables() {
		out[t.RootName()] = true
	}
	return out
}

// topBinary unwraps parentheses down to a binary operation, or nil.
func topBinary(expr hcl.Expression) *hclsyntax.BinaryOpExpr {
	for {
		switch x := expr.(type) {
		case *hclsyntax.ParenthesesExpr:
			expr = x.Expression
		case *hclsyntax.BinaryOpExpr:
			return x
		default:
			return nil
		}
	}
}

// spell writes a logical condition with each comparison of numbers in it
// replaced by its operands' values ("9.4e9 >= 1e9 && 3.2 < 4.1"), and
// any other part by its value, true or false.
func (j *judgement) spell(expr hcl.Expression) string {
	switch x := expr.(type) {
	case *hclsyntax.ParenthesesExpr:
		return "(" + j.spell(x.Expression) + ")"
	case *hclsyntax.UnaryOpExpr:
		if x.Op == hclsyntax.OpLogicalNot {
			return "!" + j.spell(x.Val)
		}
	case *hclsyntax.BinaryOpExpr:
		op := opString(x.Op)
		if op == "&&" || op == "||" {
			return j.spell(x.LHS) + " " + op + " " + j.spell(x.RHS)
		}
		lhs, ld := j.side(x.LHS)
		rhs, rd := j.side(x.RHS)
		if !ld.HasErrors() && !rd.HasErrors() && lhs != nil && rhs != nil {
			return sideText(lhs.Side) + " " + op + " " + sideText(rhs.Side)
		}
	}
	val, diags := expr.Value(j.ctx(pickMedian, nil))
	if diags.HasErrors() || !val.IsKnown() || val.IsNull() || val.Type() != cty.Bool {
		return "?"
	}
	return fmt.Sprint(val.True())
}

func opString(op *hclsyntax.Operation) string {
	switch op {
	case hclsyntax.OpLessThan:
		return "<"
	case hclsyntax.OpLessThanOrEqual:
		return "<="
	case hclsyntax.OpGreaterThan:
		return ">"
	case hclsyntax.OpGreaterThanOrEqual:
		return ">="
	case hclsyntax.OpEqual:
		return "=="
	case hclsyntax.OpNotEqual:
		return "!="
	case hclsyntax.OpLogicalAnd:
		return "&&"
	case hclsyntax.OpLogicalOr:
		return "||"
	case hclsyntax.OpAdd:
		return "+"
	case hclsyntax.OpSubtract:
		return "-"
	case hclsyntax.OpMultiply:
		return "*"
	case hclsyntax.OpDivide:
		return "/"
	case hclsyntax.OpModulo:
		return "%"
	}
	return "?"
}

// boolValue evaluates a when or condition expression that must give a
// known bool.
func boolValue(expr hcl.Expression, ctx *hcl.EvalContext, what string) (bool, hcl.Diagnostics) {
	val, diags := expr.Value(ctx)
	if diags.HasErrors() {
		return false, diags
	}
	bad := func(why string) (bool, hcl.Diagnostics) {
		return false, append(diags, &hcl.Diagnostic{
			Severity:    hcl.DiagError,
			Summary:     "Invalid " + what,
			Detail:      fmt.Sprintf("The %s must be true or false; %s.", what, why),
			Subject:     expr.Range().Ptr(),
			Expression:  expr,
			EvalContext: ctx,
		})
	}
	switch {
	case val.IsNull():
		return bad("it is null")
	case !val.IsKnown():
		return bad("its value is unknown")
	case val.Type() != cty.Bool:
		example := "result.cpu_tx_pct < 50"
		if what == "when" {
			example = "matrix.mtu == 9000"
		}
		return bad("it is a " + val.Type().FriendlyName() + ": compare it, e.g. " + example)
	}
	return val.True(), diags
}

func number(v cty.Value) (float64, bool) {
	if v == cty.NilVal || !v.IsKnown() || v.IsNull() || v.Type() != cty.Number {
		return 0, false
	}
	f, _ := v.AsBigFloat().Float64()
	return f, true
}

func valueString(v cty.Value) string {
	switch {
	case v == cty.NilVal || v.IsNull():
		return "null"
	case !v.IsKnown():
		return "(unknown)"
	case v.Type() == cty.String:
		return v.AsString()
	case v.Type() == cty.Number:
		return v.AsBigFloat().Text('f', -1)
	case v.Type() == cty.Bool:
		if v.True() {
			return "true"
		}
		return "false"
	}
	return v.GoString()
}

// text is the source text of expr, from the lab's sources.
func (e *evaluator) text(expr hcl.Expression) string {
	if expr == nil {
		return ""
	}
	return sourceText(e.lab.Sources, expr.Range())
}

func sourceText(sources map[string][]byte, rng hcl.Range) string {
	src, ok := sources[rng.Filename]
	if !ok || rng.End.Byte > len(src) || rng.Start.Byte > rng.End.Byte {
		return ""
	}
	return string(rng.SliceBytes(src))
}

func diagText(diags hcl.Diagnostics) string {
	var parts []string
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		s := d.Summary
		if d.Detail != "" {
			s += ": " + d.Detail
		}
		if !strings.HasSuffix(s, ".") {
			s += "."
		}
		if !slices.Contains(parts, s) { // each evaluation of a side reports it
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}
