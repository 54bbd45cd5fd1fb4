package result

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Provenance is where one set of results came from. Package provenance
// fills it in (and compares two); the engines fill in each run's Run.
type Provenance struct {
	Tool    Tool    `json:"tool"`
	Lab     Lab     `json:"lab"`
	Machine Machine `json:"machine"`
}

// Run is what one run of a scenario's workload ran on, beyond the
// machine: it changes between scenarios (offloads, MTU), so every run
// records its own.
type Run struct {
	// NICs are the scenario's NICs as the kernel engine read them before
	// the run (kernel engine only), sorted by name.
	NICs []NIC `json:"nics,omitempty"`
	// Sysctls holds, per host, the TCP sysctls that shape a result, as
	// read inside the host's namespace (kernel engine only).
	Sysctls map[string]map[string]string `json:"sysctls,omitempty"`
	// TCPMetricsDeleted holds, per host, the lab's addresses whose TCP
	// metrics (RTT, reordering, cwnd, ssthresh: net/ipv4/tcp_metrics.c)
	// an earlier connection had left cached in the host's namespace, and
	// the kernel engine deleted before the run, so that every run starts
	// from the kernel's defaults (kernel engine only).
	TCPMetricsDeleted map[string][]string `json:"tcp_metrics_deleted,omitempty"`
	// Model is what the model ran with (sim engine only).
	Model *Model `json:"model,omitempty"`
	// Load is how busy each machine the run ran on was around it
	// (kernel engine only), one entry per kernel: a run's CPU figures
	// are only comparable with another's at like load.
	Load []Load `json:"load,omitempty"`
}

// Load is how busy one machine was around a run, from the workers'
// start to the last one's end.
type Load struct {
	// Machine is the machine's name in the lab ("" for the one tsolab
	// ran on).
	Machine string `json:"machine,omitempty"`
	// LoadStart and LoadEnd are the 1-minute load average (/proc/loadavg).
	LoadStart float64 `json:"load_start"`
	LoadEnd   float64 `json:"load_end"`
	// CPUPressureStart and CPUPressureEnd are the share of the last 10 s
	// in which some runnable task waited for a CPU (/proc/pressure/cpu,
	// "some avg10"), in %; absent on a kernel without pressure stall
	// information.
	CPUPressureStart *float64 `json:"cpu_pressure_start,omitempty"`
	CPUPressureEnd   *float64 `json:"cpu_pressure_end,omitempty"`
	// OtherCPUPct is the CPU time every other process used over the run
	// (/proc/PID/stat utime + stime + cutime + cstime, 10 ms units; the
	// softirq work that ran in their threads included), in % of one core.
	OtherCPUPct float64 `json:"other_cpu_pct"`
}

// Tool identifies the tsolab binary.
type Tool struct {
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"` // VCS revision the binary was built from
	Modified  bool   `json:"modified,omitempty"` // built from a work tree with uncommitted changes
	GoVersion string `json:"go_version"`
}

// Lab identifies the lab's definition.
type Lab struct {
	Name string `json:"name"`
	// Hash is the SHA-256 of the lab's files (name and content, sorted by
	// name): two runs with the same hash ran the same definition.
	Hash  string `json:"hash"`
	Files []File `json:"files"`
	// Git is the lab's commit when its directory is in a git work tree.
	Git *Git `json:"git,omitempty"`
	// Variables are the lab's variables with their final values.
	Variables map[string]string `json:"variables,omitempty"`
}

// File is one file with its SHA-256.
type File struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
}

// Git is the commit of the work tree a lab lives in.
type Git struct {
	Commit string `json:"commit"`
	// Dirty says the lab directory's files differ from the commit
	// (modified, added or untracked files under it).
	Dirty bool `json:"dirty,omitempty"`
}

// Machine is the machine tsolab ran on.
type Machine struct {
	Kernel   string `json:"kernel"` // uname release
	Arch     string `json:"arch"`
	CPUModel string `json:"cpu_model,omitempty"`
	CPUs     int    `json:"cpus"`
}

// NIC is one NIC of the lab as the kernel engine found it.
type NIC struct {
	Name          string `json:"name"` // the lab's NIC (nic.NAME without "nic.")
	Host          string `json:"host,omitempty"`
	Interface     string `json:"interface"`
	Driver        string `json:"driver,omitempty"`
	DriverVersion string `json:"driver_version,omitempty"`
	Firmware      string `json:"firmware,omitempty"`
	Bus           string `json:"bus,omitempty"`
	// Features lists the kernel features in force (ethtool -k, "on"
	// only), sorted.
	Features []string `json:"features"`
}

// String is the load in one human line: "load 9.80 -> 9.70, CPU
// pressure 92.5% -> 95.4%, other processes 150.0% of one core".
func (l Load) String() string {
	s := fmt.Sprintf("load %.2f -> %.2f", l.LoadStart, l.LoadEnd)
	if l.CPUPressureStart != nil && l.CPUPressureEnd != nil {
		s += fmt.Sprintf(", CPU pressure %.1f%% -> %.1f%%", *l.CPUPressureStart, *l.CPUPressureEnd)
	}
	return s + fmt.Sprintf(", other processes %.1f%% of one core", l.OtherCPUPct)
}

// Model is what the TSO model ran with.
type Model struct {
	// Stacks and CPUs name the stack and CPU profiles the lab's hosts
	// used, sorted.
	Stacks []string `json:"stacks"`
	CPUs   []string `json:"cpus,omitempty"`
	// Hash is the SHA-256 of the model's definitions: the profiles'
	// parameters as the engine holds them, so two runs with the same
	// hash ran the same model.
	Hash string `json:"hash"`
	// Files are calibration or profile files the lab loaded, with hashes.
	Files []File `json:"files,omitempty"`
	// Seed is the seed of the model's random source (sim.Options.Seed,
	// tsolab -seed) when the run drew from it (a host's CPU profile has a
	// scheduler); absent when nothing in the run was random.
	Seed *uint64 `json:"seed,omitempty"`
	// Schedulers are the scheduler models the lab's hosts ran (a host's
	// `scheduler`), each with the distribution its wake-up latencies
	// were drawn from, its context switch and its source, sorted; absent
	// when no host ran one.
	Schedulers []string `json:"schedulers,omitempty"`
}

// Property is one name=value pair of a flat view of a provenance (JUnit
// properties, the text summary).
type Property struct{ Name, Value string }

// Properties flattens the tool, lab and machine into named values, in a
// fixed order.
func (p *Provenance) Properties() []Property {
	if p == nil {
		return nil
	}
	out := []Property{
		{"tsolab.version", p.Tool.Version},
		{"tsolab.revision", p.Tool.Revision},
		{"tsolab.modified", fmt.Sprint(p.Tool.Modified)},
		{"go.version", p.Tool.GoVersion},
		{"lab.name", p.Lab.Name},
		{"lab.hash", p.Lab.Hash},
	}
	if p.Lab.Git != nil {
		out = append(out, Property{"lab.git.commit", p.Lab.Git.Commit}, Property{"lab.git.dirty", fmt.Sprint(p.Lab.Git.Dirty)})
	}
	for _, k := range slices.Sorted(maps.Keys(p.Lab.Variables)) {
		out = append(out, Property{"var." + k, p.Lab.Variables[k]})
	}
	return append(out,
		Property{"kernel", p.Machine.Kernel},
		Property{"arch", p.Machine.Arch},
		Property{"cpu.model", p.Machine.CPUModel},
		Property{"cpu.count", fmt.Sprint(p.Machine.CPUs)},
	)
}

// Properties flattens what one run ran on, each name prefixed with
// prefix: NICs' driver, version, firmware, bus and features; hosts'
// sysctls; each machine's load; the model's profiles and hash, and its
// seed when it drew.
func (r *Run) Properties(prefix string) []Property {
	if r == nil {
		return nil
	}
	var out []Property
	for _, n := range r.NICs {
		k := prefix + "nic." + n.Name + "."
		out = append(out,
			Property{k + "driver", n.Driver}, Property{k + "driver_version", n.DriverVersion},
			Property{k + "firmware", n.Firmware}, Property{k + "bus", n.Bus},
			Property{k + "features", strings.Join(n.Features, ",")})
	}
	for _, h := range slices.Sorted(maps.Keys(r.Sysctls)) {
		for _, s := range slices.Sorted(maps.Keys(r.Sysctls[h])) {
			out = append(out, Property{prefix + "host." + h + "." + s, r.Sysctls[h][s]})
		}
	}
	for _, h := range slices.Sorted(maps.Keys(r.TCPMetricsDeleted)) {
		out = append(out, Property{prefix + "host." + h + ".tcp_metrics_deleted", strings.Join(r.TCPMetricsDeleted[h], ",")})
	}
	for _, l := range r.Load {
		m := l.Machine
		if m == "" {
			m = "local"
		}
		out = append(out, Property{prefix + "machine." + m + ".load", l.String()})
	}
	if r.Model != nil {
		out = append(out,
			Property{prefix + "model.stacks", strings.Join(r.Model.Stacks, ",")},
			Property{prefix + "model.cpus", strings.Join(r.Model.CPUs, ",")},
			Property{prefix + "model.hash", r.Model.Hash})
		if r.Model.Seed != nil {
			out = append(out, Property{prefix + "model.seed", strconv.FormatUint(*r.Model.Seed, 10)})
		}
		if len(r.Model.Schedulers) > 0 {
			out = append(out, Property{prefix + "model.schedulers", strings.Join(r.Model.Schedulers, "; ")})
		}
		for _, f := range r.Model.Files {
			out = append(out, Property{prefix + "model.file." + f.Name, f.SHA256})
		}
	}
	return out
}

// Summary is the provenance in two human lines, for the top of a text
// summary or a report.
func (p *Provenance) Summary() []string {
	if p == nil {
		return nil
	}
	tool := "tsolab " + p.Tool.String()
	if p.Tool.Revision == "" {
		tool += " (revision unknown: built without VCS stamping)"
	}
	lab := "lab " + p.Lab.Name + " files " + ShortHash(p.Lab.Hash)
	if p.Lab.Git != nil {
		lab += ", git " + p.Lab.Git.String()
	}
	if len(p.Lab.Variables) > 0 {
		lab += ", variables " + p.Lab.VariablesString()
	}
	machine := fmt.Sprintf("Linux %s %s, %s", p.Machine.Kernel, p.Machine.Arch, p.Machine.CPU())
	return []string{tool + " · " + lab, "machine: " + machine}
}

// String is the tool in one phrase: version, short revision and
// "(modified)" when built from a changed work tree.
func (t Tool) String() string {
	s := t.Version
	if t.Revision != "" {
		s += " " + ShortHash(t.Revision)
	}
	if t.Modified {
		s += " (modified)"
	}
	return s
}

// String is the short commit with "(dirty)" when the lab's files differ
// from it; "" for no commit.
func (g *Git) String() string {
	if g == nil {
		return ""
	}
	s := ShortHash(g.Commit)
	if g.Dirty {
		s += " (dirty)"
	}
	return s
}

// VariablesString is the lab's variables as name=value, sorted by name,
// joined by commas.
func (l Lab) VariablesString() string {
	parts := make([]string, 0, len(l.Variables))
	for _, k := range slices.Sorted(maps.Keys(l.Variables)) {
		parts = append(parts, k+"="+l.Variables[k])
	}
	return strings.Join(parts, ",")
}

// CPU is the machine's CPUs as "count × model".
func (m Machine) CPU() string {
	return fmt.Sprintf("%d × %s", m.CPUs, m.CPUModel)
}

// ShortHash is the first 12 characters of a hash, as people quote
// commits; a shorter string is itself.
func ShortHash(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}
