package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeedFlag: -seed seeds the model's random source, and every run
// that drew from it (node-2016 has a scheduler) names the seed in its
// provenance; the same seed gives the same results file. The kernel
// engine draws nothing, so -seed with it is an error, not ignored.
func TestSeedFlag(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, env: os.Environ()}
		return c.main(args), errb.String()
	}
	files := map[string][]byte{}
	for _, name := range []string{"a.json", "b.json", "c.json"} {
		seed := "3"
		if name == "c.json" {
			seed = "4"
		}
		path := filepath.Join(dir, name)
		if code, stderr := run("test", "-engine", "sim", "-seed", seed, "-json", path, "../../examples/freebsd-tso-trim"); code != exitFailed {
			t.Fatalf("-seed %s: exit %d, want %d (one expectation fails on the model)\n%s", seed, code, exitFailed, stderr)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	res, err := readResults(filepath.Join(dir, "a.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Runs {
		if m := r.Provenance.Model; m == nil || m.Seed == nil || *m.Seed != 3 {
			t.Errorf("%s: provenance model %+v, want seed 3", r.Scenario, m)
		}
	}
	if !bytes.Equal(files["a.json"], files["b.json"]) {
		t.Errorf("-seed 3 twice: the results differ")
	}
	if bytes.Equal(files["a.json"], files["c.json"]) {
		t.Errorf("-seed 3 and 4 gave the same results")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"test", "-engine", "sim", "-seed", "x", "../../examples/freebsd-tso-trim"}, `"x" is not a whole number`},
		{[]string{"test", "-engine", "kernel", "-seed", "1", "../../examples/freebsd-tso-trim"}, "-seed applies to the sim engine only"},
	} {
		if code, stderr := run(tc.args...); code == exitOK || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want an error with %q", tc.args, code, stderr, tc.want)
		}
	}
}
