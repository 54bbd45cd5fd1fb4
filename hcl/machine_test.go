package hcl

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tsolab/tsolab/config"
)

func TestMachineBlock(t *testing.T) {
	lab, diags := loadString(`lab "two" {}
variable "addr" { default = "10.1.2.3" }
machine "r1" {
  address       = var.addr
  port          = 2222
  user          = "tso"
  identity_file = "~/.ssh/id_ed25519"
  known_hosts   = "lab_known_hosts"
  sudo          = true
}
machine "r2" { address = "r2.example" }
host "tx" {}
host "rx" { machine = machine.r1 }
nic "rx0" {
  host   = host.rx
  device = "enp3s0f1"
}
`, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	sc := lab.Scenarios[0]
	// A relative path is the lab directory's ("lab" here), made absolute.
	labKnownHosts, err := filepath.Abs("lab/lab_known_hosts")
	if err != nil {
		t.Fatal(err)
	}
	want := []*config.Machine{
		{Name: "r1", Reach: config.Reach{Address: "10.1.2.3", Port: 2222, User: "tso", IdentityFile: "~/.ssh/id_ed25519", KnownHosts: labKnownHosts, Sudo: true}},
		{Name: "r2", Reach: config.Reach{Address: "r2.example"}},
	}
	if d := cmp.Diff(want, sc.Machines, cmpopts.IgnoreFields(config.Machine{}, "Range")); d != "" {
		t.Errorf("machines (-want +got):\n%s", d)
	}
	if got := sc.Host("rx").Machine; got != "r1" {
		t.Errorf("host rx: machine %q, want r1", got)
	}
	if got := sc.Host("tx").Machine; got != "" {
		t.Errorf("host tx: machine %q, want \"\" (the machine tsolab runs on)", got)
	}
	if r := sc.Machine("r1").Range; r.Start.Line != 3 {
		t.Errorf("machine r1's range starts at line %d, want 3", r.Start.Line)
	}
}

// TestSwitchLivesWithItsPorts: a switch is placed on the machine of its
// ports' hosts, and one whose ports are on two machines is refused at
// the port that crosses, naming both machines and the fix.
func TestSwitchLivesWithItsPorts(t *testing.T) {
	src := `lab "two" {}
machine "r1" { address = "10.1.2.3" }
host "tx" {}
host "rx" { machine = machine.r1 }
host "ry" { machine = machine.r1 }
switch "far" {}
switch "near" {}
switch "idle" {}
nic "rx0" {
  host    = host.rx
  connect = switch.far
}
nic "ry0" {
  host    = host.ry
  connect = switch.far
}
nic "tx0" {
  host    = host.tx
  connect = switch.near
}
`
	lab, diags := loadString(src, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	sc := lab.Scenarios[0]
	for sw, want := range map[string]string{"far": "r1", "near": "", "idle": ""} {
		if got := sc.Switch(sw).Machine; got != want {
			t.Errorf("switch %s: machine %q, want %q", sw, got, want)
		}
	}

	_, diags = loadString(src+"nic \"tx1\" {\n  host    = host.tx\n  connect = switch.far\n}\n", Options{})
	if !diags.HasErrors() {
		t.Fatal("a switch with ports on two machines loaded without error")
	}
	d := diags[0]
	if d.Summary != "Link crosses machines" || d.Subject == nil || d.Subject.Start.Line != 23 {
		t.Errorf("got %v at %v, want \"Link crosses machines\" at tx1's connect (line 23)", d.Summary, d.Subject)
	}
	for _, w := range []string{`switch "far" lives on machine "r1"`, `nic "rx0"`, `nic "tx1"'s host "tx" is on the machine tsolab runs on`, "Give each machine a switch of its own"} {
		if !strings.Contains(d.Detail, w) {
			t.Errorf("detail %q lacks %q", d.Detail, w)
		}
	}
}
