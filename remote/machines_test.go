package remote_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/hcl"
	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
	"github.com/tsolab/tsolab/provider/local"
	"github.com/tsolab/tsolab/remote"
	"github.com/tsolab/tsolab/remote/remotetest"
)

// testLab is a lab written to a directory of its own and loaded.
type testLab struct {
	dir     string
	lab     *config.Lab
	sc      *config.Scenario // its only scenario
	desired []provider.Resource
}

// writeLab writes src as the lab file of a fresh directory and loads it.
func writeLab(t testing.TB, src string) testLab {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lab.tsolab.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	lab, diags := hcl.Load(dir, hcl.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	sc := lab.Scenarios[0]
	return testLab{dir: dir, lab: lab, sc: sc, desired: provider.Desired(sc, provider.NewNaming(lab.Name))}
}

// planner wires a planner for the lab whose machine r1 is s, through a
// new connection.
func (l testLab) planner(s *remotetest.Server) (*remote.Machines, *planner.Planner) {
	m := remote.NewMachines(local.Providers(),
		map[string]remote.Machine{"r1": s.Machine("r1")}, remote.Options{Version: testVersion, Dial: s.Dial})
	return m, planner.New(planner.Options{Dir: l.dir, Lab: l.lab.Name, Providers: m.Providers()})
}

// TestPlannerDrivesAnotherMachine applies a lab whose hosts live on a
// machine reached over SSH, through the same planner and the routing
// providers: the namespaces, the veth pair, its MTU, addresses and
// offloads are made on that machine (and not on this one), drift made by
// hand there is planned as an update, and destroy leaves nothing there.
func TestPlannerDrivesAnotherMachine(t *testing.T) {
	s := remotetest.Start(t)
	labID := netnstest.LabID(t)
	src := fmt.Sprintf(`lab %q {}
machine "r1" { address = %q }
host "rx" { machine = machine.r1 }
host "ry" { machine = machine.r1 }
nic "rx0" {
  host    = host.rx
  peer    = nic.ry0
  address = "10.9.0.1/24"
  mtu     = 9000
  offload = { tso = false }
}
nic "ry0" {
  host    = host.ry
  address = "10.9.0.2/24"
  mtu     = 9000
}
`, labID, s.Addr)
	l := writeLab(t, src)
	sc, desired := l.sc, l.desired
	ns := provider.NewNaming(l.lab.Name).HostNS("rx")
	machines, p := l.planner(s)
	defer machines.Close()
	ctx := context.Background()
	apply := func(plan *planner.Plan, err error) *planner.ApplyResult {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if plan.Diagnostics.HasErrors() {
			t.Fatalf("plan: %v", plan.Diagnostics)
		}
		res, err := p.Apply(ctx, plan)
		if err != nil {
			t.Fatal(err)
		}
		if res.Diagnostics.HasErrors() {
			t.Fatalf("apply: %v", res.Diagnostics)
		}
		return res
	}
	destroyed := false
	t.Cleanup(func() {
		if !destroyed {
			if plan, err := p.PlanDestroy(ctx); err == nil {
				p.Apply(ctx, plan)
			}
		}
	})

	res := apply(p.Plan(ctx, sc.Name, desired))
	if res.Added != 4 {
		t.Errorf("apply added %d, want 4 (2 hosts, 2 NICs)", res.Added)
	}
	for _, r := range res.State.Resources {
		if r.Attrs[provider.AttrMachine] != "r1" {
			t.Errorf("state: %s has machine %q, want r1", r.Addr, r.Attrs[provider.AttrMachine])
		}
	}
	if _, err := os.Stat(netnsfs.Path(ns)); !os.IsNotExist(err) {
		t.Errorf("%s is on the machine the test runs on (stat: %v): it belongs on the other one", netnsfs.Path(ns), err)
	}
	link := s.Exec(t, "ip", "-n", ns, "-d", "link", "show", "rx0")
	if !strings.Contains(link, "mtu 9000") || !strings.Contains(link, "veth") {
		t.Errorf("on the other machine, rx0 is not a veth with MTU 9000:\n%s", link)
	}
	if k := s.Exec(t, "ip", "netns", "exec", ns, "ethtool", "-k", "rx0"); !strings.Contains(k, "tcp-segmentation-offload: off") {
		t.Errorf("on the other machine, rx0's TSO is not off:\n%s", k)
	}
	if a := s.Exec(t, "ip", "-n", ns, "addr", "show", "rx0"); !strings.Contains(a, "10.9.0.1/24") {
		t.Errorf("on the other machine, rx0 lacks 10.9.0.1/24:\n%s", a)
	}

	// Drift made by hand on the other machine.
	s.Exec(t, "ip", "-n", ns, "link", "set", "rx0", "mtu", "1500")
	plan, err := p.Plan(ctx, sc.Name, desired)
	if err != nil {
		t.Fatal(err)
	}
	var drift []string
	for _, c := range plan.Changes {
		if c.Action == planner.NoOp {
			continue
		}
		for _, d := range c.Diffs() {
			drift = append(drift, fmt.Sprintf("%s %s: %s -> %s", c.Addr, d.Key, d.Before, d.After))
		}
		if c.Action != planner.Update {
			t.Errorf("plan after the drift: %s %s, want an update", c.Action, c.Addr)
		}
	}
	if want := "nic.rx0 mtu: 1500 -> 9000"; len(drift) != 1 || drift[0] != want {
		t.Errorf("plan after the drift: %q, want [%q]", drift, want)
	}
	apply(plan, nil)

	apply(p.PlanDestroy(ctx))
	destroyed = true
	if left := s.Exec(t, "ip", "netns", "list"); strings.Contains(left, labID) {
		t.Errorf("namespaces of the lab left on the other machine:\n%s", left)
	}
}

// TestAgentKilledMidApply: an agent that dies between plan and apply
// makes the apply fail with an error naming the machine, and the next
// apply, over a new connection, completes from the state.
func TestAgentKilledMidApply(t *testing.T) {
	s := remotetest.Start(t)
	labID := netnstest.LabID(t)
	src := fmt.Sprintf("lab %q {}\nmachine \"r1\" { address = %q }\nhost \"rx\" { machine = machine.r1 }\nnic \"rx0\" {\n  host    = host.rx\n  address = \"10.9.1.1/24\"\n}\n", labID, s.Addr)
	l := writeLab(t, src)
	sc, desired := l.sc, l.desired
	ctx := context.Background()
	connect := func() (*remote.Machines, *planner.Planner) {
		m, p := l.planner(s)
		t.Cleanup(func() { m.Close() })
		return m, p
	}
	t.Cleanup(func() {
		_, p := connect()
		if plan, err := p.PlanDestroy(ctx); err == nil {
			p.Apply(ctx, plan)
		}
	})

	m1, p1 := connect()
	plan, err := p1.Plan(ctx, sc.Name, desired)
	if err != nil || plan.Diagnostics.HasErrors() {
		t.Fatalf("plan: %v %v", err, plan.Diagnostics)
	}
	c, err := m1.Client(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	killAgent(t, c.Path)
	res, err := p1.Apply(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Diagnostics.HasErrors() || !strings.Contains(res.Diagnostics.Error(), "machine r1") ||
		!strings.Contains(res.Diagnostics.Error(), "lost the connection to the agent") {
		t.Fatalf("apply with the agent killed: got %v, want an error naming machine r1 and the lost connection", res.Diagnostics)
	}
	t.Log(res.Diagnostics)

	_, p2 := connect()
	plan, err = p2.Plan(ctx, sc.Name, desired)
	if err != nil || plan.Diagnostics.HasErrors() {
		t.Fatalf("plan again: %v %v", err, plan.Diagnostics)
	}
	res, err = p2.Apply(ctx, plan)
	if err != nil || res.Diagnostics.HasErrors() {
		t.Fatalf("apply again: %v %v", err, res.Diagnostics)
	}
	if res.Added != 2 {
		t.Errorf("apply again added %d, want 2 (host.rx, nic.rx0)", res.Added)
	}
	if a := s.Exec(t, "ip", "-n", provider.NewNaming(l.lab.Name).HostNS("rx"), "addr", "show", "rx0"); !strings.Contains(a, "10.9.1.1/24") {
		t.Errorf("on the other machine, rx0 lacks 10.9.1.1/24:\n%s", a)
	}
}

// killAgent kills the agent process whose executable is path (the one
// this test's connection started) and waits until it is gone.
func killAgent(t *testing.T, path string) {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	killed := 0
	for _, exe := range procs {
		if target, err := os.Readlink(exe); err != nil || target != path {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(exe)))
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill the agent %d: %v", pid, err)
		}
		killed++
	}
	if killed != 1 {
		t.Fatalf("found %d agent processes running %s, want 1", killed, path)
	}
}

// TestSwitchOnAnotherMachine: a switch whose ports' hosts live on
// another machine is made there, with its ports; its hosts reach each
// other through it there, this machine has none of it, and destroy
// leaves nothing there.
func TestSwitchOnAnotherMachine(t *testing.T) {
	s := remotetest.Start(t)
	labID := netnstest.LabID(t)
	l := writeLab(t, fmt.Sprintf(`lab %q {}
machine "r1" { address = %q }
host "rx" { machine = machine.r1 }
host "ry" { machine = machine.r1 }
switch "sw" {}
nic "rx0" {
  host    = host.rx
  connect = switch.sw
  address = "10.9.2.1/24"
}
nic "ry0" {
  host    = host.ry
  connect = switch.sw
  address = "10.9.2.2/24"
}
`, labID, s.Addr))
	naming := provider.NewNaming(l.lab.Name)
	machines, p := l.planner(s)
	t.Cleanup(func() { machines.Close() }) // after mustApply's destroy
	mustApply(t, p, l.sc.Name, l.desired)
	if _, err := os.Stat(netnsfs.Path(naming.SwitchNS("sw"))); !os.IsNotExist(err) {
		t.Errorf("the switch's namespace is on the machine the test runs on (stat: %v): it belongs on r1", err)
	}
	if br := s.Exec(t, "ip", "-n", naming.SwitchNS("sw"), "-d", "link", "show", "type", "bridge"); !strings.Contains(br, provider.BridgeName) {
		t.Errorf("on r1, the switch's namespace has no bridge %s:\n%s", provider.BridgeName, br)
	}
	ping := s.Exec(t, "ip", "netns", "exec", naming.HostNS("rx"), "ping", "-c", "1", "-W", "5", "10.9.2.2")
	if !strings.Contains(ping, "1 received") {
		t.Errorf("on r1, rx does not reach ry through the switch:\n%s", ping)
	}
	mustDestroy(t, p, 5)
	if left := s.Exec(t, "ip", "netns", "list"); strings.Contains(left, labID) {
		t.Errorf("namespaces of the lab left on r1:\n%s", left)
	}
}

// mustApply plans the scenario and applies the plan, failing t on any
// error; what the state records is destroyed when t ends.
func mustApply(t *testing.T, p *planner.Planner, scenario string, desired []provider.Resource) *planner.ApplyResult {
	t.Helper()
	ctx := context.Background()
	t.Cleanup(func() {
		if plan, err := p.PlanDestroy(ctx); err == nil && plan.HasChanges() {
			p.Apply(ctx, plan)
		}
	})
	plan, err := p.Plan(ctx, scenario, desired)
	if err != nil || plan.Diagnostics.HasErrors() {
		t.Fatalf("plan: %v %v", err, plan.Diagnostics)
	}
	res, err := p.Apply(ctx, plan)
	if err != nil || res.Diagnostics.HasErrors() {
		t.Fatalf("apply: %v %v", err, res.Diagnostics)
	}
	return res
}

// TestSudo: a machine reached as a user other than root with sudo = true
// runs its agent through sudo -n as root: the agent installs itself in
// that user's home, apply makes the lab there and destroy removes it. A
// sudo that asks for a password is an error naming the machine, the user
// and the sudoers rule that fixes it.
func TestSudo(t *testing.T) {
	s := remotetest.Start(t)
	t.Run("nopasswd", func(t *testing.T) {
		m := s.AddUser(t, "r1", true)
		labID := netnstest.LabID(t)
		l := writeLab(t, fmt.Sprintf("lab %q {}\nmachine \"r1\" { address = %q }\nhost \"rx\" { machine = machine.r1 }\nnic \"rx0\" {\n  host    = host.rx\n  address = \"10.9.3.1/24\"\n}\n", labID, s.Addr))
		machines := remote.NewMachines(local.Providers(), map[string]remote.Machine{"r1": m}, remote.Options{Version: testVersion, Dial: s.Dial})
		t.Cleanup(func() { machines.Close() }) // after mustApply's destroy
		p := planner.New(planner.Options{Dir: l.dir, Lab: l.lab.Name, Providers: machines.Providers()})
		ctx := context.Background()
		mustApply(t, p, l.sc.Name, l.desired)
		c, err := machines.Client(ctx, "r1")
		if err != nil {
			t.Fatal(err)
		}
		u, err := user.Lookup(m.User)
		if err != nil {
			t.Fatal(err)
		}
		if c.Info.UID != 0 || !strings.HasPrefix(c.Path, u.HomeDir+"/.cache/tsolab/agent/") {
			t.Errorf("agent at %s runs as uid %d: want root, installed in %s's home %s", c.Path, c.Info.UID, m.User, u.HomeDir)
		}
		ns := provider.NewNaming(l.lab.Name).HostNS("rx")
		if a := s.Exec(t, "ip", "-n", ns, "addr", "show", "rx0"); !strings.Contains(a, "10.9.3.1/24") {
			t.Errorf("on r1, rx0 lacks 10.9.3.1/24:\n%s", a)
		}
		// tsolab exec's way, through sudo -n too: a command in rx.
		var out, errb strings.Builder
		code, err := c.Exec(ctx, ns, []string{"sh", "-c", "id -u; cat /sys/class/net/rx0/mtu; exit 3"}, nil, &out, &errb)
		if err != nil || code != 3 || out.String() != "0\n1500\n" {
			t.Errorf("exec in rx through sudo: status %d, %v, stdout %q, stderr %q; want 3 and root seeing rx0", code, err, out.String(), errb.String())
		}
		mustDestroy(t, p, 2)
		if left := s.Exec(t, "ip", "netns", "list"); strings.Contains(left, labID) {
			t.Errorf("namespaces of the lab left on r1:\n%s", left)
		}
	})
	t.Run("password", func(t *testing.T) {
		m := s.AddUser(t, "r1", false)
		_, err := connect(t, s, m)
		t.Log(err)
		for _, w := range []string{"machine r1 (" + m.User + "@" + s.Addr.String() + ")", "sudo -n asks for a password for user " + m.User,
			"NOPASSWD"} {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("error %v\nlacks %q", err, w)
			}
		}
		// The rule lets the agent run with any arguments (tsolab exec's).
		if w := "/home/.cache/tsolab/agent/*/tsolab"; err == nil || !strings.HasSuffix(err.Error(), w) {
			t.Errorf("error %v\ndoes not end with the rule's command %q", err, w)
		}
	})
	t.Run("no sudo", func(t *testing.T) {
		m := s.AddUser(t, "r1", true)
		m.Sudo = false
		_, err := connect(t, s, m)
		t.Log(err)
		for _, w := range []string{"machine r1 (" + m.User + "@", "not root", "set sudo = true"} {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("error %v\nlacks %q", err, w)
			}
		}
	})
}

// mustDestroy destroys what p's state records, which must be n objects.
func mustDestroy(t *testing.T, p *planner.Planner, n int) {
	t.Helper()
	ctx := context.Background()
	plan, err := p.PlanDestroy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := p.Apply(ctx, plan); err != nil || res.Diagnostics.HasErrors() || res.Destroyed != n {
		t.Fatalf("destroy: %v %v, destroyed %d of %d", err, res.Diagnostics, res.Destroyed, n)
	}
}

// TestSSHDStoppedMidApply: the SSH server stopped for real in the middle
// of an apply (sshd and every process it started killed just as nic.rx0
// is to be created, its sessions with it) makes the apply fail with an
// error naming the machine; the state records what was made and what was
// being made. While sshd is down, a plan says the machine refuses the
// connection; once it is back, the next apply completes from the state,
// and destroy leaves nothing.
func TestSSHDStoppedMidApply(t *testing.T) {
	s := remotetest.Start(t)
	labID := netnstest.LabID(t)
	l := writeLab(t, fmt.Sprintf(`lab %q {}
machine "r1" { address = %q }
host "rx" { machine = machine.r1 }
host "ry" { machine = machine.r1 }
nic "rx0" {
  host    = host.rx
  peer    = nic.ry0
  address = "10.9.4.1/24"
}
nic "ry0" {
  host    = host.ry
  address = "10.9.4.2/24"
}
`, labID, s.Addr))
	ctx := context.Background()
	m1, p1 := l.planner(s)
	t.Cleanup(func() { m1.Close() })
	var once sync.Once
	gated := map[provider.Kind]provider.Interface{}
	for k, prov := range m1.Providers() {
		gated[k] = gate{Interface: prov, before: func(a provider.Addr) {
			if a.String() == "nic.rx0" {
				once.Do(func() { s.StopSSHD(t) })
			}
		}}
	}
	p1 = planner.New(planner.Options{Dir: l.dir, Lab: l.lab.Name, Providers: gated})
	plan, err := p1.Plan(ctx, l.sc.Name, l.desired)
	if err != nil || plan.Diagnostics.HasErrors() {
		t.Fatalf("plan: %v %v", err, plan.Diagnostics)
	}
	res, err := p1.Apply(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("apply: %v", res.Diagnostics)
	if msg := res.Diagnostics.Error(); !res.Diagnostics.HasErrors() || !strings.Contains(msg, "machine r1 (root@"+s.Addr.String()+")") ||
		!strings.Contains(msg, "lost the connection to the agent during Create") {
		t.Fatalf("apply with the sessions cut: got %v, want an error naming machine r1 and the lost connection", res.Diagnostics)
	}
	st, err := planner.ReadState(l.dir)
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]planner.Status{"host.rx": planner.StatusReady, "host.ry": planner.StatusReady, "nic.rx0": planner.StatusCreating} {
		a, _ := provider.ParseAddr(addr)
		if r := st.Resource(a); r == nil || r.Status != want {
			t.Errorf("state after the cut: %s is %+v, want it %s", addr, r, want)
		}
	}

	down, pdown := l.planner(s)
	t.Cleanup(func() { down.Close() })
	plan, err = pdown.Plan(ctx, l.sc.Name, l.desired)
	if err != nil {
		t.Fatal(err)
	}
	if msg := plan.Diagnostics.Error(); !strings.Contains(msg, "cannot reach machine r1") || !strings.Contains(msg, "connection refused") {
		t.Errorf("plan with sshd down: got %v, want an error naming machine r1 and the refused connection", plan.Diagnostics)
	}

	s.StartSSHD(t)
	m2, p2 := l.planner(s)
	t.Cleanup(func() { m2.Close() })
	if res := mustApply(t, p2, l.sc.Name, l.desired); res.Added != 2 {
		t.Errorf("apply with sshd back added %d, want 2 (nic.rx0, nic.ry0)", res.Added)
	}
	ping := s.Exec(t, "ip", "netns", "exec", provider.NewNaming(l.lab.Name).HostNS("rx"), "ping", "-c", "1", "-W", "5", "10.9.4.2")
	if !strings.Contains(ping, "1 received") {
		t.Errorf("on r1, rx does not reach ry after the apply that completed:\n%s", ping)
	}
	mustDestroy(t, p2, 4)
	if left := s.Exec(t, "ip", "netns", "list"); strings.Contains(left, labID) {
		t.Errorf("namespaces of the lab left on r1:\n%s", left)
	}
}

// gate calls before ahead of every Create, Update and Delete of its
// provider.
type gate struct {
	provider.Interface
	before func(provider.Addr)
}

func (g gate) Create(ctx context.Context, req provider.CreateRequest) provider.CreateResponse {
	g.before(req.Addr)
	return g.Interface.Create(ctx, req)
}

func (g gate) Update(ctx context.Context, req provider.UpdateRequest) provider.UpdateResponse {
	g.before(req.Addr)
	return g.Interface.Update(ctx, req)
}

func (g gate) Delete(ctx context.Context, req provider.DeleteRequest) provider.DeleteResponse {
	g.before(req.Addr)
	return g.Interface.Delete(ctx, req)
}

// TestLinkDownMidApply: the network to the machine goes down in the
// middle of an apply (the veth that carries SSH is set down just as
// nic.rx0 is to be created, so TCP alone would wait many minutes): the
// unanswered keepalives abandon the connection, the apply fails with an
// error naming the machine, and once the link is up again the next apply
// completes from the state; destroy leaves nothing.
func TestLinkDownMidApply(t *testing.T) {
	s := remotetest.Start(t)
	labID := netnstest.LabID(t)
	l := writeLab(t, fmt.Sprintf("lab %q {}\nmachine \"r1\" { address = %q }\nhost \"rx\" { machine = machine.r1 }\nnic \"rx0\" {\n  host    = host.rx\n  address = \"10.9.5.1/24\"\n}\n", labID, s.Addr))
	ctx := context.Background()
	opts := remote.Options{Version: testVersion, Dial: s.Dial, KeepAlive: 500 * time.Millisecond}
	m1 := remote.NewMachines(local.Providers(), map[string]remote.Machine{"r1": s.Machine("r1")}, opts)
	t.Cleanup(func() { m1.Close() })
	var once sync.Once
	gated := map[provider.Kind]provider.Interface{}
	for k, prov := range m1.Providers() {
		gated[k] = gate{Interface: prov, before: func(a provider.Addr) {
			if a.String() == "nic.rx0" {
				once.Do(func() { s.SetLink(t, false) })
			}
		}}
	}
	p1 := planner.New(planner.Options{Dir: l.dir, Lab: l.lab.Name, Providers: gated})
	plan, err := p1.Plan(ctx, l.sc.Name, l.desired)
	if err != nil || plan.Diagnostics.HasErrors() {
		t.Fatalf("plan: %v %v", err, plan.Diagnostics)
	}
	start := time.Now()
	res, err := p1.Apply(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("apply ended after %s: %v", time.Since(start).Round(time.Millisecond), res.Diagnostics)
	if msg := res.Diagnostics.Error(); !res.Diagnostics.HasErrors() || !strings.Contains(msg, "machine r1 (root@"+s.Addr.String()+")") ||
		!strings.Contains(msg, "answered no keepalive") {
		t.Fatalf("apply with the link down: got %v, want an error naming machine r1 and the unanswered keepalives", res.Diagnostics)
	}

	s.SetLink(t, true)
	m2 := remote.NewMachines(local.Providers(), map[string]remote.Machine{"r1": s.Machine("r1")}, opts)
	t.Cleanup(func() { m2.Close() })
	p2 := planner.New(planner.Options{Dir: l.dir, Lab: l.lab.Name, Providers: m2.Providers()})
	if res := mustApply(t, p2, l.sc.Name, l.desired); res.Added != 1 {
		t.Errorf("apply after the link came back added %d, want 1 (nic.rx0)", res.Added)
	}
	if a := s.Exec(t, "ip", "-n", provider.NewNaming(l.lab.Name).HostNS("rx"), "addr", "show", "rx0"); !strings.Contains(a, "10.9.5.1/24") {
		t.Errorf("on r1, rx0 lacks 10.9.5.1/24:\n%s", a)
	}
	mustDestroy(t, p2, 2)
	if left := s.Exec(t, "ip", "netns", "list"); strings.Contains(left, labID) {
		t.Errorf("namespaces of the lab left on r1:\n%s", left)
	}
}

// TestMachinesInParallel: two machines, each a real sshd, are connected
// and provisioned in parallel: each one's connection waits at a barrier
// until the other's has begun (made one after the other, they would never
// meet, and the guard fails the test), and so does each one's first
// Create.
func TestMachinesInParallel(t *testing.T) {
	s1, s2 := remotetest.Start(t), remotetest.Start(t)
	labID := netnstest.LabID(t)
	l := writeLab(t, fmt.Sprintf(`lab %q {}
machine "r1" { address = %q }
machine "r2" { address = %q }
host "rx" { machine = machine.r1 }
host "ry" { machine = machine.r2 }
`, labID, s1.Addr, s2.Addr))
	dials := newBarrier(t, 2)
	creates := newBarrier(t, 2)
	byAddr := map[string]*remotetest.Server{s1.Addr.String(): s1, s2.Addr.String(): s2}
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		host, _, _ := net.SplitHostPort(address)
		dials.arrive(host)
		return byAddr[host].Dial(ctx, network, address)
	}
	machines := remote.NewMachines(local.Providers(),
		map[string]remote.Machine{"r1": s1.Machine("r1"), "r2": s2.Machine("r2")}, remote.Options{Version: testVersion, Dial: dial})
	t.Cleanup(func() { machines.Close() })
	gated := map[provider.Kind]provider.Interface{}
	for k, prov := range machines.Providers() {
		gated[k] = gate{Interface: prov, before: func(a provider.Addr) {
			if a.Kind == provider.KindHost {
				creates.arrive(a.String())
			}
		}}
	}
	p := planner.New(planner.Options{Dir: l.dir, Lab: l.lab.Name, Providers: gated})
	mustApply(t, p, l.sc.Name, l.desired)
	for _, s := range []*remotetest.Server{s1, s2} {
		if left := s.Exec(t, "ip", "netns", "list"); !strings.Contains(left, labID) {
			t.Errorf("no namespace of the lab on %s:\n%s", s.NS, left)
		}
	}
	mustDestroy(t, p, 2)
}

// barrier lets n callers through once all n have arrived; one that waits
// a minute fails the test (the others never came: they were not in
// parallel with it).
type barrier struct {
	t    *testing.T
	n    int
	mu   sync.Mutex
	seen map[string]bool
	all  chan struct{}
}

func newBarrier(t *testing.T, n int) *barrier {
	return &barrier{t: t, n: n, seen: map[string]bool{}, all: make(chan struct{})}
}

// arrive waits at the barrier the first time who comes, and lets who
// through at once after.
func (b *barrier) arrive(who string) {
	b.mu.Lock()
	if b.seen[who] {
		b.mu.Unlock()
		return
	}
	b.seen[who] = true
	if len(b.seen) == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
	case <-time.After(time.Minute):
		b.t.Errorf("%s waited a minute at the barrier for %d others: they did not run in parallel with it", who, b.n-1)
	}
}

// TestLocalHostOnAnotherMachine: a host of kind "local" on another
// machine is that machine's own namespace: its sysctl, and the MTU and
// tbf shaping of the port it adopts there, are set on that machine (and
// not on this one), and destroy puts back what was there before.
func TestLocalHostOnAnotherMachine(t *testing.T) {
	s := remotetest.Start(t)
	labID := netnstest.LabID(t)
	l := writeLab(t, fmt.Sprintf(`lab %q {}
machine "r1" { address = %q }
host "r1self" {
  machine = machine.r1
  kind    = "local"
  sysctl  = { "net.ipv4.tcp_no_metrics_save" = "1" }
}
nic "port" {
  host   = host.r1self
  device = %q
  mtu    = 4000
  rate   = "100mbit"
}
`, labID, s.Addr, remotetest.Cable))
	machines, p := l.planner(s)
	t.Cleanup(func() { machines.Close() })
	sysctl := func() string {
		return strings.TrimSpace(s.Exec(t, "cat", "/proc/sys/net/ipv4/tcp_no_metrics_save"))
	}
	link := func() string { return s.Exec(t, "ip", "-d", "link", "show", remotetest.Cable) }
	qdisc := func() string { return s.Exec(t, "tc", "qdisc", "show", "dev", remotetest.Cable) }
	if sysctl() != "0" || !strings.Contains(link(), "mtu 1500") || strings.Contains(qdisc(), "tbf") {
		t.Fatalf("r1 before the lab: tcp_no_metrics_save %s,\n%s%s", sysctl(), link(), qdisc())
	}
	hereBefore, err := os.ReadFile("/proc/sys/net/ipv4/tcp_no_metrics_save")
	if err != nil {
		t.Fatal(err)
	}

	mustApply(t, p, l.sc.Name, l.desired)
	if got := sysctl(); got != "1" {
		t.Errorf("on r1, tcp_no_metrics_save is %s, want 1", got)
	}
	if got := link(); !strings.Contains(got, "mtu 4000") {
		t.Errorf("on r1, %s's MTU is not 4000:\n%s", remotetest.Cable, got)
	}
	if got := qdisc(); !strings.Contains(got, "tbf") || !strings.Contains(got, "rate 100Mbit") {
		t.Errorf("on r1, %s is not shaped by tbf at 100Mbit:\n%s", remotetest.Cable, got)
	}
	if here, _ := os.ReadFile("/proc/sys/net/ipv4/tcp_no_metrics_save"); string(here) != string(hereBefore) {
		t.Errorf("the sysctl changed on the machine the test runs on: %q -> %q", hereBefore, here)
	}

	mustDestroy(t, p, 2)
	if sysctl() != "0" || !strings.Contains(link(), "mtu 1500") || strings.Contains(qdisc(), "tbf") {
		t.Errorf("r1 after destroy: tcp_no_metrics_save %s,\n%s%s", sysctl(), link(), qdisc())
	}
}

// TestPoolSharesAndReconnects: the Machines of one pool (the phases of
// one command) share one connection to a machine, and so one login and
// one agent; once it is lost (sshd's sessions killed), the Machines that
// held it fails naming the machine, and a Machines made after connects
// again. Closing the pool ends the connection.
func TestPoolSharesAndReconnects(t *testing.T) {
	s := remotetest.Start(t)
	ctx := context.Background()
	pool := remote.NewPool(remote.Options{Version: testVersion, Dial: s.Dial})
	t.Cleanup(func() { pool.Close() })
	machines := map[string]remote.Machine{"r1": s.Machine("r1")}
	logins := func() int { return strings.Count(s.Log(), "Accepted publickey for ") }
	client := func(m *remote.Machines) *remote.Client {
		t.Helper()
		c, err := m.Client(ctx, "r1")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	plan, run := pool.Machines(local.Providers(), machines), pool.Machines(local.Providers(), machines)
	first := client(plan)
	if c := client(run); c != first {
		t.Fatalf("two Machines of one pool got two connections")
	}
	if _, err := first.Observe(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if n := logins(); n != 1 {
		t.Fatalf("%d logins for two Machines of one pool, want 1", n)
	}

	s.CutSessions(t)
	_, err := client(plan).Observe(ctx, nil)
	var lost *remote.LostError
	if !errors.As(err, &lost) || !strings.Contains(err.Error(), "machine r1 (root@"+s.Addr.String()+")") {
		t.Fatalf("a call over the lost connection: got %v, want a LostError naming machine r1", err)
	}
	again := client(pool.Machines(local.Providers(), machines))
	if again == first {
		t.Fatalf("a Machines made after the loss got the lost connection")
	}
	if _, err := again.Observe(ctx, nil); err != nil {
		t.Fatalf("after reconnecting: %v", err)
	}
	if n := logins(); n != 2 {
		t.Errorf("%d logins after one loss, want 2", n)
	}
	pool.Close()
	if _, err := again.Observe(ctx, nil); err == nil {
		t.Errorf("a call after the pool closed succeeded")
	}
}
