package inspect_test

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
	"github.com/tsolab/tsolab/provider/inspect"
)

// TestObserve reads two namespaces joined by a veth pair as they are: the
// devices, whose NIC each is, their state, MTU, addresses and offloads; a
// namespace that is gone is named with the error, not dropped.
func TestObserve(t *testing.T) {
	n := netnstest.Lab(t)
	tx, rx := n.HostNS("tx"), n.HostNS("rx")
	netnstest.Pair(t,
		netnsfs.End{NS: tx, IfName: "tx0", Addr: netip.MustParsePrefix("10.77.45.1/24")},
		netnsfs.End{NS: rx, IfName: "rx0", Addr: netip.MustParsePrefix("10.77.45.2/24")}, 9000)

	recorded := []provider.Resource{
		{Addr: provider.Addr{Kind: provider.KindHost, Name: "tx"}, Attrs: provider.Attrs{provider.AttrHostKind: "netns", provider.AttrNetNS: tx}},
		{Addr: provider.Addr{Kind: provider.KindHost, Name: "rx"}, Attrs: provider.Attrs{provider.AttrHostKind: "netns", provider.AttrNetNS: rx}},
		{Addr: provider.Addr{Kind: provider.KindHost, Name: "gone"}, Attrs: provider.Attrs{provider.AttrHostKind: "netns", provider.AttrNetNS: n.HostNS("gone")}},
		{Addr: provider.Addr{Kind: provider.KindNIC, Name: "tx0"}, Attrs: provider.Attrs{provider.AttrNetNS: tx, provider.AttrIfName: "tx0"}},
	}
	got := inspect.Observe(recorded)
	if len(got) != 3 {
		t.Fatalf("got %d namespaces, want 3 (tx, rx, gone): %+v", len(got), got)
	}
	type row struct {
		Name, NIC, Type string
		Up              bool
		MTU             int
		Addresses       []string
	}
	var rows []row
	for _, ifc := range got[0].Interfaces {
		rows = append(rows, row{ifc.Name, ifc.NIC, ifc.Type, ifc.Up, ifc.MTU, ifc.Addresses})
		if ifc.Offloads == nil || ifc.Error != "" {
			t.Errorf("%s: offloads %v, error %q: want them read", ifc.Name, ifc.Offloads, ifc.Error)
		}
	}
	want := []row{
		{"lo", "", "device", true, 65536, []string{"127.0.0.1/8", "::1/128"}},
		{"tx0", "nic.tx0", "veth", true, 9000, []string{"10.77.45.1/24"}},
	}
	// The kernel adds a link-local IPv6 address to tx0 when it comes up.
	for i := range rows {
		var v4 []string
		for _, a := range rows[i].Addresses {
			if p := netip.MustParsePrefix(a); !p.Addr().IsLinkLocalUnicast() {
				v4 = append(v4, a)
			}
		}
		rows[i].Addresses = v4
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("host.tx's interfaces (-want +got):\n%s", diff)
	}
	if got[0].Resource != "host.tx" || got[0].NetNS != tx {
		t.Errorf("first namespace %s %s, want host.tx %s", got[0].Resource, got[0].NetNS, tx)
	}
	if got[2].Resource != "host.gone" || got[2].Error == "" {
		t.Errorf("a namespace that is gone: %+v, want host.gone with an error", got[2])
	}
}
