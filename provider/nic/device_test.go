package nic_test

import (
	"context"
	"fmt"
	"strconv"
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
		"host": "me", "netns": "", "ifname": "eth9", "link": "device:eth9",
		"address": "10.82.0.1/24", "mtu": "9000", "offload.tso": "false", "offload.gro": "true",
	}
	err := netnsfs.Do(stand, func() error {
		a := netlink.NewLinkAttrs()
		a.Name = "eth9"
		if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: a, PeerName: "eth9p", PeerTxQLen: -1}); err != nil {
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
		origMTU, origTSO, origGRO, _ := state()

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
		if diff := cmp.Diff(want, cr.New); diff != "" {
			t.Errorf("Create New (-want +got):\n%s", diff)
		}
		if mtu, tso, gro, _ := state(); mtu != 9000 || tso || !gro {
			t.Errorf("after Create: mtu %d tso %v gro %v, want 9000 false true", mtu, tso, gro)
		}
		if r := p.Read(ctx, provider.ReadRequest{Naming: n, Addr: addr, Recorded: cr.New}); r.Gone || !r.Actual.Equal(cr.New) {
			t.Errorf("Read: gone=%v actual %v, want %v", r.Gone, r.Actual, cr.New)
		}

		// The lab stops managing mtu and gro: they go back.
		less := desired.Clone()
		delete(less, "mtu")
		delete(less, "offload.gro")
		ur := p.Update(ctx, provider.UpdateRequest{Naming: n, Addr: addr, Prior: cr.New, Desired: less})
		if ur.Diagnostics.HasErrors() {
			return fmt.Errorf("Update: %v", ur.Diagnostics)
		}
		wantU := less.Clone()
		wantU["restore.offload.tso"] = strconv.FormatBool(origTSO)
		wantU["restore.address"] = "10.82.0.1/24"
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
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
