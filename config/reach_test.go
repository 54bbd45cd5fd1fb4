package config

import (
	"net/netip"
	"testing"
)

func TestRoute(t *testing.T) {
	pfx := netip.MustParsePrefix
	sc := &Scenario{NICs: []*NIC{
		// tx has two NICs on switch sw, one in another subnet, and one
		// NIC in rx's subnet that is linked elsewhere.
		{Name: "tx-other", Host: "tx", Connect: "sw", Address: pfx("10.9.0.1/24")},
		{Name: "tx-far", Host: "tx", Connect: "far", Address: pfx("10.1.0.7/24")},
		{Name: "tx-sw", Host: "tx", Connect: "sw", Address: pfx("10.1.0.1/24")},
		{Name: "rx-sw", Host: "rx", Connect: "sw", Address: pfx("10.1.0.2/24")},
		// a pair without addresses, as the model's own tests write them
		{Name: "tx-p", Host: "tx", Peer: "rx-p"},
		{Name: "rx-p", Host: "rx"},
		// adopted devices: the machine's routing decides
		{Name: "tx-dev", Host: "tx", Device: "eth1", Address: pfx("10.2.0.1/24")},
		{Name: "rx-dev", Host: "rx", Device: "eth2", Address: pfx("10.2.0.2/24")},
		{Name: "rx-dev2", Host: "rx", Device: "eth3", Address: pfx("192.0.2.1/24")},
		// linked to nothing
		{Name: "rx-lone", Host: "rx", Address: pfx("10.1.0.3/24")},
	}}
	for _, tt := range []struct{ client, server, want string }{
		{"tx", "rx-sw", "tx-sw"},      // on the segment and in the subnet, not merely either
		{"tx", "rx-p", "tx-p"},        // no address: the client's NIC on the pair
		{"rx", "tx-p", "rx-p"},        // a pair reaches both ways
		{"tx", "rx-dev", "tx-dev"},    // a device: the client's NIC in its subnet
		{"tx", "rx-dev2", "tx-other"}, // else the client's first NIC with an address
		{"tx", "rx-lone", ""},
		{"nobody", "rx-sw", ""},
	} {
		got := sc.Route(tt.client, sc.NIC(tt.server))
		name := ""
		if got != nil {
			name = got.Name
		}
		if name != tt.want {
			t.Errorf("Route(%s, nic.%s) = %q, want %q", tt.client, tt.server, name, tt.want)
		}
	}
}

func TestSegments(t *testing.T) {
	sc := &Scenario{NICs: []*NIC{
		{Name: "a", Host: "h1", Connect: "sw"},
		{Name: "p", Host: "h1", Peer: "q"},
		{Name: "b", Host: "h2", Connect: "sw"},
		{Name: "q", Host: "h2"},
		{Name: "d", Host: "h2", Device: "eth0"},
	}}
	segs, byNIC := sc.Segments()
	if len(segs) != 2 || segs[0].Switch != "sw" || len(segs[0].NICs) != 2 || segs[1].Switch != "" || segs[1].NICs[0].Name != "p" || segs[1].NICs[1].Name != "q" {
		t.Fatalf("Segments = %+v, want switch sw with a, b, then the pair p - q", segs)
	}
	if byNIC["b"] != segs[0] || byNIC["q"] != segs[1] || byNIC["d"] != nil {
		t.Errorf("segment of b, q, d = %p %p %p, want %p %p nil", byNIC["b"], byNIC["q"], byNIC["d"], segs[0], segs[1])
	}
}
