package nic_test

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vishvananda/netlink"

	"github.com/tsolab/tsolab/provider"
)

// TestRefreshReadsShareAPortDump reads three NICs of one switch as a
// refresh does, at once and with one snapshot (the ports come from one
// dump of the switch's links), after one NIC's port drifted and another's
// was given another alias by hand: each reads as a read of its own, with
// no snapshot, reads it (the same, the drift, gone).
func TestRefreshReadsShareAPortDump(t *testing.T) {
	f := newFixture(t)
	swNS := f.addSwitch("sw")
	recs := map[string]provider.Attrs{}
	for i, h := range []string{"a", "b", "c"} {
		f.addHost(h)
		name := h + "0"
		recs[name] = f.mustNIC(name, f.switchNIC(name, h, "sw", provider.Attrs{"address": "10.79.2." + string(rune('1'+i)) + "/24", "mtu": "1400"}))
	}
	byHand(t, swNS, provider.PortName("b0"), func(h *netlink.Handle, l netlink.Link) error {
		if err := h.LinkSetDown(l); err != nil {
			return err
		}
		return h.LinkSetMTU(l, 1300)
	})
	byHand(t, swNS, provider.PortName("c0"), func(h *netlink.Handle, l netlink.Link) error {
		return h.LinkSetAlias(l, "not tsolab's")
	})
	alone := map[string]provider.ReadResponse{}
	for name, rec := range recs {
		alone[name] = f.read(name, rec)
	}
	drifted := recs["b0"].Clone()
	drifted["port.up"] = "false"
	drifted["port.mtu"] = "1300"
	want := map[string]provider.Attrs{"a0": recs["a0"], "b0": drifted, "c0": nil}
	for name, r := range alone {
		if r.Diagnostics.HasErrors() || r.Gone != (want[name] == nil) || !r.Actual.Equal(want[name]) {
			t.Errorf("Read of %s alone: gone=%v %v actual %v, want %v", name, r.Gone, r.Diagnostics, r.Actual, want[name])
		}
	}

	snap := provider.NewSnapshot()
	shared := map[string]provider.ReadResponse{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, rec := range recs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := f.nic.Read(t.Context(), provider.ReadRequest{Naming: f.n, Addr: provider.Addr{Kind: provider.KindNIC, Name: name}, Recorded: rec, Snapshot: snap})
			mu.Lock()
			shared[name] = r
			mu.Unlock()
		}()
	}
	wg.Wait()
	for name, r := range shared {
		a := alone[name]
		if r.Gone != a.Gone || !r.Actual.Equal(a.Actual) {
			t.Errorf("Read of %s with a snapshot: gone=%v actual %v; alone: gone=%v actual %v\n%s", name, r.Gone, r.Actual, a.Gone, a.Actual, cmp.Diff(a.Actual, r.Actual))
		}
	}
}
