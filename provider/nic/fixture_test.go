package nic_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
	"github.com/tsolab/tsolab/provider/nic"
)

// fixture is one test lab built with the real providers. Everything it
// creates is deleted by t.Cleanup, NICs before switches and hosts, and
// the test fails if a namespace of the lab is left.
type fixture struct {
	t    *testing.T
	n    provider.Naming
	host *host.Provider
	sw   *nic.Switch
	nic  *nic.Provider
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	netnstest.Require(t)
	f := &fixture{t: t, n: netnstest.Naming(t), host: host.New(), sw: nic.NewSwitch(), nic: nic.New()}
	netnstest.CheckNoLeftovers(t, provider.NamespacePrefix+f.n.LabID+".")
	return f
}

func errorsOnly(diags hcl.Diagnostics) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			out = append(out, d)
		}
	}
	return out
}

// addHost creates host NAME and returns its namespace.
func (f *fixture) addHost(name string) string {
	f.t.Helper()
	ns := f.n.HostNS(name)
	a := provider.Addr{Kind: provider.KindHost, Name: name}
	attrs := provider.Attrs{provider.AttrHostKind: "netns", provider.AttrNetNS: ns}
	r := f.host.Create(context.Background(), provider.CreateRequest{Naming: f.n, Addr: a, Desired: attrs})
	f.t.Cleanup(func() {
		if d := f.host.Delete(context.Background(), provider.DeleteRequest{Naming: f.n, Addr: a, Recorded: attrs}); d.Diagnostics.HasErrors() {
			f.t.Errorf("delete %s: %v", a, d.Diagnostics)
		}
	})
	if r.Diagnostics.HasErrors() {
		f.t.Fatalf("create %s: %v", a, r.Diagnostics)
	}
	return ns
}

// addSwitch creates switch NAME.
func (f *fixture) addSwitch(name string) string {
	f.t.Helper()
	ns := f.n.SwitchNS(name)
	a := provider.Addr{Kind: provider.KindSwitch, Name: name}
	attrs := provider.Attrs{provider.AttrNetNS: ns, provider.AttrBridge: provider.BridgeName, provider.AttrUp: "true"}
	r := f.sw.Create(context.Background(), provider.CreateRequest{Naming: f.n, Addr: a, Desired: attrs})
	f.t.Cleanup(func() {
		if d := f.sw.Delete(context.Background(), provider.DeleteRequest{Naming: f.n, Addr: a, Recorded: attrs}); d.Diagnostics.HasErrors() {
			f.t.Errorf("delete %s: %v", a, d.Diagnostics)
		}
	})
	if r.Diagnostics.HasErrors() {
		f.t.Fatalf("create %s: %v", a, r.Diagnostics)
	}
	return ns
}

// switchNIC returns the attributes of NIC name on host connected to sw,
// as provider.Desired writes them, plus extra (with mtu, port.mtu too).
func (f *fixture) switchNIC(name, host, sw string, extra provider.Attrs) provider.Attrs {
	a := provider.Attrs{
		provider.AttrHost:       host,
		provider.AttrNetNS:      f.n.HostNS(host),
		provider.AttrIfName:     name,
		provider.AttrAddress:    "",
		provider.AttrLink:       provider.LinkSwitch + ":" + sw,
		provider.AttrPeerNetNS:  f.n.SwitchNS(sw),
		provider.AttrPeerIfName: provider.PortName(name),
		provider.AttrUp:         "true",
		provider.AttrPortUp:     "true",
		provider.AttrPortMaster: provider.BridgeName,
	}
	for k, v := range extra {
		a[k] = v
	}
	if mtu, ok := a[provider.AttrMTU]; ok {
		a[provider.AttrPortMTU] = mtu
	}
	return a
}

// createNIC creates NIC name and registers its deletion; it returns the
// response for the test to check.
func (f *fixture) createNIC(name string, attrs provider.Attrs) provider.CreateResponse {
	f.t.Helper()
	a := provider.Addr{Kind: provider.KindNIC, Name: name}
	r := f.nic.Create(context.Background(), provider.CreateRequest{Naming: f.n, Addr: a, Desired: attrs})
	f.t.Cleanup(func() {
		if d := f.nic.Delete(context.Background(), provider.DeleteRequest{Naming: f.n, Addr: a, Recorded: attrs}); d.Diagnostics.HasErrors() {
			f.t.Errorf("delete %s: %v", a, d.Diagnostics)
		}
	})
	return r
}

// mustNIC is createNIC failing the test on any error.
func (f *fixture) mustNIC(name string, attrs provider.Attrs) provider.Attrs {
	f.t.Helper()
	r := f.createNIC(name, attrs)
	if errs := errorsOnly(r.Diagnostics); len(errs) > 0 {
		f.t.Fatalf("create nic.%s: %v", name, errs)
	}
	return r.New
}

func (f *fixture) read(name string, recorded provider.Attrs) provider.ReadResponse {
	f.t.Helper()
	return f.nic.Read(context.Background(), provider.ReadRequest{Naming: f.n, Addr: provider.Addr{Kind: provider.KindNIC, Name: name}, Recorded: recorded})
}

// reach opens a TCP connection from namespace fromNS to addr:port served
// in namespace toNS, and checks that bytes go both ways. The sockets are
// real and opened on threads inside each namespace.
func reach(t *testing.T, fromNS, toNS, addr string) {
	t.Helper()
	var ln net.Listener
	err := netnsfs.Do(toNS, func() error {
		var err error
		ln, err = net.Listen("tcp", net.JoinHostPort(addr, "0"))
		return err
	})
	if err != nil {
		t.Fatalf("listen in %s on %s: %v", toNS, addr, err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(c, c)
	}()
	var conn net.Conn
	err = netnsfs.Do(fromNS, func() error {
		var err error
		conn, err = net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
		return err
	})
	if err != nil {
		t.Fatalf("dial %s from %s: %v", ln.Addr(), fromNS, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	msg := []byte(fmt.Sprintf("hello from %s", fromNS))
	if _, err := conn.Write(msg); err != nil {
		t.Fatalf("write to %s: %v", ln.Addr(), err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(conn, got); err != nil {
		t.Fatalf("read echo from %s: %v", ln.Addr(), err)
	}
	if string(got) != string(msg) {
		t.Errorf("echo from %s = %q, want %q", ln.Addr(), got, msg)
	}
}
