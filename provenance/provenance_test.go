package provenance

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-cmp/cmp"

	"github.com/tsolab/tsolab/result"
)

func TestNewLabHash(t *testing.T) {
	a := NewLab("l", "", map[string][]byte{"a.tsolab.hcl": []byte("x"), "b.tsolab.hcl": []byte("y")}, nil)
	b := NewLab("l", "", map[string][]byte{"b.tsolab.hcl": []byte("y"), "a.tsolab.hcl": []byte("x")}, nil)
	c := NewLab("l", "", map[string][]byte{"a.tsolab.hcl": []byte("x"), "b.tsolab.hcl": []byte("z")}, nil)
	if a.Hash != b.Hash {
		t.Errorf("hash depends on map order: %s != %s", a.Hash, b.Hash)
	}
	if a.Hash == c.Hash {
		t.Errorf("hash ignores a file's content: both %s", a.Hash)
	}
	if got, want := len(a.Files), 2; got != want || a.Files[0].Name != "a.tsolab.hcl" {
		t.Errorf("files: got %+v, want 2 sorted by name", a.Files)
	}
	// No directory: no commit looked up, even run inside a checkout (this
	// test runs in tsolab's).
	if a.Git != nil {
		t.Errorf("NewLab without a directory: Git = %+v, want nil", a.Git)
	}
}

func TestGitCommitAndDirty(t *testing.T) {
	root := t.TempDir()
	repo, err := git.PlainInit(root, false)
	if err != nil {
		t.Fatal(err)
	}
	labDir := filepath.Join(root, "labs", "one")
	if err := os.MkdirAll(labDir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(labDir, "lab.tsolab.hcl"), "lab \"one\" {}\n")
	wt, _ := repo.Worktree()
	if _, err := wt.Add("labs/one/lab.tsolab.hcl"); err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "t", Email: "t@example.invalid", When: time.Unix(0, 0)}
	commit, err := wt.Commit("lab", &git.CommitOptions{Author: sig})
	if err != nil {
		t.Fatal(err)
	}

	g := gitOf(labDir)
	if g == nil || g.Commit != commit.String() || g.Dirty {
		t.Fatalf("clean lab: got %+v, want commit %s, not dirty", g, commit)
	}
	if l := NewLab("one", labDir, nil, nil); l.Git == nil || *l.Git != *g {
		t.Errorf("NewLab of the lab directory: Git = %+v, want %+v", l.Git, g)
	}
	// A change outside the lab directory does not make the lab dirty.
	write(filepath.Join(root, "README"), "other\n")
	if g := gitOf(labDir); g.Dirty {
		t.Errorf("a file outside the lab made it dirty")
	}
	write(filepath.Join(labDir, "lab.tsolab.hcl"), "lab \"one\" { engine = \"sim\" }\n")
	if g := gitOf(labDir); g == nil || !g.Dirty {
		t.Errorf("modified lab file: got %+v, want dirty", g)
	}
	// The change staged (git add), the worktree then matching the index:
	// still not what the commit holds.
	if _, err := wt.Add("labs/one/lab.tsolab.hcl"); err != nil {
		t.Fatal(err)
	}
	if g := gitOf(labDir); g == nil || !g.Dirty {
		t.Errorf("staged change to the lab file: got %+v, want dirty", g)
	}
	if g := gitOf(t.TempDir()); g != nil {
		t.Errorf("outside any repository: got %+v, want nil", g)
	}
}

func TestCompare(t *testing.T) {
	base := &result.Provenance{
		Tool:    result.Tool{Version: "0.1.0", Revision: "aaaaaaaaaaaaaaaa"},
		Lab:     result.Lab{Hash: "1111111111111111", Git: &result.Git{Commit: "c1c1c1c1c1c1c1c1"}},
		Machine: result.Machine{Kernel: "6.1.0", CPUModel: "EPYC", CPUs: 2},
	}
	same := *base
	if got := Compare(base, &same); len(got) != 0 {
		t.Errorf("identical provenance: got %q, want no difference", got)
	}
	now := *base
	now.Machine.Kernel = "6.18.0"
	now.Lab.Git = &result.Git{Commit: "c2c2c2c2c2c2c2c2", Dirty: true}
	want := []string{
		"lab commit: c1c1c1c1c1c1 -> c2c2c2c2c2c2 (dirty)",
		"kernel: 6.1.0 -> 6.18.0",
	}
	if diff := cmp.Diff(want, Compare(base, &now)); diff != "" {
		t.Errorf("Compare (-want +got):\n%s", diff)
	}

	baseRun := &result.Run{
		NICs:    []result.NIC{{Name: "tx0", Driver: "veth", DriverVersion: "1.0", Features: []string{"rx-gro", "tx-tcp-segmentation"}}},
		Sysctls: map[string]map[string]string{"tx": {"tcp_congestion_control": "cubic"}},
	}
	nowRun := &result.Run{
		NICs:    []result.NIC{{Name: "tx0", Driver: "veth", DriverVersion: "1.0", Features: []string{"rx-gro", "tx-gso-partial"}}},
		Sysctls: map[string]map[string]string{"tx": {"tcp_congestion_control": "bbr"}},
	}
	wantRun := []string{
		"nic.tx0 features: +tx-gso-partial -tx-tcp-segmentation",
		"tx tcp_congestion_control: cubic -> bbr",
	}
	if diff := cmp.Diff(wantRun, CompareRun(baseRun, nowRun)); diff != "" {
		t.Errorf("CompareRun (-want +got):\n%s", diff)
	}
	if got := CompareRun(baseRun, baseRun); len(got) != 0 {
		t.Errorf("identical runs: got %q", got)
	}
	if got := Compare(nil, &now); len(got) != 1 || !strings.Contains(got[0], "no provenance") {
		t.Errorf("nil baseline: got %q", got)
	}

	// A new driver version and firmware; a NIC only in the baseline, one
	// only in this run: each named once, no feature line for a NIC that is
	// missing on one side.
	baseRun.NICs = append(baseRun.NICs, result.NIC{Name: "rx0", Driver: "veth", DriverVersion: "1.0", Firmware: "fw1", Features: []string{"rx-gro"}})
	nowRun.NICs[0].Features = baseRun.NICs[0].Features
	nowRun.NICs[0].DriverVersion, nowRun.NICs[0].Firmware = "1.1", "fw2"
	nowRun.NICs = append(nowRun.NICs, result.NIC{Name: "eth1", Driver: "mlx5_core", Features: []string{"rx-gro"}})
	nowRun.Sysctls = baseRun.Sysctls
	wantNICs := []string{
		"nic.eth1 driver: (none) -> mlx5_core",
		"nic.rx0 driver: veth 1.0 -> (none)",
		"nic.rx0 firmware: fw1 -> (none)",
		"nic.tx0 driver: veth 1.0 -> veth 1.1",
		"nic.tx0 firmware: (none) -> fw2",
	}
	if diff := cmp.Diff(wantNICs, CompareRun(baseRun, nowRun)); diff != "" {
		t.Errorf("CompareRun of NICs changed, gone and new (-want +got):\n%s", diff)
	}
}

func TestToolFromBuildSettings(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings []debug.BuildSetting
		want     result.Tool
	}{
		{"no vcs stamp (go run, go test)", nil, result.Tool{Version: Version, GoVersion: runtime.Version()}},
		{"clean checkout", []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}},
			result.Tool{Version: Version, GoVersion: runtime.Version(), Revision: "abc123"}},
		{"modified checkout", []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}, {Key: "GOARCH", Value: "amd64"}},
			result.Tool{Version: Version, GoVersion: runtime.Version(), Revision: "abc123", Modified: true}},
	} {
		if got := toolFrom(tc.settings); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestThisMachine(t *testing.T) {
	m := ThisMachine()
	if m.Kernel == "" || m.CPUs < 1 {
		t.Errorf("ThisMachine: got %+v, want a kernel release and at least one CPU", m)
	}
	// Where the machine's /proc/cpuinfo names a model, so does ThisMachine.
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil && strings.Contains(string(b), "model name") && m.CPUModel == "" {
		t.Errorf("ThisMachine: no CPU model, while /proc/cpuinfo has a model name")
	}
	if got := cpuModel("processor\t: 0\nmodel name\t: AMD EPYC 7B13\n"); got != "AMD EPYC 7B13" {
		t.Errorf("cpuModel: got %q", got)
	}
}

func TestHashFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cpu.json")
	if err := os.WriteFile(p, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := HashFiles([]string{p, filepath.Join(dir, "missing.json")})
	// sha256("abc"), FIPS 180-2's first example
	want := "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if len(got) != 2 || got[0].Name != "cpu.json" || got[0].SHA256 != want {
		t.Fatalf("HashFiles = %+v, want cpu.json with %s first", got, want)
	}
	if got[1].Name != "missing.json" || !strings.HasPrefix(got[1].SHA256, "unreadable: ") {
		t.Errorf("HashFiles of a missing file = %+v, want it named with the error", got[1])
	}
}
