package hcl

import (
	"bytes"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agext/levenshtein"
	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// diagSet collects diagnostics, each (summary, subject) once: a mistake
// that shows in every matrix cell is reported one time, with the cells it
// happened in when it is not all of them.
type diagSet struct {
	list  hclv2.Diagnostics
	index map[string]int
	// scenario is the matrix cell being evaluated, "" outside cells.
	scenario string
	// cells lists, per diagnostic index, the cells it happened in.
	cells map[int][]string
}

func diagKey(d *hclv2.Diagnostic) string {
	k := d.Summary
	if d.Subject != nil {
		k += "\x00" + d.Subject.String()
	} else {
		k += "\x00" + d.Detail
	}
	return k
}

func (s *diagSet) add(d *hclv2.Diagnostic) {
	if s.index == nil {
		s.index = map[string]int{}
		s.cells = map[int][]string{}
	}
	k := diagKey(d)
	i, ok := s.index[k]
	if !ok {
		i = len(s.list)
		s.index[k] = i
		s.list = append(s.list, d)
	}
	if s.scenario != "" {
		if c := s.cells[i]; len(c) == 0 || c[len(c)-1] != s.scenario {
			s.cells[i] = append(c, s.scenario)
		}
	}
}

func (s *diagSet) addAll(ds hclv2.Diagnostics) {
	for _, d := range ds {
		s.add(d)
	}
}

func (s *diagSet) hasErrors() bool { return s.list.HasErrors() }

// errorWithin reports whether an error was raised about the source
// inside rng (an attribute's value already found wrong).
func (s *diagSet) errorWithin(rng hclv2.Range) bool {
	for _, d := range s.list {
		if d.Severity == hclv2.DiagError && d.Subject != nil && d.Subject.Filename == rng.Filename &&
			d.Subject.Start.Byte >= rng.Start.Byte && d.Subject.End.Byte <= rng.End.Byte {
			return true
		}
	}
	return false
}

// errorCount is how many errors were reported so far.
func (s *diagSet) errorCount() int {
	n := 0
	for _, d := range s.list {
		if d.Severity == hclv2.DiagError {
			n++
		}
	}
	return n
}

// noteCells appends to each diagnostic raised in some but not all of the
// total matrix cells which cells they are.
func (s *diagSet) noteCells(total int) {
	for i, cells := range s.cells {
		if len(cells) == 0 || len(cells) >= total {
			continue
		}
		d := s.list[i]
		word := "scenario"
		if len(cells) > 1 {
			word = "scenarios"
		}
		shown := cells
		more := ""
		if len(shown) > 4 {
			more = fmt.Sprintf(" and %d more", len(shown)-4)
			shown = shown[:4]
		}
		d.Detail = strings.TrimSpace(d.Detail + fmt.Sprintf(" (In %s %s%s.)", word, strings.Join(shown, "; "), more))
	}
}

// sorted returns the diagnostics by file and position; those without a
// subject come first.
func (s *diagSet) sorted() hclv2.Diagnostics {
	out := append(hclv2.Diagnostics(nil), s.list...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Subject, out[j].Subject
		switch {
		case a == nil || b == nil:
			return a == nil && b != nil
		case a.Filename != b.Filename:
			return a.Filename < b.Filename
		}
		return a.Start.Byte < b.Start.Byte
	})
	return out
}

// errorf reports an error about the source at subject.
func (l *loader) errorf(subject hclv2.Range, summary, format string, args ...any) {
	l.diags.add(&hclv2.Diagnostic{
		Severity: hclv2.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  subject.Ptr(),
	})
}

// warnf reports a warning about the source at subject.
func (l *loader) warnf(subject hclv2.Range, summary, format string, args ...any) {
	l.diags.add(&hclv2.Diagnostic{
		Severity: hclv2.DiagWarning,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  subject.Ptr(),
	})
}

// didYouMean returns `Did you mean "x"? ` for the candidate closest to
// given, or "" when none is close.
func didYouMean(given string, candidates []string) string {
	if s := suggest(given, candidates); s != "" {
		return fmt.Sprintf("Did you mean %q? ", s)
	}
	return ""
}

// suggest returns the candidate closest to given: one that differs by a
// few edits (two for short names, three for long ones), or that starts
// with given or given with it; "" when none is close.
func suggest(given string, candidates []string) string {
	best, bestDist := "", 0
	g := strings.ToLower(given)
	for _, c := range candidates {
		if c == given {
			continue
		}
		lc := strings.ToLower(c)
		d := levenshtein.Distance(g, lc, nil)
		limit := 2
		if len(c) > 6 {
			limit = 3
		}
		if len(g) >= 3 && (strings.HasPrefix(lc, g) || strings.HasPrefix(g, lc)) {
			d = min(d, 1)
		}
		if d <= limit && (best == "" || d < bestDist) {
			best, bestDist = c, d
		}
	}
	return best
}

// joinOr renders names as `"a", "b" or "c"`.
func joinOr(names []string) string { return joinQuoted(names, "or") }

// joinAnd renders names as `"a", "b" and "c"`.
func joinAnd(names []string) string { return joinQuoted(names, "and") }

func joinQuoted(names []string, last string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	switch len(q) {
	case 0:
		return "(none)"
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " " + last + " " + q[len(q)-1]
}

// literal renders a value as HCL source: "a", 9000, true, [1, 2],
// { tso = true }.
func literal(v cty.Value) string {
	switch {
	case v.IsNull():
		return "null"
	case !v.IsKnown():
		return "(not known)"
	}
	v, _ = v.Unmark()
	ty := v.Type()
	switch {
	case ty == cty.String:
		return strconv.Quote(v.AsString())
	case ty == cty.Number:
		return numberText(v.AsBigFloat())
	case ty == cty.Bool:
		return strconv.FormatBool(v.True())
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		var parts []string
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			parts = append(parts, literal(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case ty.IsMapType() || ty.IsObjectType():
		var parts []string
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			key := k.AsString()
			if !hclsyntax.ValidIdentifier(key) {
				key = strconv.Quote(key)
			}
			parts = append(parts, key+" = "+literal(e))
		}
		if len(parts) == 0 {
			return "{}"
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	return ty.FriendlyName()
}

func numberText(f *big.Float) string {
	if f.IsInt() {
		if i, acc := f.Int64(); acc == big.Exact {
			return strconv.FormatInt(i, 10)
		}
	}
	return f.Text('g', -1)
}

// bareLiteral renders a matrix value for a scenario name: strings without
// quotes (stack=freebsd-10), the rest as HCL literals (mtu=9000).
func bareLiteral(v cty.Value) string {
	if v.Type() == cty.String && v.IsKnown() && !v.IsNull() {
		return v.AsString()
	}
	return literal(v)
}

// WriteDiagnostics writes diags the way Terraform does: the severity and
// summary, the file and line with the enclosing block, the source lines
// with the subject underlined, then the detail. sources maps file names
// (as in the subjects) to their bytes; a subject whose file is missing is
// shown by position only. color adds ANSI colors for a terminal.
func WriteDiagnostics(w io.Writer, sources map[string][]byte, diags hclv2.Diagnostics, color bool) error {
	p := diagPrinter{sources: sources, color: color, files: map[string]*hclv2.File{}, lines: map[string][]lineSpan{}}
	var buf bytes.Buffer
	for _, d := range diags {
		p.write(&buf, d)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

type diagPrinter struct {
	sources map[string][]byte
	color   bool
	files   map[string]*hclv2.File // parsed sources, for the enclosing block
	lines   map[string][]lineSpan  // line offsets of sources
}

const (
	ansiReset     = "\x1b[0m"
	ansiBold      = "\x1b[1m"
	ansiRed       = "\x1b[31m"
	ansiYellow    = "\x1b[33m"
	ansiUnderline = "\x1b[4m"
)

func (p *diagPrinter) paint(codes, s string) string {
	if !p.color {
		return s
	}
	return codes + s + ansiReset
}

func (p *diagPrinter) write(w *bytes.Buffer, d *hclv2.Diagnostic) {
	sev, hue := "Error", ansiRed
	if d.Severity == hclv2.DiagWarning {
		sev, hue = "Warning", ansiYellow
	}
	fmt.Fprintf(w, "%s %s\n\n", p.paint(ansiBold+hue, sev+":"), p.paint(ansiBold, d.Summary))
	if d.Subject != nil {
		p.writeSnippet(w, *d.Subject, hue)
		p.writeValues(w, d)
		w.WriteString("\n")
	}
	if d.Detail != "" {
		w.WriteString(d.Detail)
		w.WriteString("\n\n")
	}
}

// writeSnippet writes `  on FILE line N, in BLOCK:` and the subject's
// lines with their numbers, the subject underlined with carets.
func (p *diagPrinter) writeSnippet(w *bytes.Buffer, r hclv2.Range, hue string) {
	fmt.Fprintf(w, "  on %s line %d", r.Filename, r.Start.Line)
	if ctx := p.enclosing(r); ctx != "" {
		fmt.Fprintf(w, ", in %s", ctx)
	}
	w.WriteString(":\n")
	src, ok := p.sources[r.Filename]
	if !ok {
		return
	}
	lines, ok := p.lines[r.Filename]
	if !ok {
		lines = splitLines(src)
		p.lines[r.Filename] = lines
	}
	first, last := r.Start.Line, r.End.Line
	if last < first {
		last = first
	}
	const maxLines = 6
	width := len(strconv.Itoa(last))
	for n := first; n <= last && n <= len(lines); n++ {
		if last-first >= maxLines && n == first+maxLines/2 {
			fmt.Fprintf(w, "  %*s  ...\n", width, "")
			n = last - maxLines/2 + 1
		}
		ln := lines[n-1]
		fmt.Fprintf(w, "  %*d: %s\n", width, n, strings.TrimRight(string(src[ln.start:ln.end]), "\r"))
		// The underlined part of this line, in bytes of the line.
		from, to := 0, ln.end-ln.start
		if n == first {
			from = clamp(r.Start.Byte-ln.start, 0, to)
		} else {
			from = len(ln.text(src)) - len(strings.TrimLeft(ln.text(src), " \t"))
		}
		if n == last {
			to = clamp(r.End.Byte-ln.start, from, to)
		}
		text := ln.text(src)
		under := utf8.RuneCountInString(strings.TrimRight(text[from:to], "\r"))
		if under == 0 {
			under = 1
		}
		var pad strings.Builder
		for _, c := range text[:from] {
			if c == '\t' {
				pad.WriteByte('\t')
			} else {
				pad.WriteByte(' ')
			}
		}
		fmt.Fprintf(w, "  %*s  %s%s\n", width, "", pad.String(), p.paint(ansiBold+hue, strings.Repeat("^", under)))
	}
}

// writeValues shows the values the subject's expression read, like
// Terraform's "var.mtu is 20".
func (p *diagPrinter) writeValues(w *bytes.Buffer, d *hclv2.Diagnostic) {
	if d.Expression == nil || d.EvalContext == nil {
		return
	}
	seen := map[string]bool{}
	for _, t := range d.Expression.Variables() {
		name := traversalText(t)
		if r := t.SourceRange(); !containsRange(*d.Subject, r) {
			continue
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		v, diags := t.TraverseAbs(d.EvalContext)
		if diags.HasErrors() {
			continue
		}
		fmt.Fprintf(w, "    │ %s is %s\n", name, literal(v))
	}
}

func traversalText(t hclv2.Traversal) string {
	var b strings.Builder
	for _, s := range t {
		switch s := s.(type) {
		case hclv2.TraverseRoot:
			b.WriteString(s.Name)
		case hclv2.TraverseAttr:
			b.WriteString("." + s.Name)
		case hclv2.TraverseIndex:
			b.WriteString("[" + literal(s.Key) + "]")
		case hclv2.TraverseSplat:
			b.WriteString("[*]")
		}
	}
	return b.String()
}

// enclosing names the top-level block holding r, like `nic "tx0"`.
func (p *diagPrinter) enclosing(r hclv2.Range) string {
	f, ok := p.files[r.Filename]
	if !ok {
		if src, ok := p.sources[r.Filename]; ok {
			f, _ = hclsyntax.ParseConfig(src, r.Filename, hclv2.InitialPos)
		}
		p.files[r.Filename] = f
	}
	if f == nil {
		return ""
	}
	b := f.OutermostBlockAtPos(r.Start)
	if b == nil {
		return ""
	}
	s := b.Type
	for _, l := range b.Labels {
		s += " " + strconv.Quote(l)
	}
	return s
}

type lineSpan struct{ start, end int } // byte offsets, end excludes "\n"

func (l lineSpan) text(src []byte) string { return string(src[l.start:l.end]) }

func splitLines(src []byte) []lineSpan {
	var out []lineSpan
	start := 0
	for i, c := range src {
		if c == '\n' {
			out = append(out, lineSpan{start, i})
			start = i + 1
		}
	}
	return append(out, lineSpan{start, len(src)})
}

func clamp(v, lo, hi int) int {
	return max(lo, min(v, hi))
}

func containsRange(outer, inner hclv2.Range) bool {
	return outer.Filename == inner.Filename && outer.Start.Byte <= inner.Start.Byte && inner.End.Byte <= outer.End.Byte
}
