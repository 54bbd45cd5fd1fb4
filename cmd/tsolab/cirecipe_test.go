package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestCIRecipeInStep checks that every tsolab command docs/ci.md gives
// runs in testdata/script/ci-recipe.txtar, as written (less sudo, which
// the script does not need, and shell quotes, which it does not parse).
func TestCIRecipeInStep(t *testing.T) {
	doc, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("testdata/script/ci-recipe.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, l := range strings.Split(string(script), "\n") {
		if rest, ok := strings.CutPrefix(l, "exec tsolab "); ok {
			ran = append(ran, "tsolab "+rest)
		}
	}
	cmd := regexp.MustCompile(`(?:^|[\s-])(?:sudo )?(tsolab (?:fmt|validate|test) [^\n]*?)\s*$`)
	n := 0
	for _, l := range strings.Split(string(doc), "\n") {
		m := cmd.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil || strings.Contains(l, "`") {
			continue
		}
		n++
		want := strings.ReplaceAll(m[1], `"`, "")
		found := false
		for _, r := range ran {
			found = found || r == want
		}
		if !found {
			t.Errorf("docs/ci.md runs %q, which ci-recipe.txtar does not (it runs %q)", want, ran)
		}
	}
	if n < 6 {
		t.Errorf("found %d tsolab commands in docs/ci.md, want the three of each recipe and of the commands section", n)
	}
}
