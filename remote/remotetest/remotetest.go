// Package remotetest starts real OpenSSH servers for tests of labs that
// span machines: each server runs inside a network namespace of its own
// that stands for one machine, reached over a veth from another namespace
// that stands for the controller's machine, with a host key, a client key
// pair and a known_hosts file made by the test. More servers may stand
// beside the first, reached from its controller's namespace too
// (StartInBeside), and a veth pair between two servers' namespaces stands
// for a cable between two machines' ports (CableBetween). Everything it
// makes (the namespaces, the veths, the servers and their sessions, the
// files) is gone when the test ends, even when it fails.
//
// The server runs in a mount namespace of its own too, with a /run/netns
// of its own, so the namespaces an agent creates there are that
// "machine's": the machine the test runs on does not see them, and they
// vanish with the server.
package remotetest

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
	"github.com/tsolab/tsolab/remote"
)

// SSHD is the OpenSSH server the tests run (Debian's openssh-server).
const SSHD = "/usr/sbin/sshd"

// Cable is the name, on both sides, of a veth pair between the
// controller's namespace and the server's that stands for the cable
// between two machines' ports: labs adopt or move it (device = "cable0").
// The SSH connection runs over another pair (eth0).
const Cable = "cable0"

// Server is one running OpenSSH server in a namespace of its own.
type Server struct {
	// NS is the server's ("the machine's") namespace; ClientNS the
	// controller's, from which Dial connects.
	NS, ClientNS string
	// Addr is the server's address on the veth between the two.
	Addr netip.Addr
	// Dir holds the server's files; Home is the login user's home
	// directory there (the agent installs itself under it), and Tmp
	// root's TMPDIR there (where the agent writes capture files), so
	// that what agents leave on the machine is the test's to see.
	Dir, Home, Tmp string
	// HostKey is the server's host key.
	HostKey ssh.PublicKey
	// IdentityFile is a private key the server accepts for root;
	// KnownHosts a known_hosts file that records HostKey for Addr.
	IdentityFile, KnownHosts string

	clientKey ssh.PublicKey
	cfgPath   string
	ctlIf     string    // the controller's end of the SSH veth, in ClientNS
	ownsCtl   bool      // ClientNS is this server's, removed by Close
	holder    *exec.Cmd // the machine's namespaces (startMachine)
	cmd       *exec.Cmd // sshd, while it runs
	// personality is the setarch(8) personality sshd runs under (and
	// with it every session: linux32 makes uname -m say i686); "" is
	// the machine's own.
	personality string
	log         *lockedBuffer
	done        chan struct{} // closed when sshd's output ends
}

var seq atomic.Int64

// Start requires namespaces (see netnstest.Require) and OpenSSH's sshd,
// and starts a server; it is stopped, and everything removed, when t
// ends.
func Start(t testing.TB) *Server {
	t.Helper()
	netnstest.Require(t)
	if _, err := os.Stat(SSHD); err != nil {
		if os.Getenv(netnstest.RequireEnv) == "1" {
			t.Fatalf("%s=1 but %s is missing: install openssh-server (.ci/run does)", netnstest.RequireEnv, SSHD)
		}
		t.Skipf("%s is missing: install openssh-server", SSHD)
	}
	return startT(t, nil)
}

// startT starts a server for t (see start) and removes it when t ends.
func startT(t testing.TB, ctl *Server) *Server {
	t.Helper()
	id, n := nextID()
	netnstest.CheckNoLeftovers(t, id+".")
	s, err := start(id, n, t.TempDir(), ctl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		if t.Failed() {
			t.Logf("sshd in %s said:\n%s", s.NS, s.log.String())
		}
	})
	return s
}

// StartIn starts a server with its files in dir, for callers without a
// testing.TB (testscript commands); the caller must Close it. It needs
// what Start needs and fails where Start would skip.
func StartIn(dir string) (*Server, error) {
	id, n := nextID()
	return start(id, n, dir, nil)
}

// StartInBeside starts another server ("machine") that the controller's
// namespace of first reaches too, as one controller reaches every
// machine of a lab: Dial and SetLink act on its own veth there. Only
// first has a cable to the controller; CableBetween joins two servers'
// machines. The caller must Close it before first.
func StartInBeside(dir string, first *Server) (*Server, error) {
	id, n := nextID()
	return start(id, n, dir, first)
}

// CableBetween joins the machines of a and b with a veth pair named name
// on both sides, without addresses: the cable between a port of each
// machine, for labs whose hosts on the two machines adopt or move it
// (device = name). It goes with either machine's namespace.
func CableBetween(a, b *Server, name string) error {
	return netnsfs.CreatePair(netnsfs.End{NS: a.NS, IfName: name}, netnsfs.End{NS: b.NS, IfName: name}, 0)
}

// nextID names a server's namespaces (ID.machine, ID.ctl) and numbers
// its subnet.
func nextID() (string, int64) {
	n := seq.Add(1)
	return fmt.Sprintf("tsltest.ssh%d-%d", os.Getpid(), n), n
}

// start starts a server; ctl, when not nil, is the server whose
// controller's namespace reaches this one too.
func start(id string, n int64, dir string, ctl *Server) (_ *Server, err error) {
	// A /30 of 198.18.0.0/15 (RFC 2544, for tests) per server, inside
	// the test's own namespaces.
	base := netip.AddrFrom4([4]byte{198, 18, byte(n >> 6), byte(n&63) << 2})
	s := &Server{NS: id + ".machine", ClientNS: id + ".ctl", Addr: base.Next().Next(), Dir: dir, log: &lockedBuffer{},
		ctlIf: "eth0", ownsCtl: true}
	if ctl != nil {
		s.ClientNS, s.ctlIf, s.ownsCtl = ctl.ClientNS, fmt.Sprintf("eth%d", n), false
	}
	if err := netnsfs.CreatePair(
		netnsfs.End{NS: s.ClientNS, IfName: s.ctlIf, Addr: netip.PrefixFrom(base.Next(), 30)},
		netnsfs.End{NS: s.NS, IfName: "eth0", Addr: netip.PrefixFrom(s.Addr, 30)}, 0); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	// The cable: a second pair, without addresses, for labs to move into
	// their hosts (device = "cable0" on either side).
	if s.ownsCtl {
		if err := netnsfs.CreatePair(netnsfs.End{NS: s.ClientNS, IfName: Cable}, netnsfs.End{NS: s.NS, IfName: Cable}, 0); err != nil {
			return nil, err
		}
	}
	cfgPath, err := s.writeConfig()
	if err != nil {
		return nil, err
	}
	// The privilege separation directory the package's service makes.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		return nil, err
	}
	s.cfgPath = cfgPath
	if err := s.startMachine(); err != nil {
		return nil, err
	}
	if err := s.startSSHD(); err != nil {
		return nil, err
	}
	return s, nil
}

// startMachine starts the process that holds the "machine": it lives in
// the machine's network namespace and in a mount namespace of its own,
// with /run/netns a tmpfs of its own (so the namespaces its agents make
// are that machine's alone, gone with it) and /sys the namespace's
// sysfs, and sleeps there until the server closes. sshd is started in
// its namespaces, and can be stopped and started again while the
// machine, and what the agents made there, stays.
func (s *Server) startMachine() error {
	holder := exec.Command("nsenter", "--net="+netnsfs.Path(s.NS), "--",
		"unshare", "--mount", "--propagation", "slave", "--",
		"/bin/sh", "-c", `mount -t tmpfs tsolab-machine /run/netns && umount -l /sys && mount -t sysfs sysfs /sys && echo ready && exec sleep infinity`)
	out, err := holder.StdoutPipe()
	if err != nil {
		return err
	}
	holder.Stderr = holder.Stdout
	if err := holder.Start(); err != nil {
		return err
	}
	s.holder = holder
	r := bufio.NewReader(out)
	if line, _ := r.ReadString('\n'); line != "ready\n" {
		rest, _ := io.ReadAll(r) // it failed and exits: its output ends
		return fmt.Errorf("the machine's namespaces could not be made: %s%s", line, rest)
	}
	return nil
}

// startSSHD starts sshd on the machine and returns once it listens.
func (s *Server) startSSHD() error {
	args := []string{"-t", strconv.Itoa(s.Pid()), "-m", "-n", "--"}
	if s.personality != "" {
		args = append(args, "setarch", s.personality)
	}
	cmd := exec.Command("nsenter", append(args, SSHD, "-D", "-e", "-f", s.cfgPath)...)
	stderr, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd = cmd
	done := make(chan struct{})
	s.done = done
	ready := make(chan bool, 1)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			s.log.WriteLine(sc.Text())
			if !sent && strings.HasPrefix(sc.Text(), "Server listening on") {
				ready <- true
				sent = true
			}
		}
		if !sent {
			ready <- false
		}
	}()
	if !<-ready {
		return fmt.Errorf("sshd did not start:\n%s", s.log.String())
	}
	return nil
}

// StopSSHD stops the machine's SSH server with every session it serves,
// for real (as systemctl stop ssh followed by the end of its sessions):
// the listener and every process it started are killed, so connections
// end and new ones are refused. The machine, and what its agents made,
// stays. StartSSHD starts it again.
func (s *Server) StopSSHD(t testing.TB) {
	t.Helper()
	if err := s.stopSSHD(); err != nil {
		t.Fatal(err)
	}
}

func (s *Server) stopSSHD() error {
	if _, err := s.cutSessions(); err != nil {
		return err
	}
	s.cmd.Process.Kill()
	<-s.done
	s.cmd.Wait()
	s.cmd = nil
	return nil
}

// RestartSSHDAs stops the machine's SSH server with its sessions
// (StopSSHD) and starts it again under the setarch(8) personality given
// (linux32: the kernel answers uname -m with i686 in every session, as a
// 32-bit x86 machine's does), or as the machine itself with "". For
// callers without a testing.TB (testscript commands).
func (s *Server) RestartSSHDAs(personality string) error {
	if err := s.stopSSHD(); err != nil {
		return err
	}
	s.personality = personality
	return s.startSSHD()
}

// StartSSHD starts the machine's SSH server again after StopSSHD, and
// returns once it listens.
func (s *Server) StartSSHD(t testing.TB) {
	t.Helper()
	if err := s.startSSHD(); err != nil {
		t.Fatal(err)
	}
}

// writeConfig makes the server's keys (host and client), its known_hosts
// and authorized_keys, the home its agents install under, and its
// sshd_config, whose path it returns.
func (s *Server) writeConfig() (string, error) {
	s.Home, s.Tmp = filepath.Join(s.Dir, "home"), filepath.Join(s.Dir, "tmp")
	for _, d := range []string{s.Home, s.Tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", err
		}
	}
	var err error
	if s.HostKey, err = WriteKeyFile(filepath.Join(s.Dir, "host_ed25519")); err != nil {
		return "", err
	}
	s.KnownHosts = filepath.Join(s.Dir, "known_hosts")
	if err := s.writeKnownHosts(s.HostKey); err != nil {
		return "", err
	}
	s.IdentityFile = filepath.Join(s.Dir, "id_ed25519")
	clientKey, err := WriteKeyFile(s.IdentityFile)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "authorized_keys"), ssh.MarshalAuthorizedKey(clientKey), 0o600); err != nil {
		return "", err
	}
	s.clientKey = clientKey
	cfg := strings.Join([]string{
		"ListenAddress " + s.Addr.String(),
		"Port 22",
		"HostKey " + filepath.Join(s.Dir, "host_ed25519"),
		// Root's key is the test's file; a user's (see AddUser) its home's.
		"AuthorizedKeysFile " + filepath.Join(s.Dir, "authorized_keys") + " .ssh/authorized_keys",
		"PidFile none",
		"StrictModes no",
		"UsePAM no",
		"PermitRootLogin prohibit-password",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"LogLevel VERBOSE",
		// The agent installs itself under $HOME and writes capture
		// files under $TMPDIR: root's are the test's, not the real
		// ones. (Match blocks end the file.)
		"Match User root",
		"\tSetEnv HOME=" + s.Home + " TMPDIR=" + s.Tmp,
	}, "\n") + "\n"
	cfgPath := filepath.Join(s.Dir, "sshd_config")
	return cfgPath, os.WriteFile(cfgPath, []byte(cfg), 0o600)
}

// Close stops the server (its sessions end with their connections) and
// removes its namespaces, and with them the veths (the controller's
// namespace only when it is this server's: see StartInBeside).
func (s *Server) Close() error {
	if s.cmd != nil {
		s.cmd.Process.Signal(syscall.SIGTERM)
		<-s.done
		s.cmd.Wait()
		s.cmd = nil
	}
	if s.holder != nil {
		s.holder.Process.Kill()
		s.holder.Wait()
		s.holder = nil
	}
	if !s.ownsCtl {
		return netnsfs.Remove(s.NS)
	}
	return errors.Join(netnsfs.Remove(s.NS), netnsfs.Remove(s.ClientNS))
}

// Pid is the ID of a process in the server's "machine" (the one that
// holds its namespaces, while sshd comes and goes): `nsenter -t PID -m -n`
// enters it.
func (s *Server) Pid() int { return s.holder.Process.Pid }

// Machine returns how to reach the server as root with the test's key
// and known_hosts, under the name name.
func (s *Server) Machine(name string) remote.Machine {
	return remote.Machine{Name: name, Reach: config.Reach{Address: s.Addr.String(), User: "root",
		IdentityFile: s.IdentityFile, KnownHosts: s.KnownHosts}}
}

// Sudo is the sudo the tests of `sudo = true` run.
const Sudo = "/usr/bin/sudo"

// AddUser makes a throwaway login user, which is a user of the machine
// the test runs on and so of every server's "machine", and returns how to
// reach the server as that user with sudo = true. Its home holds
// .ssh/authorized_keys with the test's client key, and a file in
// /etc/sudoers.d lets it run the agents installed in its home as root:
// without a password when nopasswd, else asking for one (which sudo -n
// refuses). The user, its home and the sudoers file are removed when t
// ends, even when it fails. It skips without sudo, and fails instead
// when TSOLAB_REQUIRE_NETNS=1.
func (s *Server) AddUser(t testing.TB, name string, nopasswd bool) remote.Machine {
	t.Helper()
	if _, err := os.Stat(Sudo); err != nil {
		if os.Getenv(netnstest.RequireEnv) == "1" {
			t.Fatalf("%s=1 but %s is missing: install sudo (.ci/run does)", netnstest.RequireEnv, Sudo)
		}
		t.Skipf("%s is missing: install sudo", Sudo)
	}
	m, remove, err := s.AddUserIn(name, nopasswd)
	t.Cleanup(func() {
		if err := remove(); err != nil {
			t.Error(err)
		}
	})
	must(t, err)
	return m
}

// AddUserIn is AddUser for callers without a testing.TB (testscript
// commands): the caller must call remove, even when err is not nil. It
// fails where AddUser would skip.
func (s *Server) AddUserIn(name string, nopasswd bool) (_ remote.Machine, remove func() error, err error) {
	user := fmt.Sprintf("tsltest%d-%d", os.Getpid(), seq.Add(1))
	sudoers := filepath.Join("/etc/sudoers.d", user) // no dot: sudo skips names with one
	base := ""
	remove = func() error {
		os.Remove(sudoers)
		var err error
		if out, uerr := exec.Command("userdel", "-f", user).CombinedOutput(); uerr != nil && !strings.Contains(string(out), "does not exist") {
			err = fmt.Errorf("remove user %s: %v: %s", user, uerr, out)
		}
		if base != "" {
			os.RemoveAll(base)
		}
		return err
	}
	if base, err = os.MkdirTemp("", "tsolab-user-"); err != nil {
		return remote.Machine{}, remove, err
	}
	if err := os.Chmod(base, 0o755); err != nil {
		return remote.Machine{}, remove, err
	}
	home := filepath.Join(base, "home")
	// -p '*': no password, but not locked (sshd refuses a locked account).
	if out, err := exec.Command("useradd", "-m", "-d", home, "-s", "/bin/sh", "-p", "*", user).CombinedOutput(); err != nil {
		return remote.Machine{}, remove, fmt.Errorf("useradd %s: %v: %s", user, err, out)
	}
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		return remote.Machine{}, remove, err
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "authorized_keys"), ssh.MarshalAuthorizedKey(s.clientKey), 0o600); err != nil {
		return remote.Machine{}, remove, err
	}
	if out, err := exec.Command("chown", "-R", user+":", home).CombinedOutput(); err != nil {
		return remote.Machine{}, remove, fmt.Errorf("chown %s: %v: %s", home, err, out)
	}
	tag := ""
	if nopasswd {
		tag = "NOPASSWD: "
	}
	// The agent with any arguments: `agent`, and `agent exec ...` for
	// tsolab exec.
	rule := fmt.Sprintf("%s ALL=(root) %s%s/.cache/tsolab/agent/*/tsolab\n", user, tag, home)
	if err := os.WriteFile(sudoers, []byte(rule), 0o440); err != nil {
		return remote.Machine{}, remove, err
	}
	if out, err := exec.Command("visudo", "-cf", sudoers).CombinedOutput(); err != nil {
		return remote.Machine{}, remove, fmt.Errorf("the sudoers rule %q: %v: %s", rule, err, out)
	}
	m := s.Machine(name)
	m.User, m.Sudo = user, true
	return m, remove, nil
}

// Dial connects from the controller's namespace, for remote.Options.Dial.
func (s *Server) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	var c net.Conn
	err := netnsfs.Do(s.ClientNS, func() (err error) {
		c, err = (&net.Dialer{}).DialContext(ctx, network, address)
		return err
	})
	return c, err
}

// WriteKnownHosts replaces the known_hosts file with one line that
// records key for the server's address; no key means an empty file.
func (s *Server) WriteKnownHosts(t testing.TB, key ssh.PublicKey) {
	t.Helper()
	must(t, s.writeKnownHosts(key))
}

func (s *Server) writeKnownHosts(key ssh.PublicKey) error {
	var b []byte
	if key != nil {
		b = []byte(knownhosts.Line([]string{knownhosts.Normalize(s.Addr.String() + ":22")}, key) + "\n")
	}
	return os.WriteFile(s.KnownHosts, b, 0o600)
}

// Exec runs a command on the server's "machine": in its network and
// mount namespaces, where the namespaces its agents make are (tests make
// drift by hand with ip and ethtool). It returns the combined output, or
// fails t when the command fails.
func (s *Server) Exec(t testing.TB, name string, args ...string) string {
	t.Helper()
	pid := strconv.Itoa(s.Pid())
	out, err := exec.Command("nsenter", append([]string{"-t", pid, "-m", "-n", "--", name}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("on the server's machine: %s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// CutSessions cuts every connection to the server for real, as when the
// machine's SSH server is stopped with its sessions or the machine
// reboots: it kills (SIGKILL) every process the listening sshd started,
// the per-connection sshd processes with their sessions and agents, so
// the client's TCP connections end. The listener stays: the next
// connection is served. It returns how many processes it killed; once it
// returns, none of them runs any more code.
func (s *Server) CutSessions(t testing.TB) int {
	t.Helper()
	n, err := s.cutSessions()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (s *Server) cutSessions() (int, error) {
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
		f := strings.Fields(rest)
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(st)))
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], pid)
	}
	var tree []int
	var walk func(pid int)
	walk = func(pid int) {
		for _, c := range children[pid] {
			tree = append(tree, c)
			walk(c)
		}
	}
	walk(s.cmd.Process.Pid)
	// Stop them all first, so none starts another meanwhile, then kill.
	for _, pid := range tree {
		syscall.Kill(pid, syscall.SIGSTOP)
	}
	for _, pid := range tree {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return 0, fmt.Errorf("kill %d of sshd's sessions: %w", pid, err)
		}
	}
	return len(tree), nil
}

// SetLink takes the network between the controller and the server down
// (up false) or up again: the controller's end of the veth that carries
// SSH (eth0, or ethN beside another server), as when a cable is pulled. Connections are not closed; no
// packet passes until it is up again. The link is up again when t ends.
func (s *Server) SetLink(t testing.TB, up bool) {
	t.Helper()
	state := map[bool]string{true: "up", false: "down"}[up]
	if out, err := exec.Command("ip", "-n", s.ClientNS, "link", "set", s.ctlIf, state).CombinedOutput(); err != nil {
		t.Fatalf("ip link set %s %s: %v: %s", s.ctlIf, state, err, out)
	}
	if !up {
		t.Cleanup(func() { exec.Command("ip", "-n", s.ClientNS, "link", "set", s.ctlIf, "up").Run() })
	}
}

// Log is what sshd has logged so far.
func (s *Server) Log() string { return s.log.String() }

// NewKey returns a fresh ed25519 public key (another machine's).
func NewKey(t testing.TB) ssh.PublicKey {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	must(t, err)
	k, err := ssh.NewPublicKey(pub)
	must(t, err)
	return k
}

// WriteKey makes an ed25519 key pair, writes the private key in OpenSSH's
// format to path and returns the public key.
func WriteKey(t testing.TB, path string) ssh.PublicKey {
	t.Helper()
	k, err := WriteKeyFile(path)
	must(t, err)
	return k
}

// WriteKeyFile is WriteKey for callers without a testing.TB.
func WriteKeyFile(path string) (ssh.PublicKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, err
	}
	return ssh.NewPublicKey(pub)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) WriteLine(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
	l.b.WriteByte('\n')
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
