package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsolab/tsolab/result"
	"github.com/tsolab/tsolab/view"
)

// TestRunJSONStream runs the model lab with -json - and reads the stream
// as a program would: every line one JSON object with the common fields,
// the version first, then per scenario its start, per workload its start
// and completion, the results, the verdicts and the summary last.
func TestRunJSONStream(t *testing.T) {
	var out, errb bytes.Buffer
	c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	code := c.main([]string{"test", "-engine", "sim", "-json", "-", "../../examples/freebsd-tso-trim"})
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, errb.String())
	}
	if errb.Len() != 0 {
		t.Errorf("stderr is not empty with -json -:\n%s", errb.String())
	}
	type line struct {
		Level    string          `json:"@level"`
		Message  string          `json:"@message"`
		Module   string          `json:"@module"`
		Time     string          `json:"@timestamp"`
		Type     string          `json:"type"`
		Version  string          `json:"tsolab_format_version"`
		Run      *jsonRun        `json:"run"`
		Result   json.RawMessage `json:"result"`
		Results  *result.Results `json:"results"`
		Verdict  *jsonVerdict    `json:"verdict"`
		Summary  *jsonSummary    `json:"summary"`
		Scenario string          `json:"scenario"`
	}
	var types []string
	var last line
	verdicts := 0
	for i, raw := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var l line
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, raw)
		}
		if l.Level == "" || l.Message == "" || l.Module != "tsolab.ui" || l.Time == "" || l.Type == "" {
			t.Errorf("line %d lacks a common field: %s", i+1, raw)
		}
		switch l.Type {
		case "version":
			if l.Version != view.JSONFormatVersion {
				t.Errorf("tsolab_format_version = %q, want %q", l.Version, view.JSONFormatVersion)
			}
		case "workload_start":
			if l.Run == nil || l.Run.Workload != "iperf" || l.Run.Repeat != 1 {
				t.Errorf("workload_start without its run: %s", raw)
			}
		case "workload_complete":
			var r result.WorkloadResult
			if err := json.Unmarshal(l.Result, &r); err != nil || r.Metrics[result.MetricThroughputBps] <= 0 {
				t.Errorf("workload_complete without a result (%v): %.200s", err, raw)
			}
		case "results":
			if l.Results == nil || len(l.Results.Runs) != 4 || l.Results.FormatVersion != 1 {
				t.Errorf("results message does not hold the 4 runs: %.200s", raw)
			}
		case "verdict":
			verdicts++
			if l.Verdict == nil || l.Verdict.Expect == "" || l.Verdict.Range == nil {
				t.Errorf("verdict without its expectation or range: %s", raw)
			}
		}
		if len(types) == 0 || types[len(types)-1] != l.Type {
			types = append(types, l.Type)
		}
		last = l
	}
	want := []string{
		"version",
		"scenario_start", "workload_start", "workload_complete",
		"scenario_start", "workload_start", "workload_complete",
		"scenario_start", "workload_start", "workload_complete",
		"scenario_start", "workload_start", "workload_complete",
		"results", "verdict", "test_summary",
	}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("message types in order, repeats folded (-want +got):\n%s", diff)
	}
	// freebsd-tso-trim judges 12 (5 expectations over its rows; the
	// single-MSS shares on both schedulers' rows since ULE's idle spin).
	if verdicts != 12 {
		t.Errorf("got %d verdict messages, want 12", verdicts)
	}
	if last.Summary == nil || last.Summary.Pass != 12 || last.Summary.ExitCode != 0 {
		t.Errorf("summary = %+v, want 12 passed and exit code 0", last.Summary)
	}
}

// TestWriteFileReadable: a results file, report or JUnit file is readable
// by all (0644), as a shell redirection would make it, not 0600: one made
// under sudo is opened by the user who ran it.
func TestWriteFileReadable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.html")
	if err := writeFile(path, func(w io.Writer) error { _, err := io.WriteString(w, "<html>"); return err }); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o644 {
		t.Errorf("writeFile made %s with mode %v, want 0644", path, got)
	}
}
