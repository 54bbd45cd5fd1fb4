package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
)

// same runs every example lab of the first tree (this one) with each
// tree's tsolab (`tsolab test -engine sim -seed S -json`) at each seed,
// and reports the labs whose results differ in anything but the git
// commit the results record: a change meant to leave the model's
// results alone (a faster loop, a compiler option) must give the same
// file. Both binaries read the same lab files, so a base whose examples
// differ (a refit profile) does not count as a difference. It returns
// how many lab and seed pairs differ.
func same(work, pgo string, trees []*tree, seeds []string) (differ int) {
	root := treeRoot(trees[0])
	bins := make([]string, len(trees))
	for i, t := range trees {
		bins[i] = filepath.Join(work, t.name+"-tsolab")
		r := treeRoot(t)
		sh(r, "go", "build", "-pgo="+profileOf(r, pgo), "-o", bins[i], "./cmd/tsolab")
	}
	labs, err := filepath.Glob(filepath.Join(root, "examples", "*", "lab.tsolab.hcl"))
	check(err)
	for _, lab := range labs {
		dir := filepath.Dir(lab)
		for _, seed := range seeds {
			var got []any
			for i, t := range trees {
				out := filepath.Join(work, fmt.Sprintf("%s-%s-%s.json", t.name, filepath.Base(dir), seed))
				cmd := exec.Command(bins[i], "test", "-engine", "sim", "-seed", seed, "-json", out, dir)
				cmd.Dir = root
				cmd.Run() // a failed expectation exits 1; the file is what counts
				got = append(got, readResults(out))
			}
			if p := firstDiff(got[0], got[1], ""); p != "" {
				differ++
				fmt.Printf("results differ: %s at seed %s: first at %s\n", filepath.Base(dir), seed, p)
			}
		}
	}
	fmt.Printf("same results: %d of %d lab and seed pairs alike\n", len(labs)*len(seeds)-differ, len(labs)*len(seeds))
	return differ
}

func treeRoot(t *tree) string { return filepath.Dir(filepath.Dir(t.dir)) }

// readResults reads a results file without the git commit of the tree
// that wrote it (provenance.lab.git).
func readResults(path string) any {
	b, err := os.ReadFile(path)
	check(err)
	var v map[string]any
	check(json.Unmarshal(b, &v))
	if p, ok := v["provenance"].(map[string]any); ok {
		if l, ok := p["lab"].(map[string]any); ok {
			delete(l, "git")
		}
	}
	return v
}

// firstDiff is the path of the first value that differs between a and
// b, "" when they are equal.
func firstDiff(a, b any, path string) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return or(path, ".")
		}
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range x {
				if !yield(k) {
					return
				}
			}
			for k := range y {
				if _, ok := x[k]; !ok && !yield(k) {
					return
				}
			}
		})
		for _, k := range keys {
			if p := firstDiff(x[k], y[k], path+"."+k); p != "" {
				return p
			}
		}
		return ""
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return or(path, ".")
		}
		for i := range x {
			if p := firstDiff(x[i], y[i], fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
		return ""
	}
	if !reflect.DeepEqual(a, b) {
		return or(path, ".")
	}
	return ""
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// seedList splits -same's comma-separated seeds.
func seedList(s string) []string {
	var seeds []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			seeds = append(seeds, f)
		}
	}
	return seeds
}
