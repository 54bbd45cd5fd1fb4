package provenance

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// Provenance is where one set of results came from.
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
	// Model is what the model ran with (sim engine only).
	Model *Model `json:"model,omitempty"`
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

// hashFile is the File named name with content b.
func hashFile(name string, b []byte) File {
	sum := sha256.Sum256(b)
	return File{Name: name, SHA256: hex.EncodeToString(sum[:])}
}

// HashFiles names each file by its base name with its SHA-256; a file it
// cannot read is named with the error instead of a hash.
func HashFiles(paths []string) []File {
	var out []File
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			out = append(out, File{Name: filepath.Base(p), SHA256: "unreadable: " + err.Error()})
			continue
		}
		out = append(out, hashFile(filepath.Base(p), b))
	}
	return out
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
}

// New returns the provenance of a lab: the tool, the lab's files (name
// to content), its variables and the machine. dir is the lab directory,
// for its git commit; "" skips that.
func New(labName, dir string, files map[string][]byte, vars map[string]string) *Provenance {
	return &Provenance{
		Tool:    ThisTool(),
		Lab:     NewLab(labName, dir, files, vars),
		Machine: ThisMachine(),
	}
}

// ThisTool identifies the running binary from its build information.
func ThisTool() Tool {
	t := Tool{Version: Version, GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				t.Revision = s.Value
			case "vcs.modified":
				t.Modified = s.Value == "true"
			}
		}
	}
	return t
}

// Version is tsolab's version.
const Version = "0.1.0-dev"

// NewLab hashes the lab's files and reads its git commit.
func NewLab(name, dir string, files map[string][]byte, vars map[string]string) Lab {
	l := Lab{Name: name, Variables: vars}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	all := sha256.New()
	for _, n := range names {
		f := hashFile(n, files[n])
		l.Files = append(l.Files, f)
		fmt.Fprintf(all, "%s\x00%s\x00", n, f.SHA256)
	}
	l.Hash = hex.EncodeToString(all.Sum(nil))
	if dir != "" {
		l.Git = gitOf(dir)
	}
	return l
}

// ThisMachine reads the kernel release, architecture and CPU.
func ThisMachine() Machine {
	m := Machine{Arch: runtime.GOARCH, CPUs: runtime.NumCPU()}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPUModel = cpuModel(string(b))
	}
	return m
}

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel(cpuinfo string) string {
	for _, line := range strings.Split(cpuinfo, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// TCPSysctls are the sysctls (under /proc/sys/net/ipv4) that shape a TCP
// result, read per host namespace by the kernel engine; a kernel without
// one leaves it out.
var TCPSysctls = []string{
	"tcp_congestion_control",
	"tcp_wmem",
	"tcp_rmem",
	"tcp_autocorking",
	"tcp_min_tso_segs",
	"tcp_tso_rtt_log",
	"tcp_limit_output_bytes",
	"tcp_pacing_ss_ratio",
	"tcp_pacing_ca_ratio",
	"tcp_sack",
	"tcp_timestamps",
	"tcp_window_scaling",
	"tcp_ecn",
}

// ReadTCPSysctls reads TCPSysctls from /proc/sys/net/ipv4 as the calling
// thread's network namespace sees them.
func ReadTCPSysctls() map[string]string {
	out := map[string]string{}
	for _, s := range TCPSysctls {
		b, err := os.ReadFile("/proc/sys/net/ipv4/" + s)
		if err != nil {
			continue
		}
		out[s] = strings.Join(strings.Fields(string(b)), " ")
	}
	return out
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
	for _, k := range sortedKeys(p.Lab.Variables) {
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
// sysctls; the model's profiles and hash.
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
	for _, h := range sortedKeys(r.Sysctls) {
		for _, s := range sortedKeys(r.Sysctls[h]) {
			out = append(out, Property{prefix + "host." + h + "." + s, r.Sysctls[h][s]})
		}
	}
	if r.Model != nil {
		out = append(out,
			Property{prefix + "model.stacks", strings.Join(r.Model.Stacks, ",")},
			Property{prefix + "model.cpus", strings.Join(r.Model.CPUs, ",")},
			Property{prefix + "model.hash", r.Model.Hash})
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
	tool := "tsolab " + toolString(p.Tool)
	if p.Tool.Revision == "" {
		tool += " (revision unknown: built without VCS stamping)"
	}
	lab := "lab " + p.Lab.Name + " files " + short(p.Lab.Hash)
	if p.Lab.Git != nil {
		lab += ", git " + gitString(p.Lab.Git)
	}
	if len(p.Lab.Variables) > 0 {
		lab += ", variables " + mapString(p.Lab.Variables)
	}
	machine := fmt.Sprintf("Linux %s %s, %s", p.Machine.Kernel, p.Machine.Arch, cpuString(p.Machine))
	return []string{tool + " · " + lab, "machine: " + machine}
}

func sortedKeys[V any](m map[string]V) []string { return unionKeys(m, nil) }
