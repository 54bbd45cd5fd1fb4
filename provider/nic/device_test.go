package nic_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/safchain/ethtool"
	"github.com/vishvananda/netlink"

	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
	"github.com/tsolab/tsolab/provider/nic"
)

// TestAdoptDevice adopts a device on a local host. The calls run on a
// thread inside a test namespace that stands for the machine, with a veth
// there standing for the real NIC: the machine's own devices are never
// touched.
func TestAdoptDevice(t *testing.T) {
	n, stand := netnstest.StandIn(t)

	addr := provider.Addr{Kind: provider.KindNIC, Name: "uplink"}
	desired := provider.Attrs{
		"host": "me", "netns": "", "ifname": "eth9", "link": "device:eth9", "up": "true",
		"address": "10.82.0.1/24", "mtu": "9000", "offload.tso": "false", "offload.gro": "true",
	}
	err := netnsfs.Do(stand, func() error {
		if _, err := standInPort(); err != nil {
			return err
		}
		et, err := ethtool.NewEthtool()
		if err != nil {
			return err
		}
		defer et.Close()
		// This closure runs on netnsfs's goroutine: report failures with
		// t.Errorf and return, never t.Fatal.
		state := func() (mtu int, tso, gro bool, addrs int) {
			l, err := netlink.LinkByName("eth9")
			if err != nil {
				t.Errorf("eth9: %v", err)
				return
			}
			f, err := et.Features("eth9")
			if err != nil {
				t.Errorf("eth9 features: %v", err)
			}
			as, _ := netlink.AddrList(l, netlink.FAMILY_V4)
			return l.Attrs().MTU, f["tx-tcp-segmentation"], f["rx-gro"], len(as)
		}
		up := func() bool {
			l, err := netlink.LinkByName("eth9")
			if err != nil {
				t.Errorf("eth9: %v", err)
				return false
			}
			return l.Attrs().Flags&net.FlagUp != 0
		}
		origMTU, origTSO, origGRO, _ := state()
		origUp := up()

		ctx := context.Background()
		p := nic.New()
		if v := p.Validate(ctx, provider.ValidateRequest{Naming: n, Addr: addr, Desired: desired}); len(v.Diagnostics) > 0 {
			t.Errorf("Validate: %v", v.Diagnostics)
		}
		cr := p.Create(ctx, provider.CreateRequest{Naming: n, Addr: addr, Desired: desired})
		if cr.Diagnostics.HasErrors() {
			return fmt.Errorf("Create: %v", cr.Diagnostics)
		}
		want := desired.Clone()
		want["restore.mtu"] = strconv.Itoa(origMTU)
		want["restore.offload.tso"] = strconv.FormatBool(origTSO)
		want["restore.offload.gro"] = strconv.FormatBool(origGRO)
		want["restore.address"] = "10.82.0.1/24"
		want["restore.up"] = strconv.FormatBool(origUp)
		if diff := cmp.Diff(want, cr.New); diff != "" {
			t.Errorf("Create New (-want +got):\n%s", diff)
		}
		if mtu, tso, gro, _ := state(); mtu != 9000 || tso || !gro || !up() {
			t.Errorf("after Create: mtu %d tso %v gro %v up %v, want 9000 false true true", mtu, tso, gro, up())
		}
		if r := p.Read(ctx, provider.ReadRequest{Naming: n, Addr: addr, Recorded: cr.New}); r.Gone || !r.Actual.Equal(cr.New) {
			t.Errorf("Read: gone=%v actual %v, want %v", r.Gone, r.Actual, cr.New)
		}

		// The lab changes the MTU it manages: the original stays recorded,
		// not the MTU tsolab had set.
		other := desired.Clone()
		other["mtu"] = "4000"
		mr := p.Update(ctx, provider.UpdateRequest{Naming: n, Addr: addr, Prior: cr.New, Desired: other})
		if mr.Diagnostics.HasErrors() {
			return fmt.Errorf("Update mtu: %v", mr.Diagnostics)
		}
		if got := mr.New["restore.mtu"]; got != strconv.Itoa(origMTU) {
			t.Errorf("after an MTU update: restore.mtu %q, want the original %d", got, origMTU)
		}

		// The lab stops managing mtu and gro: they go back.
		less := desired.Clone()
		delete(less, "mtu")
		delete(less, "offload.gro")
		ur := p.Update(ctx, provider.UpdateRequest{Naming: n, Addr: addr, Prior: mr.New, Desired: less})
		if ur.Diagnostics.HasErrors() {
			return fmt.Errorf("Update: %v", ur.Diagnostics)
		}
		wantU := less.Clone()
		wantU["restore.offload.tso"] = strconv.FormatBool(origTSO)
		wantU["restore.address"] = "10.82.0.1/24"
		wantU["restore.up"] = strconv.FormatBool(origUp)
		if diff := cmp.Diff(wantU, ur.New); diff != "" {
			t.Errorf("Update New (-want +got):\n%s", diff)
		}
		if mtu, _, gro, _ := state(); mtu != origMTU || gro != origGRO {
			t.Errorf("after Update: mtu %d gro %v, want the originals %d %v", mtu, gro, origMTU, origGRO)
		}

		if dr := p.Delete(ctx, provider.DeleteRequest{Naming: n, Addr: addr, Recorded: ur.New}); dr.Diagnostics.HasErrors() {
			return fmt.Errorf("Delete: %v", dr.Diagnostics)
		}
		mtu, tso, gro, addrs := state() // state fails the test if eth9 is gone
		if mtu != origMTU || tso != origTSO || gro != origGRO || addrs != 0 {
			t.Errorf("after Delete: mtu %d tso %v gro %v, %d addresses; want %d %v %v, none", mtu, tso, gro, addrs, origMTU, origTSO, origGRO)
		}
		// The stand-in starts down, as an unused port may be: tsolab
		// brought it up and must put it down again.
		if up() != origUp {
			t.Errorf("after Delete: up %v, want the original %v", up(), origUp)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMoveDevice adopts a device of the machine on a namespace host: it
// moves into the host's namespace, configured as declared, and Delete
// gives it back to the machine as it was, addresses and up state
// included (a move between namespaces drops both). As in
// TestAdoptDevice, a test namespace stands for the machine and a veth end
// there for the real port.
func TestMoveDevice(t *testing.T) {
	n, stand, hostNS := moveLab(t)

	addr := provider.Addr{Kind: provider.KindNIC, Name: "port1"}
	desired := movedPort(hostNS)
	err := netnsfs.Do(stand, func() error {
		l, err := standInPort()
		if err != nil {
			return err
		}
		if err := netlink.AddrAdd(l, &netlink.Addr{IPNet: netlink.NewIPNet(net.ParseIP("10.83.0.1").To4())}); err != nil {
			return err
		}
		if err := netlink.LinkSetUp(l); err != nil {
			return err
		}
		et, err := ethtool.NewEthtool()
		if err != nil {
			return err
		}
		defer et.Close()
		feats, err := et.Features("eth9")
		if err != nil {
			return err
		}
		origMTU, origTSO := l.Attrs().MTU, feats["tx-tcp-segmentation"]

		ctx := context.Background()
		p := nic.New()
		if v := p.Validate(ctx, provider.ValidateRequest{Naming: n, Addr: addr, Desired: desired}); len(v.Diagnostics) > 0 {
			t.Errorf("Validate: %v", v.Diagnostics)
		}
		cr := p.Create(ctx, provider.CreateRequest{Naming: n, Addr: addr, Desired: desired})
		if len(cr.Diagnostics) > 0 {
			return fmt.Errorf("Create: %v", cr.Diagnostics)
		}
		want := desired.Clone()
		want["restore.mtu"] = strconv.Itoa(origMTU)
		want["restore.offload.tso"] = strconv.FormatBool(origTSO)
		want["restore.address"] = "10.84.0.1/24"
		want["restore.addresses"] = "10.83.0.1/32"
		want["restore.up"] = "true"
		if diff := cmp.Diff(want, cr.New); diff != "" {
			t.Errorf("Create New (-want +got):\n%s", diff)
		}
		if _, err := netlink.LinkByName("eth9"); err == nil {
			t.Errorf("eth9 is still in the machine's namespace after Create")
		}
		err = netnsfs.Do(hostNS, func() error {
			l, err := netlink.LinkByName("eth9")
			if err != nil {
				return err
			}
			as, _ := netlink.AddrList(l, netlink.FAMILY_V4)
			if l.Attrs().MTU != 9000 || l.Attrs().Flags&net.FlagUp == 0 || len(as) != 1 || as[0].IPNet.String() != "10.84.0.1/24" {
				t.Errorf("eth9 in %s: mtu %d, flags %v, addresses %v; want 9000, up, 10.84.0.1/24", hostNS, l.Attrs().MTU, l.Attrs().Flags, as)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("eth9 in the host's namespace: %w", err)
		}
		if r := p.Read(ctx, provider.ReadRequest{Naming: n, Addr: addr, Recorded: cr.New}); r.Gone || !r.Actual.Equal(cr.New) {
			t.Errorf("Read: gone=%v actual %v, want %v", r.Gone, r.Actual, cr.New)
		}

		if dr := p.Delete(ctx, provider.DeleteRequest{Naming: n, Addr: addr, Recorded: cr.New}); len(dr.Diagnostics) > 0 {
			return fmt.Errorf("Delete: %v", dr.Diagnostics)
		}
		l, err = netlink.LinkByName("eth9")
		if err != nil {
			return fmt.Errorf("eth9 did not come back to the machine's namespace: %w", err)
		}
		feats, err = et.Features("eth9")
		if err != nil {
			return err
		}
		as, _ := netlink.AddrList(l, netlink.FAMILY_V4)
		if l.Attrs().MTU != origMTU || feats["tx-tcp-segmentation"] != origTSO || l.Attrs().Flags&net.FlagUp == 0 ||
			len(as) != 1 || as[0].IPNet.String() != "10.83.0.1/32" {
			t.Errorf("after Delete: mtu %d tso %v flags %v addresses %v; want %d %v up 10.83.0.1/32",
				l.Attrs().MTU, feats["tx-tcp-segmentation"], l.Attrs().Flags, as, origMTU, origTSO)
		}

		// A port that carries the machine's default route is refused:
		// moving it would cut the machine off.
		if err := netlink.RouteAdd(&netlink.Route{LinkIndex: l.Attrs().Index, Scope: netlink.SCOPE_LINK, Dst: &net.IPNet{IP: net.IPv4zero, Mask: net.CIDRMask(0, 32)}}); err != nil {
			return fmt.Errorf("default route: %w", err)
		}
		v := p.Validate(ctx, provider.ValidateRequest{Naming: n, Addr: addr, Desired: desired})
		if got := summaries(v.Diagnostics); len(got) != 1 || !strings.Contains(got[0], "carries this machine's default route") {
			t.Errorf("Validate with the default route on eth9: %v, want one error saying it carries the default route", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// An apply interrupted after it moved the device but before the state
// recorded the device's originals leaves it in the host's namespace:
// Create adopts it there with a warning, and Delete still moves it home.
func TestMoveDeviceInterrupted(t *testing.T) {
	n, stand, hostNS := moveLab(t)
	addr := provider.Addr{Kind: provider.KindNIC, Name: "port1"}
	desired := provider.Attrs{"host": "h", "netns": hostNS, "ifname": "eth9", "link": "device:eth9", "address": "10.84.0.1/24"}
	err := netnsfs.Do(stand, func() error {
		l, err := standInPort()
		if err != nil {
			return err
		}
		h, err := netnsfs.Open(hostNS)
		if err != nil {
			return err
		}
		defer h.Close()
		if err := netlink.LinkSetNsFd(l, int(h)); err != nil {
			return err
		}
		ctx := context.Background()
		p := nic.New()
		cr := p.Create(ctx, provider.CreateRequest{Naming: n, Addr: addr, Desired: desired})
		if cr.Diagnostics.HasErrors() || len(cr.Diagnostics) != 1 || !strings.Contains(cr.Diagnostics[0].Summary, "interrupted") {
			t.Errorf("Create of a device already moved: %v, want one warning about the interrupted apply", cr.Diagnostics)
		}
		if dr := p.Delete(ctx, provider.DeleteRequest{Naming: n, Addr: addr, Recorded: cr.New}); len(dr.Diagnostics) > 0 {
			return fmt.Errorf("Delete: %v", dr.Diagnostics)
		}
		if _, err := netlink.LinkByName("eth9"); err != nil {
			t.Errorf("eth9 did not come back to the machine's namespace: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// moveLab makes a namespace standing for the machine and a host's
// namespace to move its port into; both go when t ends.
func moveLab(t *testing.T) (n provider.Naming, stand, hostNS string) {
	n, stand = netnstest.StandIn(t)
	hostNS = n.HostNS("h")
	netnstest.MarkedNamespace(t, hostNS, n.OwnerMark())
	return n, stand, hostNS
}

// standInPort makes, in the calling thread's namespace (the stand-in for
// the machine), a veth eth9 (its peer eth9p) standing for a real port.
func standInPort() (netlink.Link, error) {
	a := netlink.NewLinkAttrs()
	a.Name = "eth9"
	if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: a, PeerName: "eth9p", PeerTxQLen: -1}); err != nil {
		return nil, err
	}
	return netlink.LinkByName("eth9")
}

// A destroy interrupted after it moved the device home but before it gave
// the device its settings back leaves it in the machine's namespace with
// the lab's MTU and offloads: Delete finds it there (not in the host's
// namespace, so release did not run) and restores them there.
func TestMoveDeviceHomeAlready(t *testing.T) {
	n, stand, hostNS := moveLab(t)
	addr := provider.Addr{Kind: provider.KindNIC, Name: "port1"}
	desired := movedPort(hostNS)
	err := netnsfs.Do(stand, func() error {
		if _, err := standInPort(); err != nil {
			return err
		}
		origMTU, origTSO, err := mtuTSO("eth9")
		if err != nil {
			return err
		}
		if origMTU == 9000 || !origTSO {
			return fmt.Errorf("stand-in port starts with mtu %d, tso %v: the test needs it to differ from the lab's 9000, false", origMTU, origTSO)
		}
		ctx := context.Background()
		p := nic.New()
		cr := p.Create(ctx, provider.CreateRequest{Naming: n, Addr: addr, Desired: desired})
		if len(cr.Diagnostics) > 0 {
			return fmt.Errorf("Create: %v", cr.Diagnostics)
		}
		// The interrupted destroy: the device is home, with the lab's
		// MTU and offloads still on it.
		home, err := netnsfs.Open(stand)
		if err != nil {
			return err
		}
		defer home.Close()
		err = netnsfs.Do(hostNS, func() error {
			l, err := netlink.LinkByName("eth9")
			if err != nil {
				return err
			}
			return netlink.LinkSetNsFd(l, int(home))
		})
		if err != nil {
			return fmt.Errorf("move eth9 home by hand: %w", err)
		}
		if mtu, tso, err := mtuTSO("eth9"); err != nil || mtu != 9000 || tso {
			return fmt.Errorf("eth9 at home before Delete: mtu %d tso %v (%v); want it there with 9000, false", mtu, tso, err)
		}

		if dr := p.Delete(ctx, provider.DeleteRequest{Naming: n, Addr: addr, Recorded: cr.New}); len(dr.Diagnostics) > 0 {
			return fmt.Errorf("Delete: %v", dr.Diagnostics)
		}
		mtu, tso, err := mtuTSO("eth9")
		if err != nil {
			return err
		}
		if mtu != origMTU || tso != origTSO {
			t.Errorf("after Delete: mtu %d tso %v; want %d %v", mtu, tso, origMTU, origTSO)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// movedPort is the stand-in port eth9 moved into host h's namespace with
// an address, MTU 9000 and TSO off.
func movedPort(hostNS string) provider.Attrs {
	return provider.Attrs{
		"host": "h", "netns": hostNS, "ifname": "eth9", "link": "device:eth9", "up": "true",
		"address": "10.84.0.1/24", "mtu": "9000", "offload.tso": "false",
	}
}

// mtuTSO reads a device's MTU and TSO state in the calling thread's
// namespace.
func mtuTSO(name string) (int, bool, error) {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return 0, false, err
	}
	et, err := ethtool.NewEthtool()
	if err != nil {
		return 0, false, err
	}
	defer et.Close()
	feats, err := et.Features(name)
	if err != nil {
		return 0, false, err
	}
	return l.Attrs().MTU, feats["tx-tcp-segmentation"], nil
}
