package hcl

import (
	"fmt"
	"os"
	"sort"
	"strings"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/tsolab/tsolab/config"
)

// varState is one variable while its value is being decided.
type varState struct {
	v   *config.Variable
	def cty.Value // the default, cty.NilVal when none
	set bool      // a value was given (default or input)
	bad bool      // a value failed: the variable reads as unknown
}

// loadVariables decides every variable's value: its default, then
// TSOLAB_VAR_ environment variables, then variable files in order, then
// -var settings, each overriding the one before.
func (l *loader) loadVariables() {
	states := map[string]*varState{}
	var order []*varState
	constCtx := &hclv2.EvalContext{Functions: Functions()}
	for _, b := range l.blocks[kindVariable] {
		st := &varState{v: &config.Variable{Name: b.name, Type: cty.DynamicPseudoType, DeclRange: b.def}, def: cty.NilVal}
		states[b.name] = st
		order = append(order, st)
		if a := b.attrs["type"]; a != nil {
			ty, diags := typeexpr.TypeConstraint(a.Expr)
			l.diags.addAll(diags)
			if diags.HasErrors() {
				st.bad = true
			} else {
				st.v.Type = ty
			}
		}
		e := &evaluator{l: l, ctx: constCtx}
		if s, ok := e.str(b, "description"); ok {
			st.v.Description = s
		}
		if b.skip["default"] {
			st.bad = true // its mistake is already reported
		}
		if a := b.attr("default"); a != nil && !st.bad {
			val, diags := a.Expr.Value(constCtx)
			l.diags.addAll(diags)
			if diags.HasErrors() {
				st.bad = true
			} else if cv, err := convert.Convert(val, st.v.Type); err != nil {
				l.errorf(a.Expr.Range(), "Invalid default value",
					"The default of variable %q must be %s: %s. Change the default or the type.",
					b.name, typeexpr.TypeString(st.v.Type), err)
				st.bad = true
			} else {
				st.def, st.v.Value, st.set = cv, cv, true
			}
		}
	}

	for _, kv := range l.opts.Env {
		name, raw, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		name = strings.TrimPrefix(name, EnvPrefix)
		if st := states[name]; st != nil { // others may be meant for other labs
			l.setRaw(st, raw, EnvPrefix+name)
		}
	}
	for _, path := range l.opts.VarFiles {
		l.loadVarFile(path, states)
	}
	names := make([]string, 0, len(l.opts.Vars))
	for n := range l.opts.Vars {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		st := states[name]
		if st == nil {
			l.diags.add(&hclv2.Diagnostic{
				Severity: hclv2.DiagError,
				Summary:  "Value for undeclared variable",
				Detail: fmt.Sprintf("-var sets %q, but the lab declares no such variable. %sDeclare it with variable %q {} or fix the name.",
					name, didYouMean(name, l.names(kindVariable)), name),
			})
			continue
		}
		l.setRaw(st, l.opts.Vars[name], "-var")
	}

	for _, st := range order {
		switch {
		case st.bad:
			st.v.Value = cty.DynamicVal
		case !st.set:
			l.errorf(st.v.DeclRange, "No value for required variable",
				"Variable %q has no default and no value was given. Set it with -var %s=VALUE, a -var-file, or %s%s=VALUE, or give it a default.",
				st.v.Name, st.v.Name, EnvPrefix, st.v.Name)
			st.v.Value = cty.DynamicVal
		}
		l.vars[st.v.Name] = st.v.Value
		l.lab.Variables = append(l.lab.Variables, st.v)
	}
}

// setRaw sets a variable from a command-line or environment string: as
// written when the variable is a string (or untyped with a string or no
// default), else read as an HCL expression.
func (l *loader) setRaw(st *varState, raw, source string) {
	ty := st.v.Type
	asString := ty == cty.String ||
		(ty == cty.DynamicPseudoType && (st.def == cty.NilVal || st.def.Type() == cty.String))
	if asString {
		st.v.Value, st.set, st.bad = cty.StringVal(raw), true, false
		return
	}
	filename := fmt.Sprintf("<value for var.%s from %s>", st.v.Name, source)
	l.lab.Sources[filename] = []byte(raw)
	expr, diags := hclsyntax.ParseExpression([]byte(raw), filename, hclv2.InitialPos)
	l.diags.addAll(diags)
	if diags.HasErrors() {
		st.bad = true
		return
	}
	if vars := expr.Variables(); len(vars) > 0 {
		l.errorf(vars[0].SourceRange(), "Invalid value for variable",
			"Variable %q is %s, and %s gives %q, which names nothing. Give %s (a string needs a string type).",
			st.v.Name, typeexpr.TypeString(st.v.Type), source, raw, typeExample(st.v.Type))
		st.bad = true
		return
	}
	l.setExpr(st, expr, source)
}

// setExpr sets a variable from a constant expression.
func (l *loader) setExpr(st *varState, expr hclv2.Expression, source string) {
	val, diags := expr.Value(&hclv2.EvalContext{Functions: Functions()})
	l.diags.addAll(diags)
	if diags.HasErrors() {
		st.bad = true
		return
	}
	cv, err := convert.Convert(val, st.v.Type)
	if err != nil {
		l.errorf(expr.Range(), "Invalid value for variable",
			"Variable %q is %s, and the value from %s is not: %s. Give %s.",
			st.v.Name, typeexpr.TypeString(st.v.Type), source, err, typeExample(st.v.Type))
		st.bad = true
		return
	}
	st.v.Value, st.set, st.bad = cv, true, false
}

func typeExample(ty cty.Type) string {
	switch {
	case ty == cty.Number:
		return "a number, like 9000"
	case ty == cty.Bool:
		return "true or false"
	case ty.IsListType() || ty.IsSetType() || ty.IsTupleType():
		return `a list in brackets, like [1, 2]`
	case ty.IsMapType() || ty.IsObjectType():
		return `an object in braces, like { a = 1 }`
	}
	return "a value of that type"
}

// loadVarFile reads a file of `name = value` lines.
func (l *loader) loadVarFile(path string, states map[string]*varState) {
	src, err := os.ReadFile(path)
	if err != nil {
		l.diags.add(&hclv2.Diagnostic{
			Severity: hclv2.DiagError,
			Summary:  "Cannot read variable file",
			Detail:   err.Error() + ": check the -var-file path.",
		})
		return
	}
	l.lab.Sources[path] = src
	file, diags := hclsyntax.ParseConfig(src, path, hclv2.InitialPos)
	l.diags.addAll(diags)
	if diags.HasErrors() {
		return
	}
	body := file.Body.(*hclsyntax.Body)
	for _, b := range body.Blocks {
		l.errorf(b.TypeRange, "Block in a variable file",
			"A variable file holds only name = value lines; a %s block belongs in the lab's *%s files.", b.Type, FileSuffix)
	}
	for _, a := range sortedBodyAttrs(body) {
		st := states[a.Name]
		if st == nil {
			l.warnf(a.NameRange, "Value for undeclared variable",
				"The lab declares no variable %q, so this value is not used. %sDeclare it with variable %q {} or remove the line.",
				a.Name, didYouMean(a.Name, l.names(kindVariable)), a.Name)
			continue
		}
		l.setExpr(st, a.Expr, path)
	}
}
