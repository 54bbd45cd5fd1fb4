package nic_test

import (
	"os/exec"
	"testing"
)

func TestSmoke(t *testing.T) {
	f := newFixture(t)
	a := f.addHost("a")
	b := f.addHost("b")
	sw := f.addSwitch("sw")
	na := f.mustNIC("a0", f.switchNIC("a0", "a", "sw", map[string]string{"address": "10.9.0.1/24", "mtu": "9000", "offload.tso": "true"}))
	nb := f.mustNIC("b0", f.switchNIC("b0", "b", "sw", map[string]string{"address": "10.9.0.2/24"}))
	t.Log(na, nb)
	for _, ns := range []string{a, b, sw} {
		out, _ := exec.Command("ip", "-n", ns, "-d", "link").CombinedOutput()
		t.Logf("%s:\n%s", ns, out)
	}
	reach(t, a, b, "10.9.0.2")
}
