package kernel_test

import (
	"net/netip"
	"testing"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
)

// pair is two namespaces, tx and rx, joined by a veth pair tx0 <-> rx0
// (10.201.0.1/24 and 10.201.0.2/24), described as a scenario.
type pair struct {
	Naming   provider.Naming
	Scenario *config.Scenario
}

// newPair builds the two namespaces and the veth pair with the given MTU,
// removed when t ends (see netnstest.Pair).
func newPair(t testing.TB, mtu int) *pair {
	t.Helper()
	naming := netnstest.Lab(t)
	tx := netnsfs.End{NS: naming.HostNS("tx"), IfName: "tx0", Addr: netip.MustParsePrefix("10.201.0.1/24")}
	rx := netnsfs.End{NS: naming.HostNS("rx"), IfName: "rx0", Addr: netip.MustParsePrefix("10.201.0.2/24")}
	netnstest.Pair(t, tx, rx, mtu)
	sc := &config.Scenario{
		Name: "test",
		Hosts: []*config.Host{
			{Name: "tx", Kind: config.HostNamespace, DelayedAck: true},
			{Name: "rx", Kind: config.HostNamespace, DelayedAck: true},
		},
		NICs: []*config.NIC{
			{Name: tx.IfName, Host: "tx", Peer: rx.IfName, Address: tx.Addr, MTU: mtu},
			{Name: rx.IfName, Host: "rx", Address: rx.Addr, MTU: mtu},
		},
	}
	return &pair{Naming: naming, Scenario: sc}
}

// setFeatures changes kernel features of an interface in a host's
// namespace and fails the test if the kernel did not keep them.
func (p *pair) setFeatures(t testing.TB, host, ifname string, feats map[string]bool) {
	t.Helper()
	if err := netnsfs.SetFeatures(p.Naming.HostNS(host), ifname, feats); err != nil {
		t.Fatalf("host %s: %v", host, err)
	}
}
