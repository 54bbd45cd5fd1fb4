package nic

import (
	"errors"
	"fmt"

	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/provider"
)

// diags collects the diagnostics of one call about one resource. Every
// summary starts with the resource address: "nic.tx0: set mtu 9000: ...".
type diags struct {
	addr  provider.Addr
	rng   hcl.Range            // the declaring block, when known (Validate)
	attrs map[string]hcl.Range // where its attributes were written (Validate)
	diags hcl.Diagnostics
}

func newDiags(a provider.Addr) *diags { return &diags{addr: a} }

// errorf adds "ADDR: WHAT: ERR"; what is a format for args.
func (d *diags) errorf(what string, err error, args ...any) {
	d.add(hcl.DiagError, fmt.Sprintf("%s: %v", fmt.Sprintf(what, args...), err), "")
}

// warnf adds a warning "ADDR: WHAT: ERR".
func (d *diags) warnf(what string, err error, args ...any) {
	d.add(hcl.DiagWarning, fmt.Sprintf("%s: %v", fmt.Sprintf(what, args...), err), "")
}

// goneSincePlan is the fix for an update of something (a NIC, a bridge,
// the namespace either lives in) that was deleted outside tsolab after
// the plan that updates it read it: a saved plan applied later, or a
// deletion while the apply ran.
const goneSincePlan = "It was deleted outside tsolab after the plan was made. Run tsolab apply again: it plans against what is there now and creates what is missing."

// updateFailed adds "ADDR: update: ERR", with goneSincePlan as the fix
// when ERR is a namespace that does not exist.
func (d *diags) updateFailed(err error) {
	if errors.Is(err, errNoNamespace) {
		d.fix("update: "+err.Error(), goneSincePlan)
		return
	}
	d.errorf("update", err)
}

// fix adds an error with a detail saying how to fix it.
func (d *diags) fix(summary, detail string) { d.add(hcl.DiagError, summary, detail) }

// fixAt is fix about one attribute: the diagnostic points at where it
// was written, when known, else at the block.
func (d *diags) fixAt(attr, summary, detail string) {
	d.add(hcl.DiagError, summary, detail)
	if r, ok := d.attrs[attr]; ok && r.Filename != "" {
		d.diags[len(d.diags)-1].Subject = &r
	}
}

func (d *diags) add(sev hcl.DiagnosticSeverity, summary, detail string) {
	diag := &hcl.Diagnostic{Severity: sev, Summary: d.addr.String() + ": " + summary, Detail: detail}
	if d.rng.Filename != "" {
		r := d.rng
		diag.Subject = &r
	}
	d.diags = append(d.diags, diag)
}
