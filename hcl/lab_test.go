package hcl

import (
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

// cmpLab compares config values: prefixes and cty values by value,
// source ranges and expressions left out (tests check them separately).
var cmpLab = []cmp.Option{
	cmp.Comparer(func(a, b netip.Prefix) bool { return a == b }),
	cmp.Comparer(func(a, b cty.Value) bool { return a.RawEquals(b) }),
	cmp.Comparer(func(a, b cty.Type) bool { return a.Equals(b) }),
	cmpopts.IgnoreFields(config.Host{}, "Range", "AttrRanges"),
	cmpopts.IgnoreFields(config.Switch{}, "Range"),
	cmpopts.IgnoreFields(config.NIC{}, "Range", "AttrRanges"),
	cmpopts.IgnoreFields(config.Workload{}, "Range"),
	cmpopts.IgnoreFields(config.Variable{}, "DeclRange"),
	cmpopts.IgnoreFields(config.MatrixAxis{}, "Range"),
}

func mustLoad(t *testing.T, dir string, opts Options) *config.Lab {
	t.Helper()
	lab, diags := Load(dir, opts)
	if len(diags) > 0 {
		var b strings.Builder
		WriteDiagnostics(&b, lab.Sources, diags, false)
		t.Fatalf("Load(%s): unexpected diagnostics:\n%s", dir, b.String())
	}
	return lab
}

func offloads(on map[config.Offload]bool) config.Offloads {
	var o config.Offloads
	for f, v := range on {
		o.Set(f, v)
	}
	return o
}

// TestTwoReceivers loads the lab of issue 2 exactly as written there.
func TestTwoReceivers(t *testing.T) {
	dir := filepath.Join("testdata", "two-receivers")
	lab := mustLoad(t, dir, Options{})
	file := filepath.Join(dir, "lab.tsolab.hcl")

	if lab.Name != "two-receivers" || lab.Engine != config.EngineKernel || lab.Description != "one sender, two receivers through a switch" || lab.Dir != dir {
		t.Errorf("lab = %q %q %q %q, want two-receivers kernel, its description, %s", lab.Name, lab.Engine, lab.Description, lab.Dir, dir)
	}
	if _, ok := lab.Sources[file]; !ok || len(lab.Sources) != 1 {
		t.Errorf("Sources has %v, want exactly %s", keys(lab.Sources), file)
	}
	wantVars := []*config.Variable{{Name: "mtu", Type: cty.Number, Value: cty.NumberIntVal(1500)}}
	if diff := cmp.Diff(wantVars, lab.Variables, cmpLab...); diff != "" {
		t.Errorf("variables (-want +got):\n%s", diff)
	}
	wantAxes := []*config.MatrixAxis{{Name: "tso", Values: []cty.Value{cty.True, cty.False}}}
	if diff := cmp.Diff(wantAxes, lab.Matrix, cmpLab...); diff != "" {
		t.Errorf("matrix (-want +got):\n%s", diff)
	}

	scenario := func(tso bool) *config.Scenario {
		name := "tso=true"
		if !tso {
			name = "tso=false"
		}
		return &config.Scenario{
			Name:   name,
			Matrix: []config.MatrixValue{{Name: "tso", Value: cty.BoolVal(tso)}},
			Hosts: []*config.Host{
				{Name: "tx", Kind: config.HostNamespace, Sysctl: map[string]string{"net.ipv4.tcp_wmem": "4096 1048576 4194304"}, DelayedAck: true},
				{Name: "rx1", Kind: config.HostNamespace, DelayedAck: true},
				{Name: "rx2", Kind: config.HostNamespace, DelayedAck: true},
			},
			Switches: []*config.Switch{{Name: "sw"}},
			NICs: []*config.NIC{
				{
					Name: "tx0", Host: "tx", Connect: "sw", Address: netip.MustParsePrefix("10.77.0.1/24"), MTU: 1500, Rate: 2e9,
					Offload: offloads(map[config.Offload]bool{config.TSO: tso, config.GSO: true, config.GRO: true, config.SG: true, config.TxCsum: true}),
				},
				{Name: "rx1", Host: "rx1", Connect: "sw", Address: netip.MustParsePrefix("10.77.0.2/24"), MTU: 1500},
				{Name: "rx2", Host: "rx2", Connect: "sw", Address: netip.MustParsePrefix("10.77.0.3/24"), MTU: 1500},
			},
			Workloads: []*config.Workload{{
				Name: "bulk", Kind: config.Stream, Client: "tx", Servers: []string{"rx1", "rx2"},
				Connections: 4, WriteSize: 65536, ReadSize: 131072, Duration: 3 * time.Second,
			}},
		}
	}
	want := []*config.Scenario{scenario(true), scenario(false)}
	if diff := cmp.Diff(want, lab.Scenarios, cmpLab...); diff != "" {
		t.Errorf("scenarios (-want +got):\n%s", diff)
	}

	// Where things were written, for diagnostics after loading.
	tx0 := lab.Scenarios[0].NIC("tx0")
	for _, c := range []struct {
		what string
		got  hclv2.Range
		line int
	}{
		{"nic tx0", tx0.Range, 23},
		{"tx0 mtu", tx0.AttrRanges["mtu"], 27},
		{"tx0 offload.tso", tx0.AttrRanges["offload.tso"], 30},
		{"host tx", lab.Scenarios[0].Host("tx").Range, 15},
		{"workload bulk", lab.Scenarios[0].Workload("bulk").Range, 50},
		{"expect tso_helps", lab.Expects[1].Range, 64},
	} {
		if c.got.Filename != file || c.got.Start.Line != c.line {
			t.Errorf("%s range = %s, want %s line %d", c.what, c.got, file, c.line)
		}
	}

	if len(lab.Expects) != 2 {
		t.Fatalf("got %d expects, want 2", len(lab.Expects))
	}
	floor, helps := lab.Expects[0], lab.Expects[1]
	if floor.Name != "floor" || floor.Workload != "bulk" || floor.When != nil || floor.Condition == nil ||
		floor.Message != "the lab should carry at least 100 Mb/s" {
		t.Errorf("expect floor = %+v", floor)
	}
	if helps.Name != "tso_helps" || helps.Workload != "bulk" || helps.When == nil || helps.Condition == nil {
		t.Errorf("expect tso_helps = %+v", helps)
	}
	// The condition stays an expression over result and scenario().
	var roots []string
	for _, tr := range helps.Condition.Variables() {
		roots = append(roots, tr.RootName())
	}
	if diff := cmp.Diff([]string{"result"}, roots); diff != "" {
		t.Errorf("tso_helps condition reads (-want +got):\n%s", diff)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestLoadValid checks the typed lab of a lab that uses the rest of the
// language: peers, a local host with a device, rr and sendfile and
// loopback workloads, a string matrix.
func TestLoadValid(t *testing.T) {
	src := `lab "full" {
  engine = "sim"
}

matrix {
  stack = ["freebsd-10", "linux-6"]
  mtu   = [1500, 9000]
}

host "s" {
  stack         = matrix.stack
  stack_options = { size_goal_modulo = false }
  cpu           = "opteron"
  cores         = 4
  bus           = "7.5gbit"
}
host "r" {
  delayed_ack = false
}
host "m" {
  kind = "local"
}

nic "s0" {
  host    = host.s
  peer    = nic.r0
  address = "10.1.0.1/30"
  mtu     = matrix.mtu
  delay   = "20us"
  queue   = "1MB"
  offload = { lro = false, rx_csum = true }
}
nic "r0" {
  host    = host.r
  address = "10.1.0.2/30"
  mtu     = matrix.mtu
}
nic "hw" {
  host   = host.m
  device = "enp3s0"
  mtu    = 9000
}

workload "rr" {
  kind          = "rr"
  client        = host.s
  servers       = [nic.r0]
  bytes         = "10MB"
  request_size  = 64
  nodelay       = true
}
workload "file" {
  kind      = "sendfile"
  client    = host.s
  servers   = [nic.r0]
  file_size = "1GiB"
  sndbuf    = "1MB"
  rcvbuf    = 2097152
  rate      = "1gbit"
  cork      = true
  cc        = "reno"
  read_size = "64KiB"
}
workload "lo" {
  client   = host.s
  servers  = [host.s]
  loopback = true
  duration = "1m30s"
}

expect "fast" {
  workload  = workload.rr
  condition = result.transactions_per_s > 1000
}
`
	lab, diags := loadString(src, Options{})
	if len(diags) > 0 {
		t.Fatalf("diagnostics:\n%s", render(diags, src))
	}
	var names []string
	for _, s := range lab.Scenarios {
		names = append(names, s.Name)
	}
	wantNames := []string{"stack=freebsd-10,mtu=1500", "stack=freebsd-10,mtu=9000", "stack=linux-6,mtu=1500", "stack=linux-6,mtu=9000"}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("scenario names (-want +got):\n%s", diff)
	}
	if lab.Engine != config.EngineSim {
		t.Errorf("engine = %q, want sim", lab.Engine)
	}
	sc := lab.Scenario("stack=linux-6,mtu=9000")
	if sc == nil {
		t.Fatal("no scenario stack=linux-6,mtu=9000")
	}
	wantHosts := []*config.Host{
		{Name: "s", Kind: config.HostNamespace, Stack: "linux-6", StackOptions: map[string]string{"size_goal_modulo": "false"}, CPU: "opteron", Cores: 4, Bus: 7.5e9, DelayedAck: true},
		{Name: "r", Kind: config.HostNamespace},
		{Name: "m", Kind: config.HostLocal, DelayedAck: true},
	}
	if diff := cmp.Diff(wantHosts, sc.Hosts, cmpLab...); diff != "" {
		t.Errorf("hosts (-want +got):\n%s", diff)
	}
	wantNICs := []*config.NIC{
		{Name: "s0", Host: "s", Peer: "r0", Address: netip.MustParsePrefix("10.1.0.1/30"), MTU: 9000, Delay: 20 * time.Microsecond, Queue: 1e6,
			Offload: offloads(map[config.Offload]bool{config.LRO: false, config.RxCsum: true})},
		{Name: "r0", Host: "r", Address: netip.MustParsePrefix("10.1.0.2/30"), MTU: 9000},
		{Name: "hw", Host: "m", Device: "enp3s0", MTU: 9000},
	}
	if diff := cmp.Diff(wantNICs, sc.NICs, cmpLab...); diff != "" {
		t.Errorf("nics (-want +got):\n%s", diff)
	}
	wantWorkloads := []*config.Workload{
		{Name: "rr", Kind: config.RR, Client: "s", Servers: []string{"r0"}, Connections: 1, WriteSize: 65536, Bytes: 10e6,
			NoDelay: true, RequestSize: 64, ResponseSize: 1, Concurrency: 1},
		{Name: "file", Kind: config.Sendfile, Client: "s", Servers: []string{"r0"}, Connections: 1, WriteSize: 65536, ReadSize: 65536,
			SndBuf: 1e6, RcvBuf: 2097152, Cork: true, CC: "reno", FileSize: 1 << 30, Rate: 1e9},
		{Name: "lo", Kind: config.Stream, Client: "s", Servers: []string{"s"}, Loopback: true, Connections: 1, WriteSize: 65536, ReadSize: 131072, Duration: 90 * time.Second},
	}
	if diff := cmp.Diff(wantWorkloads, sc.Workloads, cmpLab...); diff != "" {
		t.Errorf("workloads (-want +got):\n%s", diff)
	}
	if got := sc.NIC("s0").AttrRanges["offload.rx_csum"]; got.Start.Line != 31 || got.Start.Column != 28 {
		t.Errorf("offload.rx_csum written at %s, want line 31 column 28", got)
	}
}

// TestCellNote checks that a mistake of some matrix cells says which.
func TestCellNote(t *testing.T) {
	src := header + `matrix {
  sg  = [true, false]
  mtu = [1500, 9000]
}
nic "n0" {
  host    = host.a
  mtu     = matrix.mtu
  offload = { tso = true, sg = matrix.sg }
}
`
	_, diags := loadString(src, Options{})
	if len(diags) != 1 {
		t.Fatalf("got %d diagnostics, want 1:\n%s", len(diags), render(diags, src))
	}
	if want := "(In scenarios sg=false,mtu=1500; sg=false,mtu=9000.)"; !strings.HasSuffix(diags[0].Detail, want) {
		t.Errorf("detail = %q, want it to end in %q", diags[0].Detail, want)
	}
}

func TestScenarioName(t *testing.T) {
	tests := []struct {
		cell []config.MatrixValue
		want string
	}{
		{nil, "default"},
		{[]config.MatrixValue{{Name: "tso", Value: cty.False}}, "tso=false"},
		{[]config.MatrixValue{{Name: "tso", Value: cty.False}, {Name: "mtu", Value: cty.NumberIntVal(9000)}}, "tso=false,mtu=9000"},
		{[]config.MatrixValue{{Name: "stack", Value: cty.StringVal("freebsd-10")}}, "stack=freebsd-10"},
		{[]config.MatrixValue{{Name: "loss", Value: cty.NumberFloatVal(0.5)}}, "loss=0.5"},
	}
	for _, tt := range tests {
		if got := ScenarioName(tt.cell); got != tt.want {
			t.Errorf("ScenarioName(%v) = %q, want %q", tt.cell, got, tt.want)
		}
	}
}

func TestNoMatrixIsOneDefaultScenario(t *testing.T) {
	lab, diags := loadString(header, Options{})
	if len(diags) > 0 {
		t.Fatalf("diagnostics:\n%s", render(diags, header))
	}
	if len(lab.Scenarios) != 1 || lab.Scenarios[0].Name != DefaultScenario || lab.Scenarios[0].Matrix != nil {
		t.Errorf("scenarios = %+v, want one named %q without matrix values", lab.Scenarios, DefaultScenario)
	}
}

func TestLoadDirectory(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b.tsolab.hcl", "host \"b\" {}\n")
	write("a.tsolab.hcl", "lab \"multi\" {}\nhost \"a\" {}\n")
	write(".#a.tsolab.hcl", "garbage {{{")
	write("notes.hcl", "garbage {{{")
	lab := mustLoad(t, dir, Options{})
	var hosts []string
	for _, h := range lab.Scenarios[0].Hosts {
		hosts = append(hosts, h.Name)
	}
	if diff := cmp.Diff([]string{"a", "b"}, hosts); diff != "" {
		t.Errorf("hosts in file name order (-want +got):\n%s", diff)
	}
	if len(lab.Sources) != 2 {
		t.Errorf("Sources = %v, want the two lab files", keys(lab.Sources))
	}

	_, diags := Load(t.TempDir(), Options{})
	if got := diagsOf(diags); len(got) != 1 || got[0].Summary != "No lab files" {
		t.Errorf("empty dir: got %+v, want one \"No lab files\"", got)
	}
	misnamed := t.TempDir()
	if err := os.WriteFile(filepath.Join(misnamed, "lab.hcl"), []byte(`lab "x" {}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, diags = Load(misnamed, Options{})
	if len(diags) != 1 || !strings.Contains(diags[0].Detail, "not lab.hcl: rename it to lab"+FileSuffix+".") {
		t.Errorf("a lab.hcl: got %v, want one saying to rename it to lab%s", diags, FileSuffix)
	}
	parent := filepath.Dir(dir)
	_, diags = Load(parent, Options{})
	if len(diags) != 1 || !strings.Contains(diags[0].Detail, "its subdirectories are labs: give one of "+dir+".") {
		t.Errorf("a directory of labs: got %v, want one naming the lab %s", diags, dir)
	}
	_, diags = Load(filepath.Join(dir, "missing"), Options{})
	if got := diagsOf(diags); len(got) != 1 || got[0].Summary != "Cannot read the lab directory" {
		t.Errorf("missing dir: got %+v, want one \"Cannot read the lab directory\"", got)
	}
}

func TestSyntaxErrorStopsLoading(t *testing.T) {
	src := "lab \"t\" {}\nhost \"a\" {\n  kind = \n}\n"
	lab, diags := loadString(src, Options{})
	if !diags.HasErrors() {
		t.Fatal("no error for a syntax error")
	}
	for _, d := range diags {
		if d.Subject == nil || d.Subject.Filename != "lab.tsolab.hcl" {
			t.Errorf("diagnostic %q without a subject in the file", d.Summary)
		}
	}
	if string(lab.Sources["lab.tsolab.hcl"]) != src {
		t.Error("Sources does not hold the file with errors")
	}
}

// TestExamplesLoad loads every lab under ../examples without a diagnostic.
func TestExamplesLoad(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("..", "examples", "*"))
	loaded := 0
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		loaded++
		t.Run(filepath.Base(dir), func(t *testing.T) {
			lab := mustLoad(t, dir, Options{})
			if len(lab.Scenarios) == 0 {
				t.Errorf("%s: no scenarios", dir)
			}
		})
	}
	if loaded == 0 {
		t.Fatal("no lab directories under ../examples: the repository ships its examples there")
	}
}

// -name replaces the lab block's name (Options.Name), under the same
// rule: it becomes part of namespace names.
func TestNameOverride(t *testing.T) {
	const src = "lab \"twice\" {}\nhost \"tx\" {}\n"
	tests := []struct {
		name, override, want, wantErr string
	}{
		{"none", "", "twice", ""},
		{"another copy", "twice-ci-42", "twice-ci-42", ""},
		{"not a name", "a b", "", `-name "a b" cannot name a lab`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lab, diags := loadString(src, Options{Name: tt.override})
			if tt.wantErr != "" {
				if !diags.HasErrors() || !strings.Contains(diags.Error(), tt.wantErr) {
					t.Fatalf("diagnostics %v, want an error with %q", diags, tt.wantErr)
				}
				if r := diags[0].Subject; r == nil || r.Start.Line != 1 {
					t.Errorf("the error points at %v, want the lab block on line 1", r)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if lab.Name != tt.want {
				t.Errorf("lab name %q, want %q", lab.Name, tt.want)
			}
		})
	}
}
