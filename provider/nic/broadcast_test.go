package nic_test

import (
	"net"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
)

// TestBroadcastOfAddress: an IPv4 address gets its subnet's broadcast
// address, as ip addr add ... brd + does, except on a /31 point-to-point
// link (RFC 3021: both addresses are hosts; a broadcast there would be
// the peer) and a /32; an IPv6 address has none.
func TestBroadcastOfAddress(t *testing.T) {
	f := newFixture(t)
	nsX, nsY := f.addHost("x"), f.addHost("y")
	f.mustNIC("x0", provider.Attrs{
		"host": "x", "netns": nsX, "ifname": "x0", "link": "peer:y0",
		"peer_netns": nsY, "peer_ifname": "y0", "address": "10.78.1.0/31",
	})
	f.mustNIC("y0", provider.Attrs{"host": "y", "netns": nsY, "ifname": "y0", "link": "peer-of:x0", "address": "10.78.2.1/24"})
	for _, tc := range []struct {
		ns, link string
		want     net.IP // nil: no broadcast
	}{
		{nsX, "x0", nil},
		{nsY, "y0", net.IPv4(10, 78, 2, 255)},
	} {
		var addrs []netlink.Addr
		err := netnsfs.Do(tc.ns, func() error {
			l, err := netlink.LinkByName(tc.link)
			if err != nil {
				return err
			}
			addrs, err = netlink.AddrList(l, netlink.FAMILY_V4)
			return err
		})
		if err != nil || len(addrs) != 1 {
			t.Fatalf("%s: addresses %v, %v; want one", tc.link, addrs, err)
		}
		if got := addrs[0].Broadcast; !got.Equal(tc.want) && !(got == nil && tc.want == nil) {
			t.Errorf("%s %s: broadcast %v, want %v", tc.link, addrs[0].IPNet, got, tc.want)
		}
	}
}
