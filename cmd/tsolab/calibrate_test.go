package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHeldOutFiguresDoNotMoveTheModel: in a copy of examples/neterion-2005,
// a predicted figure changed to nonsense leaves the calibration file
// byte-identical to the one committed (so the committed file is also what
// the fit gives) and every model output unchanged, while a fitted figure
// changed moves the fit.
func TestHeldOutFiguresDoNotMoveTheModel(t *testing.T) {
	if testing.Short() {
		t.Skip("fits examples/neterion-2005 three times with restarts and valley scans (about 440 model runs each; 18 min at load 12-29): not with -short")
	}
	src := "../../examples/neterion-2005"
	files := []string{"opteron-2005.calibration.json", "opteron-2005-rx.calibration.json"}
	committed := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		committed[f] = b
	}
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
		if code := c.main(args); code != exitOK {
			t.Fatalf("tsolab %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
		}
		return out.String()
	}
	runs := func(dir string) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "r.json")
		run("test", "-json", path, dir)
		var r struct {
			Runs json.RawMessage `json:"runs"`
		}
		b, _ := os.ReadFile(path)
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return string(r.Runs)
	}
	edited := func(old, new string) string {
		t.Helper()
		dir := t.TempDir()
		lab, err := os.ReadFile(filepath.Join(src, "lab.tsolab.hcl"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(lab, []byte(old)) {
			t.Fatalf("the example no longer holds %q", old)
		}
		lab = bytes.Replace(lab, []byte(old), []byte(new), 1)
		if err := os.WriteFile(filepath.Join(dir, "lab.tsolab.hcl"), lab, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	want := runs(src)

	// on_9000 is predicted: 6.1 Gb/s becomes 61 Gb/s.
	held := edited("values   = { throughput_bps = 6.1e9, cpu_tx_pct = 140 }", "values   = { throughput_bps = 61e9, cpu_tx_pct = 14 }")
	out := run("calibrate", held)
	// Twice: a second fit gives the same files (it reads none of them).
	run("calibrate", held)
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(held, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, committed[f]) {
			t.Errorf("%s: a changed predicted figure changed the calibration (or the committed file is not what the fit gives: run tsolab calibrate examples/neterion-2005):\n%s\ngot:\n%s\nwant:\n%s", f, out, got, committed[f])
		}
	}
	if r := runs(held); r != want {
		t.Errorf("a changed predicted figure changed the model's outputs")
	}

	// off_1500 is fitted: its throughput halved moves the fit.
	fitted := edited("values   = { throughput_bps = 2.5e9, cpu_tx_pct = 220 }", "values   = { throughput_bps = 1.25e9, cpu_tx_pct = 220 }")
	run("calibrate", fitted)
	if moved, _ := os.ReadFile(filepath.Join(fitted, files[0])); bytes.Equal(moved, committed[files[0]]) {
		t.Errorf("a changed fitted figure left the calibration as it was: the fit does not read its figures")
	}
}
