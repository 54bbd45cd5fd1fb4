package hcl

import (
	"fmt"
	"slices"
	"strings"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/tsolab/tsolab/config"
)

var (
	workloadKinds = []string{string(config.Stream), string(config.RR), string(config.Sendfile)}
	engineKinds   = []string{string(config.EngineKernel), string(config.EngineSim)}
)

// kindOnly lists attributes that apply to some workload kinds only.
var kindOnly = map[string][]config.WorkloadKind{
	"request_size":  {config.RR},
	"response_size": {config.RR},
	"concurrency":   {config.RR},
	"file_size":     {config.Sendfile},
	"rate":          {config.Stream, config.Sendfile},
	"read_size":     {config.Stream, config.Sendfile},
}

// defaultConnections is a workload's connections per server when it
// gives none, as config.Workload documents; its call sizes' defaults are
// config's (config.DefaultWriteSize, config.DefaultReadSize).
const defaultConnections = 1

// workload evaluates a workload block in one cell.
func (e *evaluator) workload(b *block, sc *config.Scenario) *config.Workload {
	w := &config.Workload{Name: b.name, Kind: config.Stream, Connections: defaultConnections, WriteSize: config.DefaultWriteSize, Range: b.def}
	if k, ok := e.oneOf(b, "kind", workloadKinds); ok {
		w.Kind = config.WorkloadKind(k)
	}
	if w.Kind != config.RR {
		w.ReadSize = config.DefaultReadSize
	}
	for _, a := range b.sortedAttrs() {
		if kinds, ok := kindOnly[a.Name]; ok && !slices.Contains(kinds, w.Kind) {
			e.fail(a, a.NameRange, "Attribute does not apply",
				"%s applies to workloads of kind %s; workload %q is %q. Remove it, or set kind = %q.",
				a.Name, joinOr(kindStrings(kinds)), b.name, w.Kind, kinds[0])
		}
	}
	w.Client, _ = e.reference(b, "client")
	if v, ok := e.boolean(b, "loopback"); ok {
		w.Loopback = v
	}
	if servers, ok := e.referenceList(b, "servers"); ok {
		w.Servers = e.checkServers(b, w, servers)
	}
	if n, ok := e.integer(b, "connections", 1, 100000); ok {
		w.Connections = int(n)
	}
	if n, ok := e.size(b, "write_size", 1); ok {
		w.WriteSize = int(n)
	}
	if n, ok := e.size(b, "read_size", 1); ok {
		w.ReadSize = int(n)
	}
	d, hasDuration := e.duration(b, "duration")
	n, hasBytes := e.size(b, "bytes", 1)
	switch {
	case hasDuration && hasBytes:
		a := b.attrs["bytes"]
		e.fail(a, a.SrcRange, "Both duration and bytes",
			"A workload runs for a time or for an amount of data, not both: remove duration or bytes from workload %q.", b.name)
	case hasDuration:
		w.Duration = d
	case hasBytes:
		w.Bytes = n
	}
	if n, ok := e.size(b, "sndbuf", 1); ok {
		w.SndBuf = int(n)
	}
	if n, ok := e.size(b, "rcvbuf", 1); ok {
		w.RcvBuf = int(n)
	}
	if v, ok := e.boolean(b, "nodelay"); ok {
		w.NoDelay = v
	}
	w.Measure = e.measure(b)
	if v, ok := e.boolean(b, "cork"); ok {
		w.Cork = v
	}
	if s, ok := e.str(b, "cc"); ok {
		w.CC = s
	}
	if w.Kind == config.RR {
		w.RequestSize, w.ResponseSize, w.Concurrency = 1, 1, 1
	}
	if n, ok := e.size(b, "request_size", 1); ok {
		w.RequestSize = int(n)
	}
	if n, ok := e.size(b, "response_size", 1); ok {
		w.ResponseSize = int(n)
	}
	if n, ok := e.integer(b, "concurrency", 1, 100000); ok {
		w.Concurrency = int(n)
	}
	if n, ok := e.size(b, "file_size", 1); ok {
		w.FileSize = n
	}
	if r, ok := e.rate(b, "rate"); ok {
		w.Rate = r
	}
	if w.Duration == 0 && w.Bytes == 0 && !(w.Kind == config.Sendfile && w.FileSize > 0) &&
		b.attrs["duration"] == nil && b.attrs["bytes"] == nil && !b.isMisspelt("duration", "bytes", "file_size") {
		detail := fmt.Sprintf("Workload %q runs until a time or an amount of data: add duration = \"10s\" or bytes = \"100MB\".", b.name)
		if w.Kind == config.Sendfile {
			detail = fmt.Sprintf("Workload %q runs until a time or an amount of data: add duration = \"10s\", bytes = \"100MB\", or file_size = \"1GiB\" to send the file once.", b.name)
		}
		e.l.errorf(b.def, "Missing workload length", "%s", detail)
	}
	return w
}

func kindStrings(kinds []config.WorkloadKind) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = string(k)
	}
	return out
}

// checkServers checks that servers are NICs, or hosts with loopback, and
// that each is declared once.
func (e *evaluator) checkServers(b *block, w *config.Workload, names []string) []string {
	a := b.attrs["servers"]
	kinds := refRootsIn(a.Expr)
	switch {
	case w.Loopback && kinds[kindNIC]:
		e.fail(a, a.Expr.Range(), "Servers must be hosts with loopback",
			"With loopback = true the traffic stays inside one host over lo, so servers names hosts: write servers = [host.%s].", orName(w.Client, "HOST"))
		return nil
	case !w.Loopback && kinds[kindHost]:
		e.fail(a, a.Expr.Range(), "Servers must be NICs",
			"A workload connects to the addresses of its servers, so servers names NICs, like servers = [nic.NIC]. To run over a host's loopback instead, set loopback = true.")
		return nil
	}
	if len(names) == 0 {
		e.fail(a, a.Expr.Range(), "No servers",
			"Workload %q needs at least one server: write %s.", b.name, exampleOf(b, "servers"))
		return nil
	}
	kind := kindNIC
	if w.Loopback {
		kind = kindHost
	}
	seen := map[string]bool{}
	for _, n := range names {
		if e.l.byAddr[kind+"."+n] == nil {
			e.l.undeclaredBlock(kind, n, a.Expr.Range())
			return nil
		}
		if seen[n] {
			e.fail(a, a.Expr.Range(), "Duplicate server",
				"Workload %q lists %s.%s twice; raise connections to run more connections to one server.", b.name, kind, n)
			return nil
		}
		seen[n] = true
	}
	return names
}

func orName(s, placeholder string) string {
	if s == "" {
		return placeholder
	}
	return s
}

// refRootsIn returns the block kinds an expression's references start with.
func refRootsIn(expr hclsyntax.Expression) map[string]bool {
	out := map[string]bool{}
	for _, t := range expr.Variables() {
		if r := t.RootName(); slices.Contains(refKinds, r) {
			out[r] = true
		}
	}
	return out
}

// loadLab reads the lab block.
func (l *loader) loadLab() {
	b := l.unique[kindLab]
	if b == nil {
		return
	}
	l.lab.Name = b.name
	if n := l.opts.Name; n != "" {
		if namespaceSafe(n) {
			l.lab.Name = n
		} else {
			l.errorf(b.def, "Invalid lab name",
				"-name %q cannot name a lab: use letters, digits, - and _, starting with a letter (it becomes part of namespace names), like %q.", n, suggestName(n))
		}
	}
	l.lab.Engine = config.EngineKernel
	e := &evaluator{l: l, ctx: l.context(nil)}
	if s, ok := e.str(b, "description"); ok {
		l.lab.Description = s
	}
	if s, ok := e.oneOf(b, "engine", engineKinds); ok {
		l.lab.Engine = config.EngineKind(s)
	}
	l.lab.Measure = e.measure(b)
	if v, ok := e.boolean(b, "strict"); ok {
		l.lab.Strict = v
	}
}

// measure reads repeat and confidence of a lab or workload block:
// confidence needs room for a confidence interval.
func (e *evaluator) measure(b *block) config.Measure {
	var m config.Measure
	if n, ok := e.integer(b, "repeat", 1, 1000); ok {
		m.Repeat, m.RepeatAt = int(n), b.attrs["repeat"].Range()
	}
	if f, ok := e.number(b, "confidence", 0, 200); ok {
		m.Confidence, m.ConfidenceAt = f, b.attrs["confidence"].Range()
	}
	if m.Confidence > 0 && m.Repeat > 0 && m.Repeat < config.MinRunsForCI {
		a := b.attrs["repeat"]
		e.fail(a, a.Expr.Range(), "Too few runs for confidence",
			"confidence stops the runs once their 95%% confidence interval is tight enough, and an interval needs at least %d runs: set repeat = %d or more in %s (it is the most runs confidence may make), or leave repeat out (30).",
			config.MinRunsForCI, config.MinRunsForCI, where(b, "repeat"))
	}
	return m
}

// loadExpects reads the expect blocks. Their conditions stay expressions:
// the outcome package evaluates them against results.
func (l *loader) loadExpects() {
	e := &evaluator{l: l, ctx: l.context(nil)}
	workloads := l.names(kindWorkload)
	for _, b := range l.blocks[kindExpect] {
		x := &config.Expect{Name: b.name, Range: b.def}
		if w, ok := e.reference(b, "workload"); ok {
			x.Workload = w
		} else if b.attrs["workload"] == nil && !b.isMisspelt("workload") {
			switch len(workloads) {
			case 1:
				x.Workload = workloads[0]
			case 0:
				l.errorf(b.def, "Expectation without a workload",
					"expect %q judges the results of a workload, and the lab declares none: add a workload block.", b.name)
			default:
				l.errorf(b.def, "Missing required attribute",
					"expect %q must say which workload it judges, since the lab has %d: add workload = workload.%s (or one of %s).",
					b.name, len(workloads), workloads[0], joinAnd(workloads))
			}
		}
		if a := b.attr("when"); a != nil {
			x.When = a.Expr
		}
		if a := b.attr("condition"); a != nil {
			x.Condition = a.Expr
			l.checkScenarioValues(a.Expr)
		}
		if s, ok := e.str(b, "message"); ok {
			x.Message = s
		}
		l.lab.Expects = append(l.lab.Expects, x)
	}
}

// checkWhen reports an expectation's when that is not a bool in the
// evaluator's cell, before any run: it reads only var, matrix and engine,
// so its type is known at load time (engine, known only when results are
// judged, is an unknown string here). A when that evaluates with errors
// is left to the reference checks, which report those.
func (e *evaluator) checkWhen(b *block) {
	a := b.attr("when")
	if a == nil {
		return
	}
	vars := map[string]cty.Value{rootEngine: cty.UnknownVal(cty.String)}
	for k, v := range e.ctx.Variables {
		vars[k] = v
	}
	ctx := &hclv2.EvalContext{Variables: vars, Functions: e.ctx.Functions}
	v, diags := a.Expr.Value(ctx)
	switch {
	case diags.HasErrors() || v.Type() == cty.DynamicPseudoType:
	case v.Type() != cty.Bool:
		e.failIn(ctx, a, a.Expr.Range(), "Invalid when", "The when of expect %q must be true or false; it is a %s: compare it, e.g. matrix.mtu == 9000.",
			b.name, v.Type().FriendlyName())
	case v.IsKnown() && v.IsNull():
		e.failIn(ctx, a, a.Expr.Range(), "Invalid when", "The when of expect %q must be true or false; it is null: give it a value.", b.name)
	}
}

// checkScenarioValues reports a scenario({ axis = VALUE }) in a condition
// whose constant VALUE is not on the axis, before any run: no sibling cell
// has it. Axes and computed values are checked elsewhere (checkScenarioCall,
// and outcome when the condition is judged).
func (l *loader) checkScenarioValues(cond hclsyntax.Expression) {
	if l.matrixBroken {
		return
	}
	hclsyntax.VisitAll(cond, func(n hclsyntax.Node) hclv2.Diagnostics {
		c, ok := n.(*hclsyntax.FunctionCallExpr)
		if !ok || c.Name != funcScenario || len(c.Args) != 1 {
			return nil
		}
		obj, ok := c.Args[0].(*hclsyntax.ObjectConsExpr)
		if !ok {
			return nil
		}
		for _, it := range obj.Items {
			ax := l.axis(hclv2.ExprAsKeyword(it.KeyExpr))
			v, diags := it.ValueExpr.Value(nil)
			if ax == nil || diags.HasErrors() || !v.IsWhollyKnown() || onAxis(ax, v) {
				continue
			}
			vals := make([]string, len(ax.Values))
			for i, av := range ax.Values {
				vals[i] = literal(av)
			}
			l.errorf(it.ValueExpr.Range(), "No such matrix value",
				"scenario() selects a sibling cell by matrix values, and the axis %s has no value %s: its values are %s.",
				ax.Name, literal(v), strings.Join(vals, ", "))
		}
		return nil
	})
}

// axis returns the matrix axis named name, or nil.
func (l *loader) axis(name string) *config.MatrixAxis {
	for _, ax := range l.lab.Matrix {
		if ax.Name == name {
			return ax
		}
	}
	return nil
}

// onAxis reports whether v, converted as the scenario() function converts
// it, is one of the axis's values.
func onAxis(ax *config.MatrixAxis, v cty.Value) bool {
	for _, av := range ax.Values {
		if cv, err := convert.Convert(v, av.Type()); err == nil && cv.IsKnown() && cv.Equals(av).True() {
			return true
		}
	}
	return false
}
