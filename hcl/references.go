package hcl

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

// ref is one reference from a block's attribute to another block: an
// edge of the lab's dependency graph.
type ref struct {
	from *block
	attr string
	to   *block
	rng  hclv2.Range // the traversal, `nic.rx1`
}

// checkExpressions checks every expression's references and function
// calls against what its attribute may read, before anything is
// evaluated, and records the references between blocks. An attribute
// that fails is left out of evaluation.
func (l *loader) checkExpressions() {
	for _, kind := range blockKinds() {
		for _, b := range l.blocks[kind] {
			for _, a := range b.sortedAttrs() {
				if kind == kindVariable && a.Name == "type" {
					continue // a type expression, checked by typeexpr
				}
				if !l.checkExpr(b, a) {
					b.skip[a.Name] = true
				}
			}
		}
	}
}

// attrRoots returns what the attribute's expression may start with, and
// the block kinds it refers to.
func attrRoots(b *block, name string) (roots, refs []string) {
	if b.spec.anyAttrs {
		return b.spec.anyRoots, nil
	}
	if as := b.spec.attr(name); as != nil {
		return as.roots, as.refs
	}
	return nil, nil
}

func (l *loader) checkExpr(b *block, a *hclsyntax.Attribute) bool {
	roots, refs := attrRoots(b, a.Name)
	before := l.diags.errorCount() + l.waiting
	for _, t := range a.Expr.Variables() {
		l.checkTraversal(b, a.Name, t, roots, refs)
	}
	for _, m := range metricsRead(a.Expr) {
		if m.from == funcScenario || slices.Contains(roots, m.from) {
			l.checkMetric(m.name, m.rng)
		}
	}
	l.checkCalls(b, a)
	return l.diags.errorCount()+l.waiting == before
}

// where names an attribute for diagnostics: `the mtu of nic "tx0"`.
func where(b *block, attr string) string {
	return fmt.Sprintf("%s of %s", attr, b.label())
}

func (l *loader) checkTraversal(b *block, attr string, t hclv2.Traversal, roots, refs []string) {
	root := t.RootName()
	rng := t.SourceRange()
	if !slices.Contains(roots, root) {
		l.reportRoot(b, attr, t, roots, refs)
		return
	}
	if root == rootEngine {
		if len(t) > 1 {
			l.errorf(rng, "Unsupported attribute",
				"engine is the name of the engine the results come from, \"kernel\" or \"sim\": compare it, like engine == \"sim\".")
		}
		return
	}
	if len(t) < 2 {
		l.errorf(rng, "Incomplete reference",
			"%s alone is not a value: name one, like %s.NAME.", root, root)
		return
	}
	name, ok := stepName(t[1])
	if !ok {
		l.errorf(rng, "Invalid reference",
			"Write the name after a dot, like %s.NAME.", root)
		return
	}
	switch root {
	case rootVar:
		if d := l.dropped[kindVariable+"."+name]; d.reported {
			l.waiting++ // the misspelt variable block is the mistake
			return
		}
		if l.byAddr[kindVariable+"."+name] == nil {
			l.errorf(rng, "Reference to undeclared variable",
				"No variable %q is declared. %sDeclare it with variable %q { default = ... } or fix the name.",
				name, didYouMean(name, l.names(kindVariable)), name)
		}
	case rootMatrix:
		axes := l.axisNames()
		if !slices.Contains(axes, name) {
			if len(axes) == 0 && l.misspelt(kindMatrix) {
				l.waiting++ // the misspelt matrix block is the mistake
				return
			}
			if len(axes) == 0 {
				l.errorf(rng, "Reference to undeclared matrix axis",
					"The lab has no matrix, so matrix.%s has no value. Add matrix { %s = [...] } or remove the reference.", name, name)
			} else {
				l.errorf(rng, "Reference to undeclared matrix axis",
					"The matrix has no axis %q. %sThe axes are %s.", name, didYouMean(name, axes), joinAnd(axes))
			}
		}
	case rootResult, rootBaseline:
		// The metric is checked with the others a condition reads
		// (metricsRead).
	default: // a block kind
		to := l.byAddr[root+"."+name]
		if to == nil {
			l.undeclaredBlock(root, name, rng)
			return
		}
		if len(t) > 2 {
			l.errorf(stepRange(t[2]), "Unsupported attribute",
				"A reference to a %s names it and carries nothing else: write %s.%s.", root, root, name)
			return
		}
		l.refsList = append(l.refsList, ref{from: b, attr: attr, to: to, rng: rng})
	}
}

// reportRoot explains a traversal whose first name the attribute cannot read.
func (l *loader) reportRoot(b *block, attr string, t hclv2.Traversal, roots, refs []string) {
	root := t.RootName()
	rng := t.SourceRange()
	if len(refs) > 0 && slices.Contains(refKinds, root) {
		l.errorf(rng, "Wrong kind of reference",
			"The %s takes %s, like %s; %s names a %s.",
			where(b, attr), article(refs), b.spec.attr(attr).example, traversalText(t[:min(2, len(t))]), root)
		return
	}
	if slices.Contains(allRoots, root) || root == funcScenario {
		switch {
		case b.kind() == kindVariable:
			l.errorf(rng, "Reference not allowed here",
				"A variable's %s must be a constant: variables are set before anything else is evaluated. Write the value itself.", attr)
		case b.kind() == kindExpect && attr == "when":
			l.errorf(rng, "Reference not allowed here",
				"when decides whether the expectation applies before anything runs, so it can read only var and matrix; %s belongs in the condition.", root)
		case len(roots) == 0:
			l.errorf(rng, "Reference not allowed here",
				"The %s must be a constant.", where(b, attr))
		default:
			l.errorf(rng, "Reference not allowed here",
				"The %s can read only %s; %s is not available there.", where(b, attr), strings.Join(roots, ", "), root)
		}
		return
	}
	detail := fmt.Sprintf("There is no name %q in a lab. ", root)
	if s := suggest(root, roots); s != "" {
		detail += fmt.Sprintf("Did you mean %s? ", strings.Replace(traversalText(t), root, s, 1))
	}
	if len(roots) > 0 {
		detail += fmt.Sprintf("The %s can read %s. ", where(b, attr), strings.Join(roots, ", "))
	}
	if len(t) == 1 {
		detail += fmt.Sprintf("If you meant text, put it in quotes: %q.", root)
	}
	l.errorf(rng, "Unknown name", "%s", strings.TrimSpace(detail))
}

func article(kinds []string) string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = "a " + k
	}
	return strings.Join(out, " or ")
}

// droppedBlock is a block left out of the lab for a mistake reported at
// it: where it is written and why it was left out.
type droppedBlock struct {
	def hclv2.Range
	why string
	// reported is set when the error at the block already says that
	// references to it wait for its fix: they are not reported again.
	reported bool
}

// misspelt reports whether a block of kind was written under a
// misspelt type (workloads "bulk"), left out of the lab and reported at
// its type: checks that would miss it stay quiet.
func (l *loader) misspelt(kind string) bool {
	for addr, d := range l.dropped {
		if d.reported && (addr == kind || strings.HasPrefix(addr, kind+".")) {
			return true
		}
	}
	return false
}

func (l *loader) undeclaredBlock(kind, name string, rng hclv2.Range) {
	if d, ok := l.dropped[kind+"."+name]; ok {
		if d.reported {
			l.waiting++
			return
		}
		l.errorf(rng, "Reference to a block in error",
			"%s %q is written at %s, but %s (reported there): fix it there, and this reference reads it.", kind, name, rangeLoc(d.def), d.why)
		return
	}
	detail := fmt.Sprintf("No %s %q is declared. ", kind, name)
	if s := suggest(name, l.names(kind)); s != "" {
		detail += fmt.Sprintf("Did you mean %s.%s? ", kind, s)
	} else {
		for _, other := range refKinds {
			if other != kind && l.byAddr[other+"."+name] != nil {
				detail += fmt.Sprintf("There is a %s %q: %s.%s refers to it. ", other, name, other, name)
			}
		}
	}
	detail += fmt.Sprintf("Declare it with %s or fix the name.", strings.Replace(specFor(kind).example, "NAME", name, 1))
	l.errorf(rng, "Reference to undeclared "+kind, "%s", detail)
}

// metricRef is a metric an expression reads, where, and from what:
// result, baseline or scenario (a scenario() call).
type metricRef struct {
	name, from string
	rng        hclv2.Range
}

// metricsRead lists the metrics an expression reads, in source order, each
// time it reads one: result.NAME, baseline.NAME and scenario({...}).NAME
// (result["NAME"] too).
func metricsRead(expr hclv2.Expression) []metricRef {
	var out []metricRef
	for _, t := range expr.Variables() {
		if r := t.RootName(); (r == rootResult || r == rootBaseline) && len(t) == 2 {
			if name, ok := stepName(t[1]); ok {
				out = append(out, metricRef{name, r, stepRange(t[1])})
			}
		}
	}
	if n, ok := expr.(hclsyntax.Node); ok {
		hclsyntax.VisitAll(n, func(n hclsyntax.Node) hclv2.Diagnostics {
			if n, ok := n.(*hclsyntax.RelativeTraversalExpr); ok && len(n.Traversal) == 1 {
				if c, ok := n.Source.(*hclsyntax.FunctionCallExpr); ok && c.Name == funcScenario {
					if name, ok := stepName(n.Traversal[0]); ok {
						out = append(out, metricRef{name, funcScenario, stepRange(n.Traversal[0])})
					}
				}
			}
			return nil
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].rng.Start.Byte < out[j].rng.Start.Byte })
	return out
}

// ConditionMetrics lists the metrics an expectation's condition reads,
// once each, in the order it names them: result.NAME, baseline.NAME and
// scenario({...}).NAME.
func ConditionMetrics(expr hclv2.Expression) []string {
	var out []string
	for _, m := range metricsRead(expr) {
		if !slices.Contains(out, m.name) {
			out = append(out, m.name)
		}
	}
	return out
}

// metricEngines are the engines whose metrics a condition may read.
var metricEngines = []config.EngineKind{config.EngineKernel, config.EngineSim}

// checkMetric reports a metric that no engine reports, with the closest
// one and the list; one that only some engines report is checked against
// the lab's engine later (checkEngineMetrics).
func (l *loader) checkMetric(name string, rng hclv2.Range) {
	var all []string
	everywhere := true
	for _, k := range metricEngines {
		names := result.EngineNames(string(k))
		everywhere = everywhere && slices.Contains(names, name)
		for _, n := range names {
			if !slices.Contains(all, n) {
				all = append(all, n)
			}
		}
	}
	switch {
	case everywhere:
	case slices.Contains(all, name):
		l.engineMetrics = append(l.engineMetrics, metricRef{name: name, rng: rng})
	default:
		l.errorf(rng, "Unknown metric", "Workload results carry no metric %q. %sThe metrics are %s.",
			name, didYouMean(name, all), metricList())
	}
}

// metricList names the metrics every engine reports, then each engine's
// own.
func metricList() string {
	shared := result.Names()
	out := joinAnd(shared)
	for _, k := range metricEngines {
		var own []string
		for _, n := range result.EngineNames(string(k)) {
			if !slices.Contains(shared, n) {
				own = append(own, n)
			}
		}
		if len(own) > 0 {
			out += fmt.Sprintf("; the %s engine also reports %s", k, joinAnd(own))
		}
	}
	return out
}

// checkEngineMetrics warns about metrics the lab's engine does not
// report: a run on it judges such an expectation an error (another
// engine, chosen with -engine, may report them).
func (l *loader) checkEngineMetrics() {
	have := result.EngineNames(string(l.lab.Engine))
	for _, m := range l.engineMetrics {
		if slices.Contains(have, m.name) {
			continue
		}
		var by []string
		for _, k := range metricEngines {
			if slices.Contains(result.EngineNames(string(k)), m.name) {
				by = append(by, string(k))
			}
		}
		l.warnf(m.rng, "Metric of another engine",
			"The %s engine, the lab's, reports no metric %q: only the %s engine does (-engine %s). Run on it, or read a metric every engine reports.",
			l.lab.Engine, m.name, strings.Join(by, " and "), by[0])
	}
}

// knownFunctions is Functions(), made once for checkCalls' look-ups (a
// 1000-host lab has thousands of attributes to check).
var knownFunctions = Functions()

// functionNames lists, sorted, the functions an attribute may call:
// scenario() too in an expectation's condition.
func functionNames(isCondition bool) []string {
	names := make([]string, 0, len(knownFunctions)+1)
	for n := range knownFunctions {
		names = append(names, n)
	}
	if isCondition {
		names = append(names, funcScenario)
	}
	sort.Strings(names)
	return names
}

// checkCalls checks the functions an expression calls, and the matrix
// values scenario() is given.
func (l *loader) checkCalls(b *block, a *hclsyntax.Attribute) {
	isCondition := b.kind() == kindExpect && a.Name == "condition"
	hclsyntax.VisitAll(a.Expr, func(n hclsyntax.Node) hclv2.Diagnostics {
		switch n := n.(type) {
		case *hclsyntax.FunctionCallExpr:
			switch {
			case n.Name == funcScenario && isCondition:
				l.checkScenarioCall(n)
			case n.Name == funcScenario:
				l.errorf(n.NameRange, "Function not allowed here",
					"scenario() reads the results of a sibling scenario, so only an expectation's condition can call it.")
			case !hasFunc(knownFunctions, n.Name):
				names := functionNames(isCondition)
				l.errorf(n.NameRange, "Call to unknown function",
					"There is no function %q. %sThe functions are %s.", n.Name, didYouMean(n.Name, names), strings.Join(names, ", "))
			}
		}
		return nil
	})
}

// checkScenarioCall checks scenario({ axis = value, ... }): one object
// whose keys are matrix axes.
func (l *loader) checkScenarioCall(c *hclsyntax.FunctionCallExpr) {
	axes := l.axisNames()
	if len(axes) == 0 && l.misspelt(kindMatrix) {
		l.waiting++ // the misspelt matrix block is the mistake
		return
	}
	if len(axes) == 0 {
		l.errorf(c.NameRange, "scenario() without a matrix",
			"scenario({...}) reads a sibling matrix cell, but the lab has no matrix. Add matrix { ... } or compare with a constant.")
		return
	}
	if len(c.Args) != 1 {
		l.errorf(hclv2.RangeBetween(c.NameRange, c.CloseParenRange), "Wrong number of arguments",
			"scenario takes one object of matrix values, like scenario({ %s = ... }).", axes[0])
		return
	}
	obj, ok := c.Args[0].(*hclsyntax.ObjectConsExpr)
	if !ok {
		return // a computed object: checked when evaluated
	}
	if len(obj.Items) == 0 {
		l.errorf(obj.SrcRange, "Empty scenario selection",
			"scenario({}) is the current scenario: give the axes that differ, like scenario({ %s = ... }).", axes[0])
	}
	for _, it := range obj.Items {
		key := hclv2.ExprAsKeyword(it.KeyExpr)
		if key == "" {
			if v, diags := it.KeyExpr.Value(nil); !diags.HasErrors() && v.Type().FriendlyName() == "string" && v.IsKnown() && !v.IsNull() {
				key = v.AsString()
			}
		}
		if key != "" && !slices.Contains(axes, key) {
			l.errorf(it.KeyExpr.Range(), "Unknown matrix axis",
				"scenario() selects a sibling cell by matrix values, and the matrix has no axis %q. %sThe axes are %s.",
				key, didYouMean(key, axes), joinAnd(axes))
		}
	}
}

// stepName returns the name of a .name or ["name"] step.
func stepName(s hclv2.Traverser) (string, bool) {
	switch s := s.(type) {
	case hclv2.TraverseAttr:
		return s.Name, true
	case hclv2.TraverseIndex:
		if s.Key.Type().FriendlyName() == "string" && s.Key.IsKnown() && !s.Key.IsNull() {
			return s.Key.AsString(), true
		}
	}
	return "", false
}

// names returns the declared names of a kind, in declaration order.
func (l *loader) names(kind string) []string {
	var out []string
	for _, b := range l.blocks[kind] {
		out = append(out, b.name)
	}
	return out
}

// axisNames returns the matrix axes in declaration order.
func (l *loader) axisNames() []string {
	m := l.unique[kindMatrix]
	if m == nil {
		return nil
	}
	var out []string
	for _, a := range m.sortedAttrs() {
		out = append(out, a.Name)
	}
	return out
}

func hasFunc[F any](funcs map[string]F, name string) bool {
	_, ok := funcs[name]
	return ok
}

// stepRange is where a step's name is written: for .name, without the dot.
func stepRange(s hclv2.Traverser) hclv2.Range {
	r := s.SourceRange()
	if a, ok := s.(hclv2.TraverseAttr); ok && r.End.Byte-r.Start.Byte == len(a.Name)+1 && r.Start.Line == r.End.Line {
		r.Start.Byte++
		r.Start.Column++
	}
	return r
}
