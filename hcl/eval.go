package hcl

import (
	"fmt"
	"math/big"
	"sort"
	"strings"
	"time"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/tsolab/tsolab/config"
)

// evaluator turns attributes into Go values in one evaluation context
// (one matrix cell, or the lab-wide context of variables). Every getter
// returns ok=false when the attribute is absent, null, or wrong; when it
// is wrong the diagnostic is already reported.
type evaluator struct {
	l   *loader
	ctx *hclv2.EvalContext
}

// buildRefs makes the objects host.X, switch.X, nic.X and workload.X
// evaluate to: {name = "X"}.
func (l *loader) buildRefs() {
	l.refs = map[string]cty.Value{}
	for _, kind := range refKinds {
		objs := map[string]cty.Value{}
		for _, b := range l.blocks[kind] {
			objs[b.name] = refValue(b.name)
		}
		l.refs[kind] = cty.ObjectVal(objs)
	}
}

func refValue(name string) cty.Value {
	return cty.ObjectVal(map[string]cty.Value{"name": cty.StringVal(name)})
}

// context returns an evaluation context with the variables, the block
// references and, when matrix is not nil, the matrix values of one cell.
func (l *loader) context(matrix map[string]cty.Value) *hclv2.EvalContext {
	vars := map[string]cty.Value{rootVar: cty.ObjectVal(l.vars)}
	for k, v := range l.refs {
		vars[k] = v
	}
	if matrix != nil {
		vars[rootMatrix] = cty.ObjectVal(matrix)
	}
	return &hclv2.EvalContext{Variables: vars, Functions: Functions()}
}

// value evaluates an attribute. ok is false when the attribute is absent,
// null, failed, or reads a value that failed earlier.
func (e *evaluator) value(b *block, name string) (cty.Value, *hclsyntax.Attribute, bool) {
	a := b.attr(name)
	if a == nil {
		return cty.NilVal, nil, false
	}
	v, diags := a.Expr.Value(e.ctx)
	e.l.diags.addAll(diags)
	if diags.HasErrors() || v.IsNull() || !v.IsWhollyKnown() {
		return cty.NilVal, a, false
	}
	v, _ = v.UnmarkDeep()
	return v, a, true
}

// fail reports a wrong value of an attribute, with the values its
// expression read.
func (e *evaluator) fail(a *hclsyntax.Attribute, rng hclv2.Range, summary, format string, args ...any) {
	e.failIn(e.ctx, a, rng, summary, format, args...)
}

// failIn is fail for attribute a evaluated in ctx, not the evaluator's
// own context.
func (e *evaluator) failIn(ctx *hclv2.EvalContext, a *hclsyntax.Attribute, rng hclv2.Range, summary, format string, args ...any) {
	e.l.diags.add(&hclv2.Diagnostic{
		Severity:    hclv2.DiagError,
		Summary:     summary,
		Detail:      fmt.Sprintf(format, args...),
		Subject:     rng.Ptr(),
		Expression:  a.Expr,
		EvalContext: ctx,
	})
}

// wrongType reports a value of the wrong type.
func (e *evaluator) wrongType(b *block, a *hclsyntax.Attribute, want string, v cty.Value) {
	e.fail(a, a.Expr.Range(), "Incorrect value type",
		"The %s must be %s, like %s; got %s (%s).",
		where(b, a.Name), want, exampleOf(b, a.Name), literal(v), v.Type().FriendlyName())
}

func exampleOf(b *block, attr string) string {
	if as := b.spec.attr(attr); as != nil {
		return as.example
	}
	return attr + " = ..."
}

func (e *evaluator) str(b *block, name string) (string, bool) {
	v, a, ok := e.value(b, name)
	if !ok {
		return "", false
	}
	return e.asString(b, a, v)
}

func (e *evaluator) asString(b *block, a *hclsyntax.Attribute, v cty.Value) (string, bool) {
	if !v.Type().IsPrimitiveType() {
		e.wrongType(b, a, "a string", v)
		return "", false
	}
	s, err := convert.Convert(v, cty.String)
	if err != nil {
		e.wrongType(b, a, "a string", v)
		return "", false
	}
	return s.AsString(), true
}

func (e *evaluator) boolean(b *block, name string) (bool, bool) {
	v, a, ok := e.value(b, name)
	if !ok {
		return false, false
	}
	bv, err := convert.Convert(v, cty.Bool)
	if err != nil {
		e.wrongType(b, a, "true or false", v)
		return false, false
	}
	return bv.True(), true
}

// integer reads a whole number in [lo, hi].
func (e *evaluator) integer(b *block, name string, lo, hi int64) (int64, bool) {
	v, a, ok := e.value(b, name)
	if !ok {
		return 0, false
	}
	n, err := convert.Convert(v, cty.Number)
	if err != nil {
		e.wrongType(b, a, "a whole number", v)
		return 0, false
	}
	f := n.AsBigFloat()
	i, acc := f.Int64()
	if !f.IsInt() || acc != big.Exact {
		e.wrongType(b, a, "a whole number", v)
		return 0, false
	}
	if i < lo || i > hi {
		e.fail(a, a.Expr.Range(), "Value out of range",
			"The %s must be between %d and %d; got %d.", where(b, name), lo, hi, i)
		return 0, false
	}
	return i, true
}

// number reads a number in the open interval (lo, hi).
func (e *evaluator) number(b *block, name string, lo, hi float64) (float64, bool) {
	v, a, ok := e.value(b, name)
	if !ok {
		return 0, false
	}
	n, err := convert.Convert(v, cty.Number)
	if err != nil {
		e.wrongType(b, a, "a number", v)
		return 0, false
	}
	f, _ := n.AsBigFloat().Float64()
	if f <= lo || f >= hi {
		e.fail(a, a.Expr.Range(), "Value out of range",
			"The %s must be above %g and below %g; got %g.", where(b, name), lo, hi, f)
		return 0, false
	}
	return f, true
}

// size reads a byte count: a whole number or a size string ("1MB").
func (e *evaluator) size(b *block, name string, lo int64) (int64, bool) {
	v, a, ok := e.value(b, name)
	if !ok {
		return 0, false
	}
	var n int64
	switch {
	case v.Type() == cty.Number:
		f := v.AsBigFloat()
		i, acc := f.Int64()
		if !f.IsInt() || acc != big.Exact {
			e.fail(a, a.Expr.Range(), "Invalid size",
				"The %s must be a whole number of bytes or a size like \"100MB\"; got %s.", where(b, name), literal(v))
			return 0, false
		}
		n = i
	case v.Type() == cty.String:
		var err error
		n, err = config.ParseSize(v.AsString())
		if err != nil {
			e.fail(a, a.Expr.Range(), "Invalid size", "The %s: %s.", where(b, name), err)
			return 0, false
		}
	default:
		e.wrongType(b, a, "a size", v)
		return 0, false
	}
	if n < lo {
		e.fail(a, a.Expr.Range(), "Invalid size",
			"The %s must be at least %d bytes; got %s.", where(b, name), lo, literal(v))
		return 0, false
	}
	return n, true
}

// rate reads a bit rate string ("2gbit").
func (e *evaluator) rate(b *block, name string) (config.Rate, bool) {
	v, a, ok := e.value(b, name)
	if !ok {
		return 0, false
	}
	s, ok := e.asString(b, a, v)
	if !ok {
		return 0, false
	}
	r, err := config.ParseRate(s)
	if err != nil {
		e.fail(a, a.Expr.Range(), "Invalid rate", "The %s: %s.", where(b, name), err)
		return 0, false
	}
	if num, ok := strings.CutSuffix(strings.ToLower(strings.TrimSpace(s)), "bps"); ok {
		e.l.warnf(a.Expr.Range(), "Rate in bytes per second",
			"The %s is %q, which is bytes per second, as in tc: %s. For bits per second write %q.",
			where(b, name), s, r, num+"bit")
	}
	return r, true
}

// duration reads a Go duration string ("3s", "20us", "1m30s").
func (e *evaluator) duration(b *block, name string) (time.Duration, bool) {
	v, a, ok := e.value(b, name)
	if !ok {
		return 0, false
	}
	s, ok := e.asString(b, a, v)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d < 0 {
		e.fail(a, a.Expr.Range(), "Invalid duration",
			"The %s must be a duration with a unit, like \"3s\", \"20us\" or \"1m30s\"; got %q.", where(b, name), s)
		return 0, false
	}
	return d, true
}

// oneOf reads a string that must be one of choices.
func (e *evaluator) oneOf(b *block, name string, choices []string) (string, bool) {
	v, a, ok := e.value(b, name)
	if !ok {
		return "", false
	}
	s, ok := e.asString(b, a, v)
	if !ok {
		return "", false
	}
	for _, c := range choices {
		if s == c {
			return s, true
		}
	}
	e.fail(a, a.Expr.Range(), "Invalid "+name,
		"The %s must be %s; got %q. %s", where(b, name), joinOr(choices), s, strings.TrimSpace(didYouMean(s, choices)))
	return "", false
}

// entry is one key of an object attribute with where it was written.
type entry struct {
	key   string
	value cty.Value
	rng   hclv2.Range // `key = value` when written as a literal object, else the attribute
	key0  hclv2.Range // the key alone, likewise
}

// entries reads an object or map attribute, keeping the source range of
// each key when the object is written literally.
func (e *evaluator) entries(b *block, name string) ([]entry, *hclsyntax.Attribute, bool) {
	v, a, ok := e.value(b, name)
	if !ok {
		return nil, a, false
	}
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		e.wrongType(b, a, "an object", v)
		return nil, a, false
	}
	ranges := map[string][2]hclv2.Range{}
	if obj, ok := a.Expr.(*hclsyntax.ObjectConsExpr); ok {
		for _, it := range obj.Items {
			k, diags := it.KeyExpr.Value(e.ctx)
			if diags.HasErrors() || k.Type() != cty.String || !k.IsKnown() || k.IsNull() {
				continue
			}
			ranges[k.AsString()] = [2]hclv2.Range{hclv2.RangeBetween(it.KeyExpr.Range(), it.ValueExpr.Range()), it.KeyExpr.Range()}
		}
	}
	var out []entry
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		en := entry{key: k.AsString(), value: ev, rng: a.SrcRange, key0: a.Expr.Range()}
		if r, ok := ranges[en.key]; ok {
			en.rng, en.key0 = r[0], r[1]
		}
		out = append(out, en)
	}
	// Keys in source order where written literally, else by name.
	sortEntries(out)
	return out, a, true
}

func sortEntries(es []entry) {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].key0.Start.Byte != es[j].key0.Start.Byte {
			return es[i].key0.Start.Byte < es[j].key0.Start.Byte
		}
		return es[i].key < es[j].key
	})
}

// stringMap reads an object of strings, numbers or bools as strings.
func (e *evaluator) stringMap(b *block, name string) ([]entry, map[string]string, bool) {
	es, a, ok := e.entries(b, name)
	if !ok {
		return nil, nil, false
	}
	out := map[string]string{}
	good := true
	for _, en := range es {
		if en.value.IsNull() || !en.value.Type().IsPrimitiveType() {
			e.fail(a, en.rng, "Incorrect value type",
				"Each value of the %s must be a string, number or bool, like %s; %q is %s.",
				where(b, name), exampleOf(b, name), en.key, literal(en.value))
			good = false
			continue
		}
		s, _ := convert.Convert(en.value, cty.String)
		out[en.key] = s.AsString()
	}
	return es, out, good
}

// reference reads a reference to a block (host = host.tx) as its name.
func (e *evaluator) reference(b *block, name string) (string, bool) {
	v, a, ok := e.value(b, name)
	if !ok {
		return "", false
	}
	return e.refName(b, a, v, a.Expr.Range())
}

func (e *evaluator) refName(b *block, a *hclsyntax.Attribute, v cty.Value, rng hclv2.Range) (string, bool) {
	if v.Type().IsObjectType() && v.Type().HasAttribute("name") {
		n := v.GetAttr("name")
		if n.Type() == cty.String && n.IsKnown() && !n.IsNull() {
			return n.AsString(), true
		}
	}
	as := b.spec.attr(a.Name)
	e.fail(a, rng, "Not a reference",
		"The %s refers to %s by reference, like %s; %s is a value, not a reference.",
		where(b, a.Name), article(as.refs), as.example, literal(v))
	return "", false
}

// referenceList reads a list of references (servers = [nic.rx1, nic.rx2]).
func (e *evaluator) referenceList(b *block, name string) ([]string, bool) {
	v, a, ok := e.value(b, name)
	if !ok {
		return nil, false
	}
	ty := v.Type()
	if !ty.IsListType() && !ty.IsTupleType() && !ty.IsSetType() {
		as := b.spec.attr(name)
		e.fail(a, a.Expr.Range(), "Incorrect value type",
			"The %s must be a list, like %s; got %s. Put it in brackets.", where(b, name), as.example, literal(v))
		return nil, false
	}
	var out []string
	var elems []hclsyntax.Expression
	if t, ok := a.Expr.(*hclsyntax.TupleConsExpr); ok {
		elems = t.Exprs
	}
	i := 0
	for it := v.ElementIterator(); it.Next(); i++ {
		_, ev := it.Element()
		rng := a.Expr.Range()
		if i < len(elems) && len(elems) == v.LengthInt() {
			rng = elems[i].Range()
		}
		n, ok := e.refName(b, a, ev, rng)
		if !ok {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}
