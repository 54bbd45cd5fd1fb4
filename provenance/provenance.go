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

	"github.com/tsolab/tsolab/result"
	"golang.org/x/sys/unix"
)

// hashFile is the File named name with content b.
func hashFile(name string, b []byte) result.File {
	sum := sha256.Sum256(b)
	return result.File{Name: name, SHA256: hex.EncodeToString(sum[:])}
}

// HashFiles names each file by its base name with its SHA-256; a file it
// cannot read is named with the error instead of a hash.
func HashFiles(paths []string) []result.File {
	var out []result.File
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			out = append(out, result.File{Name: filepath.Base(p), SHA256: "unreadable: " + err.Error()})
			continue
		}
		out = append(out, hashFile(filepath.Base(p), b))
	}
	return out
}

// New returns the provenance of a lab: the tool, the lab's files (name
// to content), its variables and the machine. dir is the lab directory,
// for its git commit; "" skips that.
func New(labName, dir string, files map[string][]byte, vars map[string]string) *result.Provenance {
	return &result.Provenance{
		Tool:    ThisTool(),
		Lab:     NewLab(labName, dir, files, vars),
		Machine: ThisMachine(),
	}
}

// ThisTool identifies the running binary from its build information.
func ThisTool() result.Tool {
	var settings []debug.BuildSetting
	if bi, ok := debug.ReadBuildInfo(); ok {
		settings = bi.Settings
	}
	return toolFrom(settings)
}

// toolFrom is the Tool a binary built with these settings (its build
// information's: the vcs.* keys go build stamps from the checkout) is.
func toolFrom(settings []debug.BuildSetting) result.Tool {
	t := result.Tool{Version: Version, GoVersion: runtime.Version()}
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			t.Revision = s.Value
		case "vcs.modified":
			t.Modified = s.Value == "true"
		}
	}
	return t
}

// Version is tsolab's version.
const Version = "0.1.0-dev"

// NewLab hashes the lab's files and reads its git commit.
func NewLab(name, dir string, files map[string][]byte, vars map[string]string) result.Lab {
	l := result.Lab{Name: name, Variables: vars}
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
func ThisMachine() result.Machine {
	m := result.Machine{Arch: runtime.GOARCH, CPUs: runtime.NumCPU()}
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
