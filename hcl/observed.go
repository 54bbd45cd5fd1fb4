package hcl

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

// loadObserved reads the observed blocks: figures measured elsewhere,
// each tied to one scenario and workload of the lab. It runs after the
// scenarios exist, so a scenario the matrix does not have is caught.
func (l *loader) loadObserved() {
	if l.misspelt(kindMatrix) {
		return // which scenario each is of is unknown: the matrix's type is the one error
	}
	e := &evaluator{l: l, ctx: l.context(nil)}
	workloads := l.names(kindWorkload)
	for _, b := range l.blocks[kindObserved] {
		o := &config.Observed{Name: b.name, Range: b.def, Scenario: DefaultScenario, Values: map[string]float64{}}
		if s, ok := e.str(b, "source"); ok {
			o.Source = s
		}
		if w, ok := e.reference(b, "workload"); ok {
			o.Workload = w
		} else if b.attrs["workload"] == nil && len(workloads) == 1 {
			o.Workload = workloads[0]
		} else if b.attrs["workload"] == nil && !l.misspelt(kindWorkload) {
			l.errorf(b.def, "Missing required attribute",
				"observed %q must say which workload its figures are of, since the lab has %d workloads: add workload = workload.%s.",
				b.name, len(workloads), firstOr(workloads, "NAME"))
		}
		if name, ok := l.observedScenario(e, b); ok {
			o.Scenario = name
		}
		if ra := b.attr("relative_to"); ra != nil && o.Scenario != "" && l.lab.Scenario(o.Scenario) != nil {
			l.observedRelativeTo(e, b, o)
		}
		switch va, ra := b.attr("values"), b.attr("results"); {
		case va != nil && ra != nil:
			l.errorf(ra.SrcRange, "Conflicting attributes",
				"observed %q gives its values and reads them from a results file: keep values = {...} for figures measured elsewhere, or results and metrics for a run of this lab.", b.name)
		case ra != nil:
			l.observedFromResults(e, b, o)
		case va != nil:
			l.observedValues(e, b, o)
		default:
			l.errorf(b.def, "Missing required attribute",
				"observed %q holds no figures: add values = { throughput_bps = 2.5e9 }, or results = \"kernel.json\" and metrics = [\"throughput_bps\"] to read them from a kernel run of this lab.", b.name)
		}
		if b.attr("metrics") != nil && b.attr("results") == nil {
			l.errorf(b.attr("metrics").SrcRange, "Unexpected attribute",
				"metrics names what observed %q reads from its results file, and it has none: add results = \"FILE\" (written by tsolab test -engine kernel -json FILE), or drop metrics.", b.name)
		}
		l.lab.Observed = append(l.lab.Observed, o)
	}
}

// observedValues reads an observed block's values = {...}.
func (l *loader) observedValues(e *evaluator, b *block, o *config.Observed) {
	v, a, ok := e.value(b, "values")
	if !ok {
		return
	}
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		e.wrongType(b, a, "an object of metric values", v)
		return
	}
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		n, err := convert.Convert(ev, cty.Number)
		if err != nil || n.IsNull() {
			e.fail(a, a.Expr.Range(), "Incorrect value type",
				"Each observed value is a number; %s is %s.", k.AsString(), literal(ev))
			continue
		}
		f, _ := n.AsBigFloat().Float64()
		l.checkMetric(k.AsString(), a.Expr.Range())
		if f == 0 {
			e.fail(a, a.Expr.Range(), "Zero observed value",
				"observed %q: %s = 0 has no relative error to fit or predict: state it as an expectation instead (condition = result.%s == 0).", b.name, k.AsString(), k.AsString())
			continue
		}
		o.Values[k.AsString()] = f
	}
}

// observedRelativeTo reads relative_to: the axes whose values differ
// in the scenario the block's values are relative to, as scenario({...})
// names a sibling in a condition.
func (l *loader) observedRelativeTo(e *evaluator, b *block, o *config.Observed) {
	v, a, ok := e.value(b, "relative_to")
	if !ok {
		return
	}
	if b.attr("results") != nil {
		e.fail(a, a.Expr.Range(), "Conflicting attributes",
			"observed %q reads a results file, whose figures are the runs' own: relative_to applies to values = {...} only.", b.name)
		return
	}
	if !v.Type().IsObjectType() || len(v.Type().AttributeTypes()) == 0 {
		e.wrongType(b, a, "an object of matrix values, like { tso = false }", v)
		return
	}
	cell := slices.Clone(l.lab.Scenario(o.Scenario).Matrix)
	for name := range v.Type().AttributeTypes() {
		i := slices.IndexFunc(cell, func(mv config.MatrixValue) bool { return mv.Name == name })
		if i < 0 {
			e.fail(a, a.Expr.Range(), "Unknown matrix axis",
				"The matrix has no axis %q. %sThe axes are %s.", name, didYouMean(name, l.axisNames()), joinAnd(l.axisNames()))
			return
		}
		val, err := convert.Convert(v.GetAttr(name), cell[i].Value.Type())
		if err != nil {
			e.fail(a, a.Expr.Range(), "Incorrect value type",
				"relative_to.%s is %s; the axis holds %s values.", name, literal(v.GetAttr(name)), cell[i].Value.Type().FriendlyName())
			return
		}
		cell[i].Value = val
	}
	name := ScenarioName(cell)
	switch {
	case name == o.Scenario:
		e.fail(a, a.Expr.Range(), "Relative to itself",
			"relative_to names observed %q's own scenario %s: change an axis, like { %s }.", b.name, name, axisExample(l.lab.Matrix))
	case l.lab.Scenario(name) == nil:
		e.fail(a, a.Expr.Range(), "No such scenario",
			"relative_to names scenario %s, which the matrix does not have.", name)
	default:
		o.RelativeTo = name
	}
}

// observedFromResults reads an observed block's figures from a results
// file of a kernel run of this lab: for each of its metrics, the median of
// the runs of its scenario and workload. So a lab measured on real
// sockets can be what a calibration fits the model to.
func (l *loader) observedFromResults(e *evaluator, b *block, o *config.Observed) {
	file, ok := e.str(b, "results")
	if !ok {
		return
	}
	ra := b.attr("results")
	o.Results = file
	var metrics []string
	if v, a, ok := e.value(b, "metrics"); ok {
		metrics = e.stringList(b, a, v)
		for _, m := range metrics {
			l.checkMetric(m, a.Expr.Range())
		}
	} else if b.attr("metrics") == nil {
		l.errorf(b.def, "Missing required attribute",
			"observed %q reads %s: say which of its metrics are the figures, like metrics = [\"throughput_bps\", \"cpu_tx_pct\"].", b.name, file)
	}
	if len(metrics) == 0 || o.Workload == "" {
		return
	}
	path := file
	if !filepath.IsAbs(path) {
		path = filepath.Join(l.lab.Dir, file)
	}
	res, err := result.ReadFile(path)
	if err != nil {
		l.errorf(ra.SrcRange, "Unreadable results file",
			"observed %q: %v. Measure it with tsolab test -engine kernel -json %s %s.", b.name, err, file, l.lab.Dir)
		return
	}
	if res.Engine != string(config.EngineKernel) {
		l.errorf(ra.SrcRange, "Not a kernel run",
			"observed %q: %s holds a run of the %s engine; the figures a calibration fits the model to come from the kernel (tsolab test -engine kernel -json %s).", b.name, file, res.Engine, file)
		return
	}
	set := result.Index(res)[result.Key{Scenario: o.Scenario, Workload: o.Workload}]
	if set == nil {
		l.errorf(ra.SrcRange, "No such run",
			"observed %q: %s has no run of workload %s in scenario %s: measure that cell (tsolab test -engine kernel -scenario %s -json %s).", b.name, file, o.Workload, o.Scenario, o.Scenario, file)
		return
	}
	for _, m := range metrics {
		vs := set.Values(m)
		if len(vs) == 0 {
			l.errorf(ra.SrcRange, "No such metric",
				"observed %q: the runs of %s in scenario %s in %s carry no %s.", b.name, o.Workload, o.Scenario, file, m)
			continue
		}
		v := result.Median(vs)
		if v == 0 {
			l.errorf(ra.SrcRange, "Zero observed value",
				"observed %q: the runs of %s in scenario %s in %s have a median %s of 0, which has no relative error to fit or predict: leave it out of metrics.", b.name, o.Workload, o.Scenario, file, m)
			continue
		}
		o.Values[m] = v
	}
	if o.Source == "" {
		kernel := ""
		if len(set.Runs) > 0 && set.Runs[0].Kernel != "" {
			kernel = ", Linux " + set.Runs[0].Kernel
		}
		o.Source = fmt.Sprintf("%s: median of %d kernel runs%s", file, len(set.Runs), kernel)
	}
}

// observedScenario names the scenario an observed block's `scenario`
// object selects: a value for every matrix axis. Without the attribute
// the lab must have one scenario.
func (l *loader) observedScenario(e *evaluator, b *block) (string, bool) {
	v, a, ok := e.value(b, "scenario")
	if !ok {
		if b.attr("scenario") == nil && len(l.lab.Matrix) > 0 {
			l.errorf(b.def, "Missing required attribute",
				"observed %q must say which scenario its figures are of, since the lab has a matrix: add scenario = { %s }.",
				b.name, axisExample(l.lab.Matrix))
		}
		return "", false
	}
	if !v.Type().IsObjectType() {
		e.wrongType(b, a, "an object of matrix values", v)
		return "", false
	}
	var cell []config.MatrixValue
	for _, ax := range l.lab.Matrix {
		if !v.Type().HasAttribute(ax.Name) {
			e.fail(a, a.Expr.Range(), "Incomplete scenario",
				"The scenario of observed %q gives no value for the matrix axis %s: give every axis, like %s.", b.name, ax.Name, axisExample(l.lab.Matrix))
			return "", false
		}
		cell = append(cell, config.MatrixValue{Name: ax.Name, Value: v.GetAttr(ax.Name)})
	}
	for name := range v.Type().AttributeTypes() {
		if !slices.ContainsFunc(l.lab.Matrix, func(ax *config.MatrixAxis) bool { return ax.Name == name }) {
			e.fail(a, a.Expr.Range(), "Unknown matrix axis",
				"The matrix has no axis %q. %sThe axes are %s.", name, didYouMean(name, l.axisNames()), joinAnd(l.axisNames()))
			return "", false
		}
	}
	name := ScenarioName(cell)
	if l.lab.Scenario(name) == nil {
		var names []string
		for _, s := range l.lab.Scenarios {
			names = append(names, s.Name)
		}
		e.fail(a, a.Expr.Range(), "No such scenario",
			"The matrix has no scenario %s; it has %s.", name, strings.Join(names, "; "))
		return "", false
	}
	return name, true
}

// loadCalibrations reads the calibrate blocks.
func (l *loader) loadCalibrations() {
	e := &evaluator{l: l, ctx: l.context(nil)}
	for _, b := range l.blocks[kindCalibrate] {
		c := &config.Calibration{CPU: b.name, Range: b.def}
		if v, a, ok := e.value(b, "free"); ok {
			c.Free = e.stringList(b, a, v)
			if len(c.Free) == 0 {
				e.fail(a, a.Expr.Range(), "Nothing to fit",
					"calibrate %q frees no parameter: name the cost parameters the fit may change, like %s.", b.name, exampleOf(b, "free"))
			}
		}
		if fit, ok := e.referenceList(b, "fit"); ok {
			c.Fit = fit
		}
		if s, ok := e.str(b, "file"); ok {
			c.File = s
		}
		l.lab.Calibrations = append(l.lab.Calibrations, c)
	}
}

// stringList converts a list of strings; a wrong element is reported.
func (e *evaluator) stringList(b *block, a *hclsyntax.Attribute, v cty.Value) []string {
	if !v.Type().IsListType() && !v.Type().IsTupleType() && !v.Type().IsSetType() {
		e.wrongType(b, a, "a list of strings", v)
		return nil
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		sv, err := convert.Convert(ev, cty.String)
		if err != nil || sv.IsNull() {
			e.wrongType(b, a, "a list of strings", v)
			return nil
		}
		out = append(out, sv.AsString())
	}
	return out
}

func firstOr(names []string, def string) string {
	if len(names) > 0 {
		return names[0]
	}
	return def
}

// axisExample is "tso = true, mtu = 1500": the first value of each axis.
func axisExample(axes []*config.MatrixAxis) string {
	var parts []string
	for _, ax := range axes {
		val := "..."
		if len(ax.Values) > 0 {
			val = literal(ax.Values[0])
		}
		parts = append(parts, ax.Name+" = "+val)
	}
	return strings.Join(parts, ", ")
}
