package hcl

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad loads arbitrary lab files: the loader never panics, every
// diagnostic can be rendered, and a lab without errors is complete.
// Seeds: the test labs, the sources of the table tests' header, and every
// lab under ../examples.
func FuzzLoad(f *testing.F) {
	var seeds []string
	for _, pattern := range []string{
		filepath.Join("testdata", "*", "*"+FileSuffix),
		filepath.Join("..", "examples", "*", "*"+FileSuffix),
	} {
		files, _ := filepath.Glob(pattern)
		seeds = append(seeds, files...)
	}
	for _, name := range seeds {
		src, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add([]byte(header + twoNICs + bulk))
	f.Add([]byte(header + "nic \"p\" {\n  host = host.a\n  peer = nic.q\n}\nnic \"q\" {\n  host = host.b\n  peer = nic.p\n}\n"))
	f.Add([]byte(header + "matrix {\n  sg = [true, false]\n}\nnic \"n\" {\n  host = host.a\n  offload = { tso = true, sg = matrix.sg }\n}\n"))

	f.Fuzz(func(t *testing.T, src []byte) {
		const name = "fuzz.tsolab.hcl"
		lab, diags := load("fuzz", []sourceFile{{name: name, src: src}}, Options{})
		if lab == nil || lab.Sources[name] == nil && len(src) > 0 {
			t.Fatal("Load returned no lab or lost the source")
		}
		if err := WriteDiagnostics(io.Discard, lab.Sources, diags, true); err != nil {
			t.Fatal(err)
		}
		for _, d := range diags {
			if d.Summary == "" {
				t.Errorf("diagnostic without summary: %+v", d)
			}
			if d.Subject != nil && d.Subject.Filename != name && !strings.HasPrefix(d.Subject.Filename, "<") {
				t.Errorf("diagnostic %q about file %q", d.Summary, d.Subject.Filename)
			}
		}
		if diags.HasErrors() {
			return
		}
		if lab.Name == "" || len(lab.Scenarios) == 0 {
			t.Fatalf("lab without errors has name %q and %d scenarios", lab.Name, len(lab.Scenarios))
		}
		for _, sc := range lab.Scenarios {
			for _, n := range sc.NICs {
				if sc.Host(n.Host) == nil {
					t.Errorf("scenario %s: nic %s on unknown host %q", sc.Name, n.Name, n.Host)
				}
				if n.Connect != "" && sc.Switch(n.Connect) == nil {
					t.Errorf("scenario %s: nic %s on unknown switch %q", sc.Name, n.Name, n.Connect)
				}
				if n.Peer != "" && sc.NIC(n.Peer) == nil {
					t.Errorf("scenario %s: nic %s with unknown peer %q", sc.Name, n.Name, n.Peer)
				}
				if reason, _ := n.Offload.Conflict(); reason != "" {
					t.Errorf("scenario %s: nic %s offload conflict passed: %s", sc.Name, n.Name, reason)
				}
				if n.MTU != 0 && (n.MTU < 68 || n.MTU > 65535) {
					t.Errorf("scenario %s: nic %s mtu %d passed", sc.Name, n.Name, n.MTU)
				}
			}
			for _, w := range sc.Workloads {
				if sc.Host(w.Client) == nil {
					t.Errorf("scenario %s: workload %s from unknown host %q", sc.Name, w.Name, w.Client)
				}
				if w.Duration != 0 && w.Bytes != 0 {
					t.Errorf("scenario %s: workload %s has both duration and bytes", sc.Name, w.Name)
				}
			}
		}
	})
}
