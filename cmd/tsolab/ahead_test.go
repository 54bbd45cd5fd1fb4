package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimParallelIsSerial runs every example lab on the model with its
// runs one at a time and four at once (two rounds, -repeat 2): the results
// file and the verdict table must be the same, byte for byte.
func TestSimParallelIsSerial(t *testing.T) {
	labs, err := filepath.Glob("../../examples/*/lab.tsolab.hcl")
	if err != nil || len(labs) == 0 {
		t.Fatalf("no example labs: %v", err)
	}
	for _, lab := range labs {
		dir := filepath.Dir(lab)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			run := func(workers int) (results, table []byte) {
				var out, errb bytes.Buffer
				c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, workers: workers}
				file := filepath.Join(t.TempDir(), "results.json")
				code := c.main([]string{"test", "-engine", "sim", "-repeat", "2", "-json", file, dir})
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
