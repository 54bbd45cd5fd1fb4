package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestSimParallelIsSerial runs every example lab on the model with its
// runs one at a time and four at once (two rounds, -repeat 2): the results
// file and the verdict table must be the same, byte for byte.
func TestSimParallelIsSerial(t *testing.T) {
	for _, dir := range exampleLabs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			run := func(workers int) (results, table []byte) {
				var out, errb bytes.Buffer
				c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, workers: workers}
				file := filepath.Join(t.TempDir(), "results.json")
				args := []string{"test", "-engine", "sim", "-json", file, dir}
				if labDraws(t, dir) {
					// Two rounds; a lab whose model draws nothing refuses
					// -repeat (its runs would be copies).
					args = append([]string{"test", "-repeat", "2"}, args[1:]...)
				}
				code := c.main(args)
				if code != exitOK && code != exitFailed {
					t.Fatalf("workers %d: exit %d, stderr:\n%s", workers, code, errb.String())
				}
				js, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				return js, out.Bytes()
			}
			serialJS, serialOut := run(1)
			parallelJS, parallelOut := run(4)
			if !bytes.Equal(serialJS, parallelJS) {
				t.Errorf("results differ: serial %d bytes, parallel %d bytes", len(serialJS), len(parallelJS))
			}
			if !bytes.Equal(serialOut, parallelOut) {
				t.Errorf("stdout differs:\nserial:\n%s\nparallel:\n%s", serialOut, parallelOut)
			}
		})
	}
}

// labDraws says whether some scenario of the lab in dir draws from the
// model's random source (a host runs a scheduler).
func labDraws(t testing.TB, dir string) bool {
	var errb bytes.Buffer
	c := &cli{stdin: strings.NewReader(""), stdout: &errb, stderr: &errb}
	lab := c.loadLab(dir, &varFlags{})
	if lab == nil {
		t.Fatalf("load %s:\n%s", dir, errb.String())
	}
	return slices.ContainsFunc(lab.Scenarios, draws)
}

// BenchmarkSimLab runs `tsolab test -engine sim` on each example lab with
// its runs one at a time and with one per core (GOMAXPROCS), so the two
// wall times per lab compare in one benchmark run.
func BenchmarkSimLab(b *testing.B) {
	for _, dir := range exampleLabs(b) {
		for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("%s/workers=%d", filepath.Base(dir), workers), func(b *testing.B) {
				for b.Loop() {
					var out bytes.Buffer
					c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &out, workers: workers}
					if code := c.main([]string{"test", "-engine", "sim", dir}); code != exitOK && code != exitFailed {
						b.Fatalf("exit %d:\n%s", code, out.String())
					}
				}
			})
		}
	}
}

// exampleLabs lists the directories of the example labs.
func exampleLabs(tb testing.TB) []string {
	files, err := filepath.Glob("../../examples/*/lab.tsolab.hcl")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no example labs: %v", err)
	}
	dirs := make([]string, len(files))
	for i, f := range files {
		dirs[i] = filepath.Dir(f)
	}
	return dirs
}
