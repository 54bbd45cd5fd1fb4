package hcl

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

// varLab declares variables of several types and uses mtu.
const varLab = `lab "v" {}
variable "mtu" {
  type    = number
  default = 1500
}
variable "stack" {
  type    = string
  default = "linux-6"
}
variable "untyped" {
  default = 7
}
variable "sizes" {
  type    = list(number)
  default = [1]
}
host "a" {
  stack = var.stack
}
nic "a0" {
  host = host.a
  mtu  = var.mtu
}
`

func writeVarFile(t *testing.T, src string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "vars.hcl")
	if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestVariablePrecedence(t *testing.T) {
	file9000 := writeVarFile(t, "mtu = 9000\n")
	file4000 := writeVarFile(t, "mtu = 4000\n")
	tests := []struct {
		name string
		opts Options
		want int
	}{
		{"default", Options{}, 1500},
		{"env over default", Options{Env: []string{"PATH=/bin", "TSOLAB_VAR_mtu=2000"}}, 2000},
		{"last env entry wins", Options{Env: []string{"TSOLAB_VAR_mtu=2000", "TSOLAB_VAR_mtu=3000"}}, 3000},
		{"var file over env", Options{Env: []string{"TSOLAB_VAR_mtu=2000"}, VarFiles: []string{file9000}}, 9000},
		{"later var file over earlier", Options{VarFiles: []string{file9000, file4000}}, 4000},
		{"-var over var file", Options{VarFiles: []string{file9000}, Vars: map[string]string{"mtu": "1280"}, Env: []string{"TSOLAB_VAR_mtu=2000"}}, 1280},
		{"-var over default", Options{Vars: map[string]string{"mtu": "576"}}, 576},
		{"-var may be an expression", Options{Vars: map[string]string{"mtu": "1500 * 6"}}, 9000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lab, diags := loadString(varLab, tt.opts)
			if len(diags) > 0 {
				t.Fatalf("diagnostics:\n%s", render(diags, varLab))
			}
			for _, sc := range lab.Scenarios {
				if got := sc.NIC("a0").MTU; got != tt.want {
					t.Errorf("scenario %s: mtu = %d, want %d", sc.Name, got, tt.want)
				}
			}
		})
	}
}

func TestVariableTypes(t *testing.T) {
	lab, diags := loadString(varLab, Options{Vars: map[string]string{
		"stack":   "freebsd-10", // a string type: taken as written, no quotes needed
		"untyped": "9",          // untyped with a number default: read as HCL
		"sizes":   "[1, 2, 3]",
	}})
	if len(diags) > 0 {
		t.Fatalf("diagnostics:\n%s", render(diags, varLab))
	}
	got := map[string]cty.Value{}
	for _, v := range lab.Variables {
		got[v.Name] = v.Value
	}
	want := map[string]cty.Value{
		"mtu":     cty.NumberIntVal(1500),
		"stack":   cty.StringVal("freebsd-10"),
		"untyped": cty.NumberIntVal(9),
		"sizes":   cty.ListVal([]cty.Value{cty.NumberIntVal(1), cty.NumberIntVal(2), cty.NumberIntVal(3)}),
	}
	if diff := cmp.Diff(want, got, cmpLab...); diff != "" {
		t.Errorf("variables (-want +got):\n%s", diff)
	}
	if h := lab.Scenarios[0].Host("a"); h.Stack != "freebsd-10" {
		t.Errorf("host a stack = %q, want freebsd-10", h.Stack)
	}
}

func TestVariableMistakes(t *testing.T) {
	typo := writeVarFile(t, "mut = 9000\n")
	bad := writeVarFile(t, "mtu = \"jumbo\"\n")
	block := writeVarFile(t, "nic \"x\" {}\n")
	tests := []struct {
		name string
		opts Options
		want []diag
	}{
		{"-var for an undeclared variable", Options{Vars: map[string]string{"mut": "9000"}},
			[]diag{{Severity: "Error", Summary: "Value for undeclared variable"}}},
		{"-var of the wrong type", Options{Vars: map[string]string{"mtu": "jumbo"}},
			[]diag{{Severity: "Error", Summary: "Invalid value for variable", File: "<value for var.mtu from -var>", Line: 1, Column: 1}}},
		{"-var of the wrong type, quoted", Options{Vars: map[string]string{"mtu": `"jumbo"`}},
			[]diag{{Severity: "Error", Summary: "Invalid value for variable", File: "<value for var.mtu from -var>", Line: 1, Column: 1}}},
		{"env of the wrong type", Options{Env: []string{`TSOLAB_VAR_mtu="x"`}},
			[]diag{{Severity: "Error", Summary: "Invalid value for variable", File: "<value for var.mtu from TSOLAB_VAR_mtu>", Line: 1, Column: 1}}},
		{"env for an undeclared variable is ignored", Options{Env: []string{"TSOLAB_VAR_other=1"}}, nil},
		{"var file with a typo", Options{VarFiles: []string{typo}},
			[]diag{{Severity: "Warning", Summary: "Value for undeclared variable", File: typo, Line: 1, Column: 1}}},
		{"var file of the wrong type", Options{VarFiles: []string{bad}},
			[]diag{{Severity: "Error", Summary: "Invalid value for variable", File: bad, Line: 1, Column: 7}}},
		{"var file with a block", Options{VarFiles: []string{block}},
			[]diag{{Severity: "Error", Summary: "Block in a variable file", File: block, Line: 1, Column: 1}}},
		{"missing var file", Options{VarFiles: []string{filepath.Join(t.TempDir(), "none.hcl")}},
			[]diag{{Severity: "Error", Summary: "Cannot read variable file"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lab, diags := loadString(varLab, tt.opts)
			if diff := cmp.Diff(tt.want, diagsOf(diags)); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
			// Every subject's file is in Sources, for the snippet.
			for _, d := range diags {
				if d.Subject != nil && lab.Sources[d.Subject.Filename] == nil {
					t.Errorf("%q: Sources lacks %s", d.Summary, d.Subject.Filename)
				}
			}
		})
	}
}
