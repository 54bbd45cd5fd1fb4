package hcl

import (
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
	want := []*config.Machine{
		{Name: "r1", Reach: config.Reach{Address: "10.1.2.3", Port: 2222, User: "tso", IdentityFile: "~/.ssh/id_ed25519", KnownHosts: "lab_known_hosts", Sudo: true}},
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
