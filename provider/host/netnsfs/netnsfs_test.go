package netnsfs_test

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/safchain/ethtool"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
)

func inode(path string) (uint64, error) {
	var st unix.Stat_t
	err := unix.Stat(path, &st)
	return st.Ino, err
}

func TestCreateDoRemove(t *testing.T) {
	netnstest.Require(t)
	prefix := "tsltest." + netnstest.LabID(t) + "."
	netnstest.CheckNoLeftovers(t, prefix)
	name := prefix + "a"
	t.Cleanup(func() { netnsfs.Remove(name) })

	steps := []struct {
		what        string
		do          func() (bool, error)
		wantCreated bool
		wantExists  bool
	}{
		{"create", func() (bool, error) { return netnsfs.Create(name) }, true, true},
		{"create again", func() (bool, error) { return netnsfs.Create(name) }, false, true},
		{"remove", func() (bool, error) { return false, netnsfs.Remove(name) }, false, false},
		{"remove again", func() (bool, error) { return false, netnsfs.Remove(name) }, false, false},
	}
	for _, st := range steps {
		created, err := st.do()
		if err != nil {
			t.Fatalf("%s: %v", st.what, err)
		}
		if created != st.wantCreated {
			t.Errorf("%s: created = %v, want %v", st.what, created, st.wantCreated)
		}
		if ok, err := netnsfs.Exists(name); ok != st.wantExists || err != nil {
			t.Errorf("%s: Exists = %v, %v; want %v", st.what, ok, err, st.wantExists)
		}
	}
}

// TestCreateCompletesLeftFile: an empty file where the mount should be
// (a Create killed before bind-mounting) is completed, not refused.
func TestCreateCompletesLeftFile(t *testing.T) {
	netnstest.Require(t)
	prefix := "tsltest." + netnstest.LabID(t) + "."
	netnstest.CheckNoLeftovers(t, prefix)
	name := prefix + "half"
	t.Cleanup(func() { netnsfs.Remove(name) })
	if err := os.WriteFile(netnsfs.Path(name), nil, 0o444); err != nil {
		t.Fatal(err)
	}
	if ok, _ := netnsfs.Exists(name); ok {
		t.Fatal("an empty file counts as a namespace")
	}
	created, err := netnsfs.Create(name)
	if err != nil || !created {
		t.Fatalf("Create over a left file: created=%v err=%v, want true, nil", created, err)
	}
	if ok, _ := netnsfs.Exists(name); !ok {
		t.Error("namespace missing after Create")
	}
}

// TestMountPointsShareAnInode: the namespaces a process binds are bound
// on names of one file (hard links: no inode each), every name removed
// with its namespace, and a namespace made after every name went is
// bound on a file of its own again.
func TestMountPointsShareAnInode(t *testing.T) {
	netnstest.Require(t)
	prefix := "tsltest." + netnstest.LabID(t) + "."
	netnstest.CheckNoLeftovers(t, prefix)
	names := []string{prefix + "m1", prefix + "m2", prefix + "m3"}
	for _, n := range names {
		t.Cleanup(func() { netnsfs.Remove(n) })
		if created, err := netnsfs.Create(n); err != nil || !created {
			t.Fatalf("create %s: created=%v err=%v", n, created, err)
		}
	}
	// Unbound (a Leftover, as a kill between the steps of Remove leaves
	// it), a name shows the file under the mount.
	file := func(n string) unix.Stat_t {
		t.Helper()
		if err := unix.Unmount(netnsfs.Path(n), unix.MNT_DETACH); err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		if err := unix.Stat(netnsfs.Path(n), &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	first := file(names[0])
	if first.Nlink < uint64(len(names)) {
		t.Errorf("%s's file has %d links, want at least %d", names[0], first.Nlink, len(names))
	}
	for _, n := range names[1:] {
		if st := file(n); st.Ino != first.Ino || st.Dev != first.Dev {
			t.Errorf("%s is bound on inode %d, %s on %d: want one file", n, st.Ino, names[0], first.Ino)
		}
	}
	// Every name goes (the anchor's inode with the last one, the handle
	// the process keeps aside); the next namespace gets a file again.
	for _, n := range names {
		if err := netnsfs.Remove(n); err != nil {
			t.Fatal(err)
		}
		if left, err := netnsfs.Leftover(n); left || err != nil {
			t.Errorf("after Remove %s: Leftover = %v, %v", n, left, err)
		}
	}
	if created, err := netnsfs.Create(names[0]); err != nil || !created {
		t.Fatalf("create %s again: created=%v err=%v", names[0], created, err)
	}
	if ok, err := netnsfs.Exists(names[0]); !ok || err != nil {
		t.Errorf("Exists %s after every name went = %v, %v", names[0], ok, err)
	}
}

func TestDoRunsInsideAndComesBack(t *testing.T) {
	netnstest.Require(t)
	prefix := "tsltest." + netnstest.LabID(t) + "."
	netnstest.CheckNoLeftovers(t, prefix)
	name := prefix + "in"
	t.Cleanup(func() { netnsfs.Remove(name) })
	if _, err := netnsfs.Create(name); err != nil {
		t.Fatal(err)
	}
	want, err := inode(netnsfs.Path(name))
	if err != nil {
		t.Fatal(err)
	}
	var got uint64
	err = netnsfs.Do(name, func() error {
		got, err = inode("/proc/thread-self/ns/net")
		return err
	})
	if err != nil || got != want {
		t.Errorf("inside Do: namespace inode %d (err %v), want %d", got, err, want)
	}
	// A failing function's error comes back, and so does a Goexit.
	errBoom := errors.New("boom")
	if err := netnsfs.Do(name, func() error { return errBoom }); !errors.Is(err, errBoom) {
		t.Errorf("Do error = %v, want %v", err, errBoom)
	}
	// No thread of this process is left in the namespace.
	for range 20 {
		netnsfs.Do(name, func() error { return nil })
	}
	// (Compared with the namespace, not with the process's home: a thread
	// an earlier run's Goexit left parked elsewhere is not Do's doing.)
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		if ino, err := inode("/proc/self/task/" + task.Name() + "/ns/net"); err == nil && ino == want {
			t.Errorf("thread %s is still in namespace %s (%d)", task.Name(), name, want)
		}
	}
	// Last, as its thread is discarded (on the main thread the runtime
	// parks it for good rather than ending it): a Goexit does not hang Do.
	if err := netnsfs.Do(name, func() error { runtime.Goexit(); return nil }); err == nil {
		t.Error("Do with runtime.Goexit: nil error, want one")
	}
}

func TestNamesThatEscapeAreRefused(t *testing.T) {
	for _, name := range []string{"", ".", "..", "a/b", "../etc"} {
		if _, err := netnsfs.Create(name); err == nil {
			t.Errorf("Create(%q): nil error, want a refusal", name)
		}
		if err := netnsfs.Remove(name); err == nil {
			t.Errorf("Remove(%q): nil error, want a refusal", name)
		}
	}
}

// TestCreatePair: the pair carries TCP between its addresses, each end in
// its own namespace with the MTU asked for and lo up.
func TestCreatePair(t *testing.T) {
	n := netnstest.Lab(t)
	a := netnsfs.End{NS: n.HostNS("a"), IfName: "a0", Addr: netip.MustParsePrefix("10.204.0.1/24")}
	b := netnsfs.End{NS: n.HostNS("b"), IfName: "b0", Addr: netip.MustParsePrefix("10.204.0.2/24")}
	netnstest.Pair(t, a, b, 9000)

	for _, end := range []netnsfs.End{a, b} {
		h, err := netnsfs.Netlink(end.NS)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		for _, want := range []struct {
			name string
			mtu  int
		}{{end.IfName, 9000}, {"lo", 65536}} {
			l, err := h.LinkByName(want.name)
			if err != nil {
				t.Fatalf("%s in %s: %v", want.name, end.NS, err)
			}
			if got := l.Attrs(); got.MTU != want.mtu || got.OperState == netlink.OperDown {
				t.Errorf("%s in %s: mtu %d, state %v; want mtu %d, not down", want.name, end.NS, got.MTU, got.OperState, want.mtu)
			}
		}
	}
	var ln net.Listener
	if err := netnsfs.Do(b.NS, func() (err error) {
		ln, err = net.Listen("tcp4", netip.AddrPortFrom(b.Addr.Addr(), 0).String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var c net.Conn
	if err := netnsfs.Do(a.NS, func() (err error) {
		c, err = net.DialTimeout("tcp4", ln.Addr().String(), 5*time.Second)
		return err
	}); err != nil {
		t.Fatalf("dial %s from %s: %v", ln.Addr(), a.NS, err)
	}
	c.Close()
}

// TestCreatePairRemovesWhatItMadeOnError: a pair that cannot be made (an
// interface name longer than the kernel's 15 bytes) leaves no namespace.
func TestCreatePairRemovesWhatItMadeOnError(t *testing.T) {
	n := netnstest.Lab(t)
	a := netnsfs.End{NS: n.HostNS("a"), IfName: "a-name-far-too-long"}
	b := netnsfs.End{NS: n.HostNS("b"), IfName: "b0"}
	if err := netnsfs.CreatePair(a, b, 0); err == nil {
		t.Fatal("CreatePair with a 19-byte interface name: nil error, want one")
	}
	for _, ns := range []string{a.NS, b.NS} {
		if ok, err := netnsfs.Exists(ns); ok || err != nil {
			t.Errorf("after the failed CreatePair: Exists(%s) = %v, %v; want false, nil", ns, ok, err)
		}
	}
}

func TestSetFeatures(t *testing.T) {
	n := netnstest.Lab(t)
	a := netnsfs.End{NS: n.HostNS("a"), IfName: "a0"}
	netnstest.Pair(t, a, netnsfs.End{NS: n.HostNS("b"), IfName: "b0"}, 0)
	for _, on := range []bool{false, true} {
		want := map[string]bool{"tx-tcp-segmentation": on}
		if err := netnsfs.SetFeatures(a.NS, a.IfName, want); err != nil {
			t.Fatal(err)
		}
		var got map[string]bool
		err := netnsfs.Do(a.NS, func() error {
			e, err := ethtool.NewEthtool()
			if err != nil {
				return err
			}
			defer e.Close()
			got, err = e.Features(a.IfName)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if got["tx-tcp-segmentation"] != on {
			t.Errorf("after SetFeatures(%v): tx-tcp-segmentation = %v", want, got["tx-tcp-segmentation"])
		}
	}
	if err := netnsfs.SetFeatures(a.NS, "no-such-if", map[string]bool{"tx-tcp-segmentation": false}); err == nil {
		t.Error("SetFeatures on a missing interface: nil error, want one")
	}
	// TSO without scatter-gather: the ioctl succeeds, the kernel turns TSO
	// back off (netdev_fix_features), and SetFeatures must say so.
	refused := map[string]bool{"tx-scatter-gather": false, "tx-tcp-segmentation": true}
	if err := netnsfs.SetFeatures(a.NS, a.IfName, refused); err == nil || !strings.Contains(err.Error(), "tx-tcp-segmentation") {
		t.Errorf("SetFeatures(%v): error %v, want one naming tx-tcp-segmentation", refused, err)
	}
}

// TestStartBindsEtc: as with `ip netns exec`, a command started in a
// namespace sees the files of /etc/netns/NAME in place of /etc's, and the
// machine's /etc is unchanged.
func TestStartBindsEtc(t *testing.T) {
	netnstest.Require(t)
	prefix := "tsltest." + netnstest.LabID(t) + "."
	netnstest.CheckNoLeftovers(t, prefix)
	name := prefix + "etc"
	t.Cleanup(func() { netnsfs.Remove(name) })
	if _, err := netnsfs.Create(name); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(netnsfs.EtcDir, name)
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const hosts = "10.99.0.1 only-in-this-namespace\n"
	if err := os.WriteFile(filepath.Join(dir, "hosts"), []byte(hosts), 0o644); err != nil {
		t.Fatal(err)
	}

	var out strings.Builder
	cmd := exec.Command("cat", "/etc/hosts")
	cmd.Stdout = &out
	if err := netnsfs.Start(name, cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if out.String() != hosts {
		t.Errorf("/etc/hosts inside %s = %q, want the namespace's own %q", name, out.String(), hosts)
	}
	if mine, err := os.ReadFile("/etc/hosts"); err != nil || string(mine) == hosts {
		t.Errorf("the machine's /etc/hosts = %q, %v: the binding leaked out of the command's mount namespace", mine, err)
	}
}
