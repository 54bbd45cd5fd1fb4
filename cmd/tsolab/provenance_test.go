package main

import (
	"bytes"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tsolab/tsolab/provenance"
	"github.com/tsolab/tsolab/result"
)

// baselineLab is a model lab with an expectation that reads the baseline.
const baselineLab = `lab "prov" {
  engine = "sim"
}
variable "size" {
  default = "10MB"
}
host "a" {}
host "b" {}
nic "a0" {
  host    = host.a
  peer    = nic.b0
  address = "10.9.0.1/24"
}
nic "b0" {
  host    = host.b
  address = "10.9.0.2/24"
}
workload "w" {
  client  = host.a
  servers = [nic.b0]
  bytes   = var.size
}
expect "not_slower" {
  workload  = workload.w
  condition = result.throughput_bps >= baseline.throughput_bps * 0.9
}
`

// TestProvenanceModelLab runs a model lab kept in a git work tree and
// checks every provenance field in the -json results, the JUnit
// properties, the text summary and the report; then judges it against a
// baseline from "another kernel" and checks that every output says so.
func TestProvenanceModelLab(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "labs", "prov")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lab.tsolab.hcl"), []byte(baselineLab), 0o644); err != nil {
		t.Fatal(err)
	}
	repo, err := git.PlainInit(root, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := repo.Worktree()
	if _, err := wt.Add("labs/prov/lab.tsolab.hcl"); err != nil {
		t.Fatal(err)
	}
	commit, err := wt.Commit("lab", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.invalid", When: time.Unix(0, 0)}})
	if err != nil {
		t.Fatal(err)
	}

	run := func(want int, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
		if code := c.main(args); code != want {
			t.Fatalf("tsolab %s: exit %d, want %d, stderr:\n%s", strings.Join(args, " "), code, want, errb.String())
		}
		return out.String()
	}
	// Without -baseline the expectation cannot be judged (exit 1), but
	// the results are written.
	base := filepath.Join(root, "base.json")
	run(exitError, "test", "-json", base, dir)
	res := readJSON(t, base)

	p := res.Provenance
	if p == nil {
		t.Fatal("results carry no provenance")
	}
	checks := []struct {
		what string
		ok   bool
	}{
		{"tool.version", p.Tool.Version == provenance.Version},
		{"tool.go_version", strings.HasPrefix(p.Tool.GoVersion, "go")},
		{"lab.name", p.Lab.Name == "prov"},
		{"lab.hash", len(p.Lab.Hash) == 64},
		{"lab.files", len(p.Lab.Files) == 1 && p.Lab.Files[0].Name == "lab.tsolab.hcl" && len(p.Lab.Files[0].SHA256) == 64},
		{"lab.git.commit", p.Lab.Git != nil && p.Lab.Git.Commit == commit.String()},
		{"lab.git.dirty", p.Lab.Git != nil && !p.Lab.Git.Dirty},
		{"lab.variables", p.Lab.Variables["size"] == `"10MB"`},
		{"machine.kernel", p.Machine.Kernel != "" && p.Machine.Kernel == provenance.ThisMachine().Kernel},
		{"machine.cpus", p.Machine.CPUs >= 1},
		{"machine.arch", p.Machine.Arch != ""},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("provenance %s is wrong: %+v", c.what, p)
		}
	}
	for _, r := range res.Runs {
		m := r.Provenance
		if m == nil || m.Model == nil {
			t.Fatalf("run %s/%s: no model provenance", r.Scenario, r.Workload)
		}
		if strings.Join(m.Model.Stacks, ",") != "linux-6" || len(m.Model.CPUs) == 0 || len(m.Model.Hash) != 64 {
			t.Errorf("run %s: model provenance %+v, want stack linux-6, its CPU profile and a hash", r.Scenario, m.Model)
		}
	}

	// A dirty lab says so.
	if err := os.WriteFile(filepath.Join(dir, "lab.tsolab.hcl"), []byte(baselineLab+"\n# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := filepath.Join(root, "now.json")
	junit := filepath.Join(root, "junit.xml")
	report := filepath.Join(root, "report.html")

	// The baseline came from another kernel.
	kernel, hash := p.Machine.Kernel, p.Lab.Hash
	res.Provenance.Machine.Kernel = "1.0.0-old"
	b, _ := json.Marshal(res)
	if err := os.WriteFile(base, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := run(exitOK, "test", "-json", now, "-junit", junit, "-report", report, "-baseline", base, dir)
	got := readJSON(t, now).Provenance
	if got.Lab.Git == nil || !got.Lab.Git.Dirty {
		t.Errorf("edited lab: git %+v, want dirty", got.Lab.Git)
	}
	if got.Lab.Hash == hash {
		t.Errorf("edited lab kept its hash %s", got.Lab.Hash)
	}
	kernelLine := "kernel: 1.0.0-old -> " + kernel
	if first := strings.SplitN(strings.TrimSpace(out), "\n", 2)[0]; !strings.HasPrefix(first, "tsolab "+provenance.Version) {
		t.Errorf("text summary starts with %q, want the provenance line", first)
	}
	for _, want := range []string{"machine: Linux " + kernel, "(dirty)", "the baseline ran on something else", kernelLine} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	jx, _ := os.ReadFile(junit)
	for _, want := range []string{`<property name="kernel" value="` + kernel + `"`, `name="lab.git.commit"`, `name="default.model.hash"`, kernelLine} {
		if !bytes.Contains(jx, []byte(want)) {
			t.Errorf("JUnit lacks %q:\n%s", want, jx)
		}
	}
	page, _ := os.ReadFile(report)
	for _, want := range []string{"<dt>Provenance</dt>", "machine: Linux " + kernel, html.EscapeString(kernelLine)} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func readJSON(t *testing.T, path string) *result.Results {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r result.Results
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}
