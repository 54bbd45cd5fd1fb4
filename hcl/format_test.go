package hcl

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const messy = `lab "f" {
description="x"
    engine =   "kernel"
}
nic "tx0" {
  host = host.tx
  mtu=var.mtu   # the MTU
  offload = {
  tso=true
      sg = true
  }
}
`

const canonical = `lab "f" {
  description = "x"
  engine      = "kernel"
}
nic "tx0" {
  host = host.tx
  mtu  = var.mtu # the MTU
  offload = {
    tso = true
    sg  = true
  }
}
`

func TestFormat(t *testing.T) {
	if diff := cmp.Diff(canonical, string(Format([]byte(messy)))); diff != "" {
		t.Errorf("Format (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(canonical, string(Format([]byte(canonical)))); diff != "" {
		t.Errorf("Format of canonical source changed it (-want +got):\n%s", diff)
	}
}

// TestFormatKeepsMeaning formats every test lab and checks that the
// result is stable and loads to the same lab.
func TestFormatKeepsMeaning(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*", "*"+FileSuffix))
	if len(files) == 0 {
		t.Fatal("no test labs in testdata")
	}
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		out := Format(src)
		if again := Format(out); string(again) != string(out) {
			t.Errorf("%s: Format is not stable:\n%s", name, cmp.Diff(string(out), string(again)))
		}
		before, d1 := load("x", []sourceFile{{name: "x.tsolab.hcl", src: src}}, Options{})
		after, d2 := load("x", []sourceFile{{name: "x.tsolab.hcl", src: out}}, Options{})
		if len(d1) != len(d2) {
			t.Errorf("%s: %d diagnostics before formatting, %d after", name, len(d1), len(d2))
		}
		if diff := cmp.Diff(before.Scenarios, after.Scenarios, cmpLab...); diff != "" {
			t.Errorf("%s: formatting changed the lab (-before +after):\n%s", name, diff)
		}
	}
}

func TestFormatDir(t *testing.T) {
	dir := t.TempDir()
	messyFile := filepath.Join(dir, "a.tsolab.hcl")
	cleanFile := filepath.Join(dir, "b.tsolab.hcl")
	other := filepath.Join(dir, "notes.hcl")
	for name, src := range map[string]string{messyFile: messy, cleanFile: canonical, other: messy} {
		if err := os.WriteFile(name, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	changed, diags := FormatDir(dir, false)
	if len(diags) > 0 {
		t.Fatalf("FormatDir check: %v", diags)
	}
	if diff := cmp.Diff([]string{messyFile}, changed); diff != "" {
		t.Errorf("check: changed (-want +got):\n%s", diff)
	}
	if b, _ := os.ReadFile(messyFile); string(b) != messy {
		t.Error("check rewrote the file")
	}

	changed, diags = FormatDir(dir, true)
	if len(diags) > 0 || len(changed) != 1 {
		t.Fatalf("FormatDir write: changed %v, diags %v", changed, diags)
	}
	if b, _ := os.ReadFile(messyFile); string(b) != canonical {
		t.Errorf("written file (-want +got):\n%s", cmp.Diff(canonical, string(b)))
	}
	if st, _ := os.Stat(messyFile); st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600 kept", st.Mode().Perm())
	}
	if b, _ := os.ReadFile(other); string(b) != messy {
		t.Error("FormatDir touched a file that is not *.tsolab.hcl")
	}
	if changed, _ := FormatDir(dir, true); len(changed) != 0 {
		t.Errorf("second run changed %v, want nothing", changed)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("dir holds %d entries after fmt, want 3 (no temporary files left)", len(entries))
	}
}

func TestFormatDirSyntaxError(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "bad.tsolab.hcl")
	src := "host \"a\" {\n  kind = \n"
	if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, diags := FormatDir(dir, true)
	if !diags.HasErrors() || len(changed) != 0 {
		t.Errorf("FormatDir of a broken file: changed %v, diags %v; want an error and nothing changed", changed, diags)
	}
	if b, _ := os.ReadFile(name); string(b) != src {
		t.Error("FormatDir rewrote a file that does not parse")
	}
}
