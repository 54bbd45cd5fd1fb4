package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// readmeCommand is a tsolab command in a code block of the README:
// "sudo tsolab ...", "tsolab ..." or "go run ./cmd/tsolab ...", comment
// aside.
var readmeCommand = regexp.MustCompile(`^    (?:sudo )?(?:go run \./cmd/)?(tsolab [^#]*?)\s*(?:#.*)?$`)

// scriptCommand is a tsolab command of a script.
var scriptCommand = regexp.MustCompile(`^(?:\[[^]]*\] )?!? ?exec (tsolab .*?)\s*$`)

// TestReadmeWalkthrough: testdata/script/readme.txtar runs every tsolab
// command of the README's code blocks, as written and in the README's
// order (sudo and go run aside), so a walk-through that stops working, or
// a command added to the README and not to the script, fails here.
func TestReadmeWalkthrough(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("testdata/script/readme.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, line := range strings.Split(string(readme), "\n") {
		if m := readmeCommand.FindStringSubmatch(line); m != nil {
			want = append(want, m[1])
		}
	}
	if len(want) < 5 {
		t.Fatalf("found %d tsolab commands in the README's code blocks: %q; the pattern no longer matches how it writes them", len(want), want)
	}
	var ran []string
	for _, line := range strings.Split(string(script), "\n") {
		if strings.HasPrefix(line, "-- ") {
			break // the files of the script
		}
		if m := scriptCommand.FindStringSubmatch(line); m != nil {
			ran = append(ran, m[1])
		}
	}
	i := 0
	for _, cmd := range ran {
		if i < len(want) && cmd == want[i] {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("readme.txtar does not run the README's command %q (in the README's order, after %q): run it there as written", want[i], want[:i])
	}
}
