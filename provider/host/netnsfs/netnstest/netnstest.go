// Package netnstest helps tests that need real network namespaces: it
// skips them with a reason where namespaces cannot be made (fails instead
// under TSOLAB_REQUIRE_NETNS=1), hands out unique namespace names and
// lab IDs, makes namespaces and veth pairs that are removed when the test
// ends, and checks that a test left no namespace behind.
package netnstest

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
)

// RequireEnv makes namespace tests fail instead of skip when set to 1.
const RequireEnv = "TSOLAB_REQUIRE_NETNS"

// Require skips t (or fails it under TSOLAB_REQUIRE_NETNS=1) unless this
// process can create network namespaces and bind them under /run/netns.
func Require(t testing.TB) {
	t.Helper()
	reason := ""
	switch {
	case os.Geteuid() != 0:
		reason = "not root: creating named network namespaces needs CAP_SYS_ADMIN and CAP_NET_ADMIN"
	default:
		if err := netnsfs.Scratch(func() error { return nil }); err != nil {
			reason = "cannot create a network namespace: " + err.Error()
		} else if err := os.MkdirAll(netnsfs.Dir, 0o755); err != nil {
			reason = "cannot create " + netnsfs.Dir + ": " + err.Error()
		}
	}
	if reason == "" {
		return
	}
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s=1 but %s", RequireEnv, reason)
	}
	t.Skip(reason)
}

var seq atomic.Int64

// LabID returns a lab ID unique to this process and call, so that the
// namespaces of its naming ("tsl.LABID.HOST") never collide with another
// test's or another run's.
func LabID(t testing.TB) string {
	return fmt.Sprintf("tt%d-%d", os.Getpid(), seq.Add(1))
}

// Owner is the state that owns the namespaces of the namings Naming, Lab
// and StandIn return (provider.Naming.Owner): provider calls made with
// them create namespaces marked as this state's.
const Owner = "netnstest-state"

// Naming returns the naming of a lab with a fresh ID (LabID), as the
// state Owner.
func Naming(t testing.TB) provider.Naming {
	n := provider.NewNaming(LabID(t))
	n.Owner = Owner
	return n
}

// CheckNoLeftovers registers a cleanup (run after the test's own
// cleanups, as it is registered first) that fails the test if any
// namespace whose name starts with prefix is still bound.
func CheckNoLeftovers(t testing.TB, prefix string) {
	t.Helper()
	checkPrefix(t, prefix)
	t.Cleanup(func() {
		left, err := netnsfs.List(prefix)
		if err != nil {
			t.Errorf("list namespaces: %v", err)
		}
		if len(left) > 0 {
			t.Errorf("namespaces left behind: %v", left)
			for _, n := range left {
				netnsfs.Remove(n)
			}
		}
	})
}

// StandIn makes a namespace that stands for "the machine's own" in tests of
// local hosts and adopted devices, so the real machine is never touched. It
// requires namespaces (see Require), returns the test's lab naming (Naming) and the
// stand-in's name, and removes it, and checks for leftovers, when t ends.
func StandIn(t testing.TB) (provider.Naming, string) {
	t.Helper()
	Require(t)
	n := Naming(t)
	stand := "tsltest." + n.LabID + ".machine"
	CheckNoLeftovers(t, "tsltest."+n.LabID+".")
	removeAtEnd(t, stand)
	if _, err := netnsfs.Create(stand); err != nil {
		t.Fatal(err)
	}
	return n, stand
}

// Lab requires namespaces (see Require) and returns the naming of a lab
// with a fresh ID (Naming), whose namespaces ("tsl.LABID.") must all be
// gone when t ends (CheckNoLeftovers).
func Lab(t testing.TB) provider.Naming {
	t.Helper()
	Require(t)
	n := Naming(t)
	CheckNoLeftovers(t, provider.NamespacePrefix+n.LabID+".")
	return n
}

// Namespace requires namespaces (see Require) and makes the named one
// (which must start with tsl. or tsltest) with lo up, or fails t; it is
// removed when t ends, even when t fails.
func Namespace(t testing.TB, name string) { MarkedNamespace(t, name, "") }

// MarkedNamespace is Namespace with the namespace marked (see
// netnsfs.CreateMarked): with provider.Naming.OwnerMark, the namespace of
// a lab host its state made.
func MarkedNamespace(t testing.TB, name, mark string) {
	t.Helper()
	Require(t)
	removeAtEnd(t, name)
	if _, err := netnsfs.CreateMarked(name, mark); err != nil {
		t.Fatal(err)
	}
	if err := netnsfs.LoopbackUp(name); err != nil {
		t.Fatal(err)
	}
}

// Pair requires namespaces (see Require) and makes namespaces a.NS and
// b.NS (each starting with tsl. or tsltest) joined by a veth pair with
// addresses (netnsfs.CreatePair), or fails t; both are removed, and the
// pair with them, when t ends, even when t fails.
func Pair(t testing.TB, a, b netnsfs.End, mtu int) {
	t.Helper()
	Require(t)
	removeAtEnd(t, a.NS)
	removeAtEnd(t, b.NS)
	if err := netnsfs.CreatePair(a, b, mtu); err != nil {
		t.Fatal(err)
	}
}

// removeAtEnd checks that name is a test namespace name and registers its
// removal, before it is made, so that it goes even if making it fails
// halfway.
func removeAtEnd(t testing.TB, name string) {
	t.Helper()
	checkPrefix(t, name)
	t.Cleanup(func() {
		if err := netnsfs.Remove(name); err != nil {
			t.Errorf("remove namespace: %v", err)
		}
	})
}

// checkPrefix fails t unless name starts with tsl. or tsltest.
func checkPrefix(t testing.TB, name string) {
	t.Helper()
	if !strings.HasPrefix(name, provider.NamespacePrefix) && !strings.HasPrefix(name, "tsltest") {
		t.Fatalf("test namespace name %q must start with tsl. or tsltest", name)
	}
}
