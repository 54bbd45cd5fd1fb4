package outcome

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tsolab/tsolab/result"
)

func TestWriteMarkdown(t *testing.T) {
	lab, results, verdicts := tableFixture(t, 1)
	results.Provenance = &result.Provenance{Tool: result.Tool{Version: "9.9"}, Lab: result.Lab{Name: lab.Name, Hash: "abc"}, Machine: result.Machine{Kernel: "6.18.0", CPUs: 2}}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, lab, results, verdicts, false); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"## tsolab: " + lab.Name,
		"- tsolab 9.9",
		"machine: Linux 6.18.0",
		"### Results",
		"| SCENARIO | WORKLOAD | RUNS | GB/S |",
		"| --- | --- |",
		"### Verdicts",
		"| EXPECT | SCENARIO | WORKLOAD | VERDICT | EXPECTED | MEASURED |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// Every table row has as many cells as its header: no stray pipe from
	// an expression ("a || b") splits a cell.
	var cols int
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "| ") {
			cols = 0
			continue
		}
		n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|")
		if cols == 0 {
			cols = n
		} else if n != cols {
			t.Errorf("row %q has %d separators, its header %d", line, n, cols)
		}
	}
}

func TestMdEscape(t *testing.T) {
	if got, want := mdEscape("a || b_c <x>"), `a \|\| b\_c &lt;x&gt;`; got != want {
		t.Errorf("mdEscape: got %q, want %q", got, want)
	}
}
