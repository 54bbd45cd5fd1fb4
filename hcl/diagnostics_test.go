package hcl

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	hclv2 "github.com/hashicorp/hcl/v2"
)

func rng(file string, l1, c1, b1, l2, c2, b2 int) *hclv2.Range {
	return &hclv2.Range{Filename: file, Start: hclv2.Pos{Line: l1, Column: c1, Byte: b1}, End: hclv2.Pos{Line: l2, Column: c2, Byte: b2}}
}

func TestWriteDiagnostics(t *testing.T) {
	src := "lab \"t\" {}\nnic \"tx0\" {\n  mtu = 20\n\tx = 1\n}\n"
	sources := map[string][]byte{"lab.tsolab.hcl": []byte(src)}
	tests := []struct {
		name string
		diag *hclv2.Diagnostic
		want string
	}{
		{
			name: "one line",
			diag: &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid MTU", Detail: "Use 1500.",
				Subject: rng("lab.tsolab.hcl", 3, 9, 31, 3, 11, 33)},
			want: `Error: Invalid MTU

  on lab.tsolab.hcl line 3, in nic "tx0":
  3:   mtu = 20
             ^^

Use 1500.

`,
		},
		{
			name: "tab before the subject",
			diag: &hclv2.Diagnostic{Severity: hclv2.DiagWarning, Summary: "W", Detail: "D.",
				Subject: rng("lab.tsolab.hcl", 4, 2, 35, 4, 3, 36)},
			want: "Warning: W\n\n  on lab.tsolab.hcl line 4, in nic \"tx0\":\n  4: \tx = 1\n     \t^\n\nD.\n\n",
		},
		{
			name: "several lines",
			diag: &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Block", Detail: "D.",
				Subject: rng("lab.tsolab.hcl", 2, 1, 11, 3, 11, 33)},
			want: `Error: Block

  on lab.tsolab.hcl line 2, in nic "tx0":
  2: nic "tx0" {
     ^^^^^^^^^^^
  3:   mtu = 20
       ^^^^^^^^

D.

`,
		},
		{
			name: "empty subject at the start",
			diag: &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Missing lab block", Detail: "Add one.",
				Subject: rng("lab.tsolab.hcl", 1, 1, 0, 1, 1, 0)},
			want: `Error: Missing lab block

  on lab.tsolab.hcl line 1, in lab "t":
  1: lab "t" {}
     ^

Add one.

`,
		},
		{
			name: "file without source",
			diag: &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "S", Detail: "D.",
				Subject: rng("other.hcl", 7, 1, 0, 7, 2, 1)},
			want: "Error: S\n\n  on other.hcl line 7:\n\nD.\n\n",
		},
		{
			name: "no subject",
			diag: &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Value for undeclared variable", Detail: "Fix the name."},
			want: "Error: Value for undeclared variable\n\nFix the name.\n\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteDiagnostics(&b, sources, hclv2.Diagnostics{tt.diag}, false); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriteDiagnosticsFromLoad renders a real diagnostic with the values
// its expression read.
func TestWriteDiagnosticsFromLoad(t *testing.T) {
	src := `lab "t" {}
variable "mtu" { default = 20 }
host "a" {}
nic "a0" {
  host = host.a
  mtu  = var.mtu
}
`
	lab, diags := loadString(src, Options{})
	var b strings.Builder
	WriteDiagnostics(&b, lab.Sources, diags, false)
	want := `Error: Invalid MTU

  on lab.tsolab.hcl line 6, in nic "a0":
  6:   mtu  = var.mtu
              ^^^^^^^
    │ var.mtu is 20

The MTU must be between 68 (the smallest IPv4 allows) and 65535; got 20. Ethernet uses 1500, jumbo frames 9000.

`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}

	b.Reset()
	WriteDiagnostics(&b, lab.Sources, diags, true)
	if got := b.String(); !strings.Contains(got, "\x1b[1;31m") && !strings.Contains(got, ansiBold+ansiRed) {
		t.Errorf("color output has no red error marker:\n%q", got)
	}
}
