package hcl

import (
	"strings"
	"testing"
)

// TestWrongTypeShowsTheValue: a value of the wrong type is quoted back
// to the author as written (a list as a list, an object as an object),
// next to what was wanted.
func TestWrongTypeShowsTheValue(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{`["10.0.0.1/24"]`, `got ["10.0.0.1/24"]`},
		{`sort(["10.0.0.1/24"])`, `got ["10.0.0.1/24"]`},
		{`{}`, `got {}`},
		{`{ ip = "10.0.0.1/24" }`, `got { ip = "10.0.0.1/24" }`},
	} {
		src := header + "nic \"n0\" {\n  host    = host.a\n  address = " + tc.value + "\n}\n"
		_, diags := loadString(src, Options{})
		if !diags.HasErrors() {
			t.Errorf("address = %s: loaded without an error", tc.value)
			continue
		}
		if out := render(diags, src); !strings.Contains(out, tc.want) {
			t.Errorf("address = %s: the diagnostic lacks %q:\n%s", tc.value, tc.want, out)
		}
	}
}

// TestInvalidNameSaysHowItIsReferenced: a name that is no identifier is
// refused with the reference the author would have had to write.
func TestInvalidNameSaysHowItIsReferenced(t *testing.T) {
	for _, tc := range []struct{ block, want string }{
		{`workload "a.b" {}`, `cannot be referenced as workload.a.b`},
		{`variable "a.b" {}`, `cannot be referenced as var.a.b`},
	} {
		src := header + tc.block + "\n"
		_, diags := loadString(src, Options{})
		if out := render(diags, src); !strings.Contains(out, tc.want) {
			t.Errorf("%s: the diagnostic lacks %q:\n%s", tc.block, tc.want, out)
		}
	}
}

// TestDiagnosticValuesAreTheSubjects: under the snippet, a diagnostic
// shows the values that the marked part of the expression read, not those
// read elsewhere in the attribute.
func TestDiagnosticValuesAreTheSubjects(t *testing.T) {
	vars := "variable \"on\" { default = true }\nvariable \"m\" { default = 100000 }\n"
	for _, tc := range []struct{ nic, want, not string }{
		{"  mtu = var.m", "var.m is 100000", ""},
		{"  offload = { tso = var.on, tos = true }", "Unknown offload", "var.on is"},
	} {
		src := header + vars + "nic \"n0\" {\n  host = host.a\n" + tc.nic + "\n}\n"
		_, diags := loadString(src, Options{})
		out := render(diags, src)
		if !strings.Contains(out, tc.want) || tc.not != "" && strings.Contains(out, tc.not) {
			t.Errorf("%s: want %q and no %q in:\n%s", tc.nic, tc.want, tc.not, out)
		}
	}
}
