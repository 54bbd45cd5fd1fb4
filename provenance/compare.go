package provenance

import (
	"fmt"
	"sort"
	"strings"
)

// Compare lists what differs between the provenance of a baseline and of
// this run, one human line each ("kernel: 6.1.0 -> 6.18.0"), in a fixed
// order: tool, lab, machine. Nil on either side gives one line saying the
// baseline has no provenance.
func Compare(base, now *Provenance) []string {
	if base == nil || now == nil {
		return []string{"the baseline records no provenance (written by an older tsolab): what changed underneath is unknown"}
	}
	var d diffs
	d.add("tsolab", toolString(base.Tool), toolString(now.Tool))
	d.add("lab files", short(base.Lab.Hash), short(now.Lab.Hash))
	d.add("lab commit", gitString(base.Lab.Git), gitString(now.Lab.Git))
	d.add("variables", mapString(base.Lab.Variables), mapString(now.Lab.Variables))
	d.add("kernel", base.Machine.Kernel, now.Machine.Kernel)
	d.add("cpu", cpuString(base.Machine), cpuString(now.Machine))
	return d
}

// CompareRun lists what differs between what a baseline's run and this
// run ran on: NICs (driver, firmware, features), sysctls, the model. A
// nil side (a result written before runs recorded it) compares as empty.
func CompareRun(base, now *Run) []string {
	if base == nil {
		base = &Run{}
	}
	if now == nil {
		now = &Run{}
	}
	var d diffs
	bn, nn := nicsByName(base.NICs), nicsByName(now.NICs)
	for _, name := range unionKeys(bn, nn) {
		b, n := bn[name], nn[name]
		d.add("nic."+name+" driver", driverString(b), driverString(n))
		d.add("nic."+name+" firmware", field(b, func(x NIC) string { return x.Firmware }), field(n, func(x NIC) string { return x.Firmware }))
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

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

func toolString(t Tool) string {
	s := t.Version
	if t.Revision != "" {
		s += " " + short(t.Revision)
	}
	if t.Modified {
		s += " (modified)"
	}
	return s
}

func gitString(g *Git) string {
	if g == nil {
		return ""
	}
	s := short(g.Commit)
	if g.Dirty {
		s += " (dirty)"
	}
	return s
}

func cpuString(m Machine) string {
	return fmt.Sprintf("%d × %s", m.CPUs, m.CPUModel)
}

func mapString(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for _, k := range unionKeys(m, nil) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

func nicsByName(nics []NIC) map[string]*NIC {
	out := map[string]*NIC{}
	for i := range nics {
		out[nics[i].Name] = &nics[i]
	}
	return out
}

func field(n *NIC, f func(NIC) string) string {
	if n == nil {
		return ""
	}
	return f(*n)
}

func driverString(n *NIC) string {
	if n == nil {
		return ""
	}
	return strings.TrimSpace(n.Driver + " " + n.DriverVersion)
}

// featureChange names the features turned on (+) and off (-) from b to
// n; "" when both list the same, or either NIC is missing (the driver
// line says so).
func featureChange(b, n *NIC) string {
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

func modelString(m *Model) string {
	if m == nil {
		return ""
	}
	return strings.Join(m.Stacks, ",") + " " + short(m.Hash)
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
