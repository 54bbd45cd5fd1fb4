package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeedFlag: -seed seeds the model's random source, and every run
// that drew from it (the cells whose hosts run node-2016's scheduler,
// scheduler=c1-idle) names the seed in its provenance, and no other run
// does; the same seed gives the same results file. The kernel engine
// draws nothing, so -seed with it is an error, not ignored.
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
		if code, stderr := run("test", "-engine", "sim", "-seed", seed, "-json", path, "../../examples/freebsd-tso-trim"); code != exitOK {
			t.Fatalf("-seed %s: exit %d\n%s", seed, code, stderr)
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
	drew := 0
	for _, r := range res.Runs {
		m := r.Provenance.Model
		switch {
		case m == nil:
			t.Errorf("%s: no model provenance", r.Scenario)
		case strings.HasSuffix(r.Scenario, ",scheduler=c1-idle"):
			drew++
			if m.Seed == nil || *m.Seed != 3 {
				t.Errorf("%s: provenance model %+v, want seed 3", r.Scenario, m)
			}
		case m.Seed != nil:
			t.Errorf("%s runs no scheduler and draws nothing, but its provenance names seed %d", r.Scenario, *m.Seed)
		}
	}
	if drew != 2 {
		t.Errorf("%d runs with the scheduler, want 2", drew)
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

// TestSchedulerAttr: a host's scheduler that its CPU profile does not
// offer is an error at the attribute, before any run, on test and on
// calibrate, naming the schedulers there are.
func TestSchedulerAttr(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"lab.tsolab.hcl", "node-2016.calibration.json"} {
		b, err := os.ReadFile(filepath.Join("../../examples/freebsd-tso-trim", name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "lab.tsolab.hcl" {
			b = bytes.ReplaceAll(b, []byte(`"c1-idle"`), []byte(`"c2"`))
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"test", "-engine", "sim", dir}, {"calibrate", "-check", dir}} {
		var out, errb bytes.Buffer
		c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, env: os.Environ()}
		code := c.main(args)
		stderr := errb.String()
		if code != exitError || !strings.Contains(stderr, "lab.tsolab.hcl line ") ||
			!strings.Contains(stderr, `cpu profile node-2016 has no scheduler "c2": use "none" or "c1-idle"`) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit %d and the error at the scheduler attribute", args, code, stderr, exitError)
		}
		if strings.Contains(out.String(), "running") || strings.Contains(out.String(), "PARAMETER") {
			t.Errorf("%v ran the model before the error:\n%s", args, out.String())
		}
	}
}
