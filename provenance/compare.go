package provenance

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tsolab/tsolab/result"
)

// Compare lists what differs between the provenance of a baseline and of
// this run, one human line each ("kernel: 6.1.0 -> 6.18.0"), in a fixed
// order: tool, lab, machine. Nil on either side gives one line saying the
// baseline has no provenance.
func Compare(base, now *result.Provenance) []string {
	if base == nil || now == nil {
		return []string{"the baseline records no provenance (written by an older tsolab): what changed underneath is unknown"}
	}
	var d diffs
	d.add("tsolab", base.Tool.String(), now.Tool.String())
	d.add("lab files", result.ShortHash(base.Lab.Hash), result.ShortHash(now.Lab.Hash))
	d.add("lab commit", base.Lab.Git.String(), now.Lab.Git.String())
	d.add("variables", base.Lab.VariablesString(), now.Lab.VariablesString())
	d.add("kernel", base.Machine.Kernel, now.Machine.Kernel)
	d.add("cpu", base.Machine.CPU(), now.Machine.CPU())
	return d
}

// CompareRun lists what differs between what a baseline's run and this
// run ran on: NICs (driver, firmware, features), sysctls, the model. A
// nil side (a result written before runs recorded it) compares as empty.
func CompareRun(base, now *result.Run) []string {
	if base == nil {
		base = &result.Run{}
	}
	if now == nil {
		now = &result.Run{}
	}
	var d diffs
	bn, nn := nicsByName(base.NICs), nicsByName(now.NICs)
	for _, name := range unionKeys(bn, nn) {
		b, n := bn[name], nn[name]
		d.add("nic."+name+" driver", driverString(b), driverString(n))
		d.add("nic."+name+" firmware", field(b, func(x result.NIC) string { return x.Firmware }), field(n, func(x result.NIC) string { return x.Firmware }))
		if f := featureChange(b, n); f != "" {
			d = append(d, "nic."+name+" features: "+f)
		}
	}
	for _, host := range unionKeys(base.Sysctls, now.Sysctls) {
		b, n := base.Sysctls[host], now.Sysctls[host]
		for _, k := range unionKeys(b, n) {
			d.add(host+" "+k, b[k], n[k])
		}
	}
	d.add("model", modelString(base.Model), modelString(now.Model))
	return d
}

type diffs []string

func (d *diffs) add(what, before, after string) {
	if before == after {
		return
	}
	*d = append(*d, fmt.Sprintf("%s: %s -> %s", what, orNone(before), orNone(after)))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func nicsByName(nics []result.NIC) map[string]*result.NIC {
	out := map[string]*result.NIC{}
	for i := range nics {
		out[nics[i].Name] = &nics[i]
	}
	return out
}

func field(n *result.NIC, f func(result.NIC) string) string {
	if n == nil {
		return ""
	}
	return f(*n)
}

func driverString(n *result.NIC) string {
	if n == nil {
		return ""
	}
	return strings.TrimSpace(n.Driver + " " + n.DriverVersion)
}

// featureChange names the features turned on (+) and off (-) from b to
// n; "" when both list the same, or either NIC is missing (the driver
// line says so).
func featureChange(b, n *result.NIC) string {
	if b == nil || n == nil {
		return ""
	}
	had := map[string]bool{}
	for _, f := range b.Features {
		had[f] = true
	}
	var parts []string
	for _, f := range n.Features {
		if !had[f] {
			parts = append(parts, "+"+f)
		}
		delete(had, f)
	}
	for _, f := range unionKeys(had, nil) {
		parts = append(parts, "-"+f)
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func modelString(m *result.Model) string {
	if m == nil {
		return ""
	}
	return strings.Join(m.Stacks, ",") + " " + result.ShortHash(m.Hash)
}

func unionKeys[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
