package hcl

import (
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/tsolab/tsolab/config"
)

// DefaultScenario names the one scenario of a lab without a matrix.
const DefaultScenario = "default"

// MaxScenarios bounds the cells of a matrix: a lab that needs more is
// better split.
const MaxScenarios = 4096

// loadMatrix evaluates the matrix axes, in declaration order. Each axis is
// a non-empty list of distinct strings, numbers or bools.
func (l *loader) loadMatrix() {
	m := l.unique[kindMatrix]
	if m == nil {
		return
	}
	e := &evaluator{l: l, ctx: l.context(nil)}
	for _, a := range m.sortedAttrs() {
		if m.skip[a.Name] {
			l.matrixBroken = true
			continue
		}
		v, diags := a.Expr.Value(e.ctx)
		l.diags.addAll(diags)
		if diags.HasErrors() || !v.IsWhollyKnown() {
			l.matrixBroken = true
			continue
		}
		v, _ = v.UnmarkDeep()
		if v.IsNull() {
			e.fail(a, a.Expr.Range(), "Invalid matrix axis",
				"The matrix axis %s must be a list of values, like %s = [true, false]; null has none.", a.Name, a.Name)
			l.matrixBroken = true
			continue
		}
		ty := v.Type()
		if !ty.IsListType() && !ty.IsTupleType() && !ty.IsSetType() {
			e.fail(a, a.Expr.Range(), "Invalid matrix axis",
				"The matrix axis %s must be a list of the values to try, like %s = [%s, ...]; put the value in brackets.",
				a.Name, a.Name, literal(v))
			l.matrixBroken = true
			continue
		}
		axis := &config.MatrixAxis{Name: a.Name, Range: a.SrcRange}
		seen := map[string]bool{}
		good := true
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			if ev.IsNull() || !ev.Type().IsPrimitiveType() {
				e.fail(a, a.Expr.Range(), "Invalid matrix value",
					"The values of matrix axis %s must be strings, numbers or bools; %s is not one.", a.Name, literal(ev))
				good = false
				break
			}
			key := bareLiteral(ev)
			if seen[key] {
				e.fail(a, a.Expr.Range(), "Duplicate matrix value",
					"The matrix axis %s lists %s twice: two scenarios would have one name. Remove one.", a.Name, literal(ev))
				good = false
				break
			}
			seen[key] = true
			axis.Values = append(axis.Values, ev)
		}
		if good && len(axis.Values) == 0 {
			e.fail(a, a.Expr.Range(), "Empty matrix axis",
				"The matrix axis %s has no values, so the lab would have no scenario. Give at least one value, or remove the axis.", a.Name)
			good = false
		}
		if !good {
			l.matrixBroken = true
			continue
		}
		l.lab.Matrix = append(l.lab.Matrix, axis)
	}
	if l.matrixBroken {
		return
	}
	cells := 1
	for _, ax := range l.lab.Matrix {
		cells *= len(ax.Values)
		if cells > MaxScenarios {
			l.errorf(m.def, "Matrix too large",
				"The matrix has more than %d cells (the product of its axes' lengths). Drop values, or split the lab into several.", MaxScenarios)
			l.matrixBroken = true
			return
		}
	}
}

// cells returns every matrix cell, in the cartesian order of the axes
// (the last axis varies fastest).
func cells(axes []*config.MatrixAxis) [][]config.MatrixValue {
	out := [][]config.MatrixValue{nil}
	for _, ax := range axes {
		var next [][]config.MatrixValue
		for _, prefix := range out {
			for _, v := range ax.Values {
				cell := append(append([]config.MatrixValue(nil), prefix...), config.MatrixValue{Name: ax.Name, Value: v})
				next = append(next, cell)
			}
		}
		out = next
	}
	return out
}

// ScenarioName names a matrix cell by its values in axis order:
// "tso=false,mtu=9000", strings without quotes; "default" for no values.
func ScenarioName(cell []config.MatrixValue) string {
	if len(cell) == 0 {
		return DefaultScenario
	}
	parts := make([]string, len(cell))
	for i, mv := range cell {
		parts[i] = mv.Name + "=" + bareLiteral(mv.Value)
	}
	return strings.Join(parts, ",")
}

// loadScenarios evaluates the topology and workloads once per matrix cell
// and checks each cell. A mistake found in several cells is reported once.
func (l *loader) loadScenarios() {
	if l.matrixBroken {
		return
	}
	all := cells(l.lab.Matrix)
	for _, cell := range all {
		name := ScenarioName(cell)
		if len(all) > 1 {
			l.diags.scenario = name
		}
		mv := map[string]cty.Value{}
		for _, v := range cell {
			mv[v.Name] = v.Value
		}
		sc := &config.Scenario{Name: name, Matrix: cell}
		e := &evaluator{l: l, ctx: l.context(mv)}
		for _, b := range l.blocks[kindMachine] {
			sc.Machines = append(sc.Machines, e.machine(b))
		}
		for _, b := range l.blocks[kindHost] {
			sc.Hosts = append(sc.Hosts, e.host(b))
		}
		for _, b := range l.blocks[kindSwitch] {
			sc.Switches = append(sc.Switches, &config.Switch{Name: b.name, Range: b.def})
		}
		for _, b := range l.blocks[kindNIC] {
			sc.NICs = append(sc.NICs, e.nic(b))
		}
		for _, b := range l.blocks[kindWorkload] {
			sc.Workloads = append(sc.Workloads, e.workload(b, sc))
		}
		for _, b := range l.blocks[kindExpect] {
			e.checkWhen(b)
		}
		l.checkScenario(sc)
		l.lab.Scenarios = append(l.lab.Scenarios, sc)
	}
	l.diags.scenario = ""
	l.diags.noteCells(len(all))
}
