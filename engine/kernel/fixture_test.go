package kernel_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"testing"

	"github.com/safchain/ethtool"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/provider"
)

// requireNetAdmin skips a test that needs CAP_NET_ADMIN when the process
// is not root, and fails it instead under TSOLAB_REQUIRE_NETNS=1.
func requireNetAdmin(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("TSOLAB_REQUIRE_NETNS") == "1" {
		t.Fatal("TSOLAB_REQUIRE_NETNS=1 but not root: network namespaces need CAP_NET_ADMIN")
	}
	t.Skip("needs root (CAP_NET_ADMIN) to create network namespaces; run as root or set TSOLAB_REQUIRE_NETNS=1 to make this a failure")
}

// pair is two namespaces, tx and rx, joined by a veth pair tx0 <-> rx0
// (10.201.0.1/24 and 10.201.0.2/24), described as a scenario.
type pair struct {
	Naming   provider.Naming
	Scenario *config.Scenario
}

// inNS runs fn on a thread inside ns; the thread is never unlocked.
func inNS(ns string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		h, err := netns.GetFromName(ns)
		if err != nil {
			errc <- err
			return
		}
		defer h.Close()
		if err := netns.Set(h); err != nil {
			errc <- err
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// newNamespace creates a named namespace with lo up, deleted at cleanup.
func newNamespace(t testing.TB, name string) netns.NsHandle {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // the thread ends in the new namespace: never unlocked
		h, err := netns.NewNamed(name)
		if err == nil {
			h.Close()
		}
		errc <- err
	}()
	if err := <-errc; err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := netns.DeleteNamed(name); err != nil {
			t.Errorf("delete namespace %s: %v", name, err)
		}
	})
	h, err := netns.GetFromName(name)
	if err != nil {
		t.Fatalf("open namespace %s: %v", name, err)
	}
	t.Cleanup(func() { h.Close() })
	nl, err := netlink.NewHandleAt(h)
	if err != nil {
		t.Fatalf("netlink in %s: %v", name, err)
	}
	defer nl.Close()
	lo, err := nl.LinkByName("lo")
	if err != nil {
		t.Fatalf("lo in %s: %v", name, err)
	}
	if err := nl.LinkSetUp(lo); err != nil {
		t.Fatalf("lo up in %s: %v", name, err)
	}
	return h
}

// newPair builds the two namespaces and the veth pair with the given MTU.
func newPair(t testing.TB, mtu int) *pair {
	t.Helper()
	requireNetAdmin(t)
	var b [4]byte
	rand.Read(b[:])
	naming := provider.NewNaming(fmt.Sprintf("kt%d%s", os.Getpid()%100000, hex.EncodeToString(b[:])))
	txNS, rxNS := naming.HostNS("tx"), naming.HostNS("rx")
	txh := newNamespace(t, txNS)
	rxh := newNamespace(t, rxNS)
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: "tx0", MTU: mtu, Namespace: netlink.NsFd(txh)},
		PeerName:      "rx0",
		PeerNamespace: netlink.NsFd(rxh),
	}
	if err := netlink.LinkAdd(veth); err != nil {
		t.Fatalf("create veth tx0/rx0 in %s/%s: %v", txNS, rxNS, err)
	}
	addrs := map[string]netip.Prefix{
		"tx0": netip.MustParsePrefix("10.201.0.1/24"),
		"rx0": netip.MustParsePrefix("10.201.0.2/24"),
	}
	for _, side := range []struct {
		h    netns.NsHandle
		name string
	}{{txh, "tx0"}, {rxh, "rx0"}} {
		nl, err := netlink.NewHandleAt(side.h)
		if err != nil {
			t.Fatal(err)
		}
		l, err := nl.LinkByName(side.name)
		if err != nil {
			t.Fatalf("%s: %v", side.name, err)
		}
		if mtu > 0 {
			if err := nl.LinkSetMTU(l, mtu); err != nil {
				t.Fatalf("%s mtu %d: %v", side.name, mtu, err)
			}
		}
		a, _ := netlink.ParseAddr(addrs[side.name].String())
		if err := nl.AddrAdd(l, a); err != nil {
			t.Fatalf("%s address: %v", side.name, err)
		}
		if err := nl.LinkSetUp(l); err != nil {
			t.Fatalf("%s up: %v", side.name, err)
		}
		nl.Close()
	}
	sc := &config.Scenario{
		Name: "test",
		Hosts: []*config.Host{
			{Name: "tx", Kind: config.HostNamespace, DelayedAck: true},
			{Name: "rx", Kind: config.HostNamespace, DelayedAck: true},
		},
		NICs: []*config.NIC{
			{Name: "tx0", Host: "tx", Peer: "rx0", Address: addrs["tx0"], MTU: mtu},
			{Name: "rx0", Host: "rx", Address: addrs["rx0"], MTU: mtu},
		},
	}
	return &pair{Naming: naming, Scenario: sc}
}

// setFeatures changes kernel features of an interface in a host's
// namespace and fails the test if the kernel did not keep them.
func (p *pair) setFeatures(t testing.TB, host, ifname string, feats map[string]bool) {
	t.Helper()
	err := inNS(p.Naming.HostNS(host), func() error {
		e, err := ethtool.NewEthtool()
		if err != nil {
			return err
		}
		defer e.Close()
		if err := e.Change(ifname, feats); err != nil {
			return err
		}
		got, err := e.Features(ifname)
		if err != nil {
			return err
		}
		for f, want := range feats {
			if got[f] != want {
				return fmt.Errorf("feature %s: got %v after setting it, want %v", f, got[f], want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("ethtool -K %s %v in host %s: %v", ifname, feats, host, err)
	}
}
