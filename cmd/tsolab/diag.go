package main

import (
	"errors"
	"fmt"
	"strings"

	hclv2 "github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/view"
)

// A command's failures are diagnostics: "Error: SUMMARY", a blank line
// and the detail on stderr, and with -json also a "diagnostic" message on
// stdout (docs/json-format.md), whatever failed: a flag, the lab, the
// lock, the state. A -json caller reads stdout alone and still learns
// why the command exited 1.

// useJSON makes every message of the command, its failures included, a
// JSON line on stdout. Call it once, as soon as the flags are parsed.
func (c *cli) useJSON() {
	c.json = view.NewJSON(c.stdout, view.JSONOptions{Version: version})
}

// fail reports err as an error diagnostic.
func (c *cli) fail(err error) { c.diagnose(errDiag(err)) }

// errorf reports an error diagnostic; a blank line in the message
// separates the summary from the detail.
func (c *cli) errorf(format string, args ...any) {
	summary, detail, _ := strings.Cut(fmt.Sprintf(format, args...), "\n\n")
	c.diagnose(&hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: summary, Detail: detail})
}

// diagnose writes one diagnostic that has no place in a lab file.
func (c *cli) diagnose(d *hclv2.Diagnostic) {
	if c.json != nil {
		c.json.Diagnostics(hclv2.Diagnostics{d})
	}
	prefix := "Error: "
	if d.Severity == hclv2.DiagWarning {
		prefix = "Warning: "
	}
	if d.Detail == "" {
		fmt.Fprintln(c.stderr, prefix+d.Summary)
		return
	}
	fmt.Fprintf(c.stderr, "%s%s\n\n%s\n", prefix, d.Summary, d.Detail)
}

// errDiag turns err into a diagnostic; errors that carry their own
// summary and fix keep them apart.
func errDiag(err error) *hclv2.Diagnostic {
	var lock *planner.LockError
	if errors.As(err, &lock) {
		return &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Error acquiring the state lock", Detail: lock.Error()}
	}
	var state *planner.StateError
	if errors.As(err, &state) {
		return &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "The state cannot be read", Detail: state.Error()}
	}
	return &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: err.Error()}
}
