package hcl

import (
	"bytes"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/tsolab/tsolab/config"
)

// hangAfter is how long one fuzz input may take to load: seeds take
// milliseconds.
const hangAfter = 20 * time.Second

// FuzzLoad loads arbitrary lab files: the loader never panics, every
// diagnostic can be rendered, a lab without errors is complete, and
// `tsolab fmt` of it loads to the same lab (and is already formatted).
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
		// A hang is a failure too: the fuzzing engine has no limit per
		// input, so an input still loading after hangAfter crashes the
		// worker, which records it (GOTRACEBACK=all shows where).
		watchdog := time.AfterFunc(hangAfter, func() { panic(fmt.Sprintf("FuzzLoad: one input still loading after %v: a hang", hangAfter)) })
		defer watchdog.Stop()
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
		checkFormatted(t, lab, src)
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
				if r, ok := n.Offload.Conflict(); ok {
					t.Errorf("scenario %s: nic %s offload conflict passed: %s", sc.Name, n.Name, r)
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

// checkFormatted loads Format(src) and requires the lab it gives to be
// lab, but for where things are written: every value, scenario, workload
// and expectation the same, conditions the same up to white space.
func checkFormatted(t *testing.T, lab *config.Lab, src []byte) {
	t.Helper()
	const name = "fuzz.tsolab.hcl"
	out := Format(src)
	if again := Format(out); !bytes.Equal(again, out) {
		t.Fatalf("fmt is not idempotent:\n%s\nformats to\n%s", out, again)
	}
	lab2, diags := load("fuzz", []sourceFile{{name: name, src: out}}, Options{})
	if diags.HasErrors() {
		t.Fatalf("the fmt output does not load: %v\n%s", diags, out)
	}
	opts := cmp.Options{
		cmpopts.IgnoreFields(config.Lab{}, "Sources"),
		cmpopts.IgnoreTypes(hclv2.Range{}, map[string]hclv2.Range{}),
		cmpopts.IgnoreInterfaces(struct{ hclv2.Expression }{}),
		cmp.Comparer(func(a, b cty.Value) bool { return a.RawEquals(b) }),
		cmp.Comparer(func(a, b cty.Type) bool { return a.Equals(b) }),
		cmpopts.EquateComparable(netip.Prefix{}, netip.Addr{}),
		cmpopts.EquateEmpty(),
	}
	if diff := cmp.Diff(lab, lab2, opts); diff != "" {
		t.Fatalf("the fmt output loads to another lab (-src +fmt):\n%s\nformatted:\n%s", diff, out)
	}
	for i, ex := range lab.Expects {
		ex2 := lab2.Expects[i]
		for _, e := range [][2]hclv2.Expression{{ex.When, ex2.When}, {ex.Condition, ex2.Condition}} {
			a, b := exprText(lab.Sources[name], e[0]), exprText(out, e[1])
			if a != b {
				t.Errorf("expect %q: %q became %q", ex.Name, a, b)
			}
		}
	}
}

// exprText is an expression's source without white space.
func exprText(src []byte, e hclv2.Expression) string {
	if e == nil {
		return ""
	}
	r := e.Range()
	if r.End.Byte > len(src) || r.Start.Byte > r.End.Byte {
		return "<out of range>"
	}
	return strings.Join(strings.Fields(string(src[r.Start.Byte:r.End.Byte])), "")
}
