package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// negated is the operator each generated mutant puts in place of another:
// the condition's negation (or the other connective), so that a mutant
// is a change of behaviour unless the condition is dead or redundant.
var negated = map[token.Token]token.Token{
	token.EQL: token.NEQ, token.NEQ: token.EQL,
	token.LSS: token.GEQ, token.GEQ: token.LSS,
	token.GTR: token.LEQ, token.LEQ: token.GTR,
	token.LAND: token.LOR, token.LOR: token.LAND,
}

// generated lists the operator mutants of one package directory (its
// non-test Go files, not its sub-directories): every comparison or
// connective negated, a sample of max of them (all when max <= 0) drawn
// with a fixed seed so that two runs on one tree draw the same ones. The
// package's own tests are the ones that should notice.
//
// dir may name one file (engine/kernel/measure.go) instead: its mutants
// only, judged by its package's tests.
func generated(root, dir string, max int, seed int64, netns bool) ([]mutation, error) {
	paths, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
	if strings.HasSuffix(dir, ".go") {
		paths, dir = []string{filepath.Join(root, dir)}, filepath.Dir(dir)
	}
	if err != nil {
		return nil, err
	}
	var all []mutation
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		ms, err := fileMutants(root, p)
		if err != nil {
			return nil, err
		}
		all = append(all, ms...)
	}
	if max > 0 && len(all) > max {
		r := rand.New(rand.NewSource(seed))
		r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		all = all[:max]
		sort.SliceStable(all, func(i, j int) bool { return all[i].name < all[j].name })
	}
	pkg := "./" + filepath.ToSlash(dir) + "/"
	for i := range all {
		all[i].pkgs = []string{pkg}
		all[i].netns = netns
	}
	return all, nil
}

// fileMutants lists one file's operator mutants, each named by file, line
// and the line's text with the operator swapped.
func fileMutants(root, path string) ([]mutation, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel(root, path)
	var out []mutation
	ast.Inspect(f, func(n ast.Node) bool {
		b, ok := n.(*ast.BinaryExpr)
		if !ok {
			return true
		}
		to, ok := negated[b.Op]
		if !ok {
			return true
		}
		pos := fset.Position(b.OpPos)
		out = append(out, mutation{
			name: fmt.Sprintf("%s:%d %s", rel, pos.Line, mutatedLine(src, pos.Offset, b.Op, to)),
			file: rel, at: pos.Offset + 1, from: b.Op.String(), to: to.String(),
		})
		return true
	})
	return out, nil
}

// mutatedLine is the source line holding off with the operator op there
// replaced by to, trimmed.
func mutatedLine(src []byte, off int, op, to token.Token) string {
	start := strings.LastIndexByte(string(src[:off]), '\n') + 1
	end := off + strings.IndexByte(string(src[off:])+"\n", '\n')
	line := string(src[start:off]) + to.String() + string(src[off+len(op.String()):end])
	return strings.TrimSpace(line)
}
