// Package remotetest starts real OpenSSH servers for tests of labs that
// span machines: each server runs inside a network namespace of its own
// that stands for one machine, reached over a veth from another namespace
// that stands for the controller's machine, with a host key, a client key
// pair and a known_hosts file made by the test. Everything it makes (the
// namespaces, the veth, the server and its sessions, the files) is gone
// when the test ends, even when it fails.
//
// The server runs in a mount namespace of its own too (as `ip netns exec`
// does), so the namespaces an agent creates there are that "machine's":
// the machine the test runs on does not see them, and they vanish with the
// server.
package remotetest

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
	"github.com/tsolab/tsolab/remote"
)

// SSHD is the OpenSSH server the tests run (Debian's openssh-server).
const SSHD = "/usr/sbin/sshd"

// Server is one running OpenSSH server in a namespace of its own.
type Server struct {
	// NS is the server's ("the machine's") namespace; ClientNS the
	// controller's, from which Dial connects.
	NS, ClientNS string
	// Addr is the server's address on the veth between the two.
	Addr netip.Addr
	// Dir holds the server's files; Home is the login user's home
	// directory there (the agent installs itself under it).
	Dir, Home string
	// HostKey is the server's host key.
	HostKey ssh.PublicKey
	// IdentityFile is a private key the server accepts for root;
	// KnownHosts a known_hosts file that records HostKey for Addr.
	IdentityFile, KnownHosts string

	cmd  *exec.Cmd
	log  *lockedBuffer
	done chan struct{}
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
	n := seq.Add(1)
	id := fmt.Sprintf("tsltest.ssh%d-%d", os.Getpid(), n)
	netnstest.CheckNoLeftovers(t, id+".")
	// A /30 of 198.18.0.0/15 (RFC 2544, for tests) per server, inside
	// the test's own namespaces.
	base := netip.AddrFrom4([4]byte{198, 18, byte(n >> 6), byte(n&63) << 2})
	s := &Server{NS: id + ".machine", ClientNS: id + ".ctl", Addr: base.Next().Next(), Dir: t.TempDir()}
	netnstest.Pair(t,
		netnsfs.End{NS: s.ClientNS, IfName: "eth0", Addr: netip.PrefixFrom(base.Next(), 30)},
		netnsfs.End{NS: s.NS, IfName: "eth0", Addr: netip.PrefixFrom(s.Addr, 30)}, 0)
	s.Home = filepath.Join(s.Dir, "home")
	must(t, os.MkdirAll(s.Home, 0o700))

	hostKey := s.writeKey(t, "host_ed25519")
	s.HostKey = hostKey
	s.KnownHosts = filepath.Join(s.Dir, "known_hosts")
	s.WriteKnownHosts(t, hostKey)
	s.IdentityFile = filepath.Join(s.Dir, "id_ed25519")
	clientKey := s.writeKey(t, "id_ed25519")
	must(t, os.WriteFile(filepath.Join(s.Dir, "authorized_keys"), ssh.MarshalAuthorizedKey(clientKey), 0o600))

	cfg := strings.Join([]string{
		"ListenAddress " + s.Addr.String(),
		"Port 22",
		"HostKey " + filepath.Join(s.Dir, "host_ed25519"),
		"AuthorizedKeysFile " + filepath.Join(s.Dir, "authorized_keys"),
		"PidFile none",
		"StrictModes no",
		"UsePAM no",
		"PermitRootLogin prohibit-password",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		// The agent installs itself under $HOME: the test's, not root's.
		"SetEnv HOME=" + s.Home,
		"LogLevel VERBOSE",
	}, "\n") + "\n"
	cfgPath := filepath.Join(s.Dir, "sshd_config")
	must(t, os.WriteFile(cfgPath, []byte(cfg), 0o600))
	// The privilege separation directory the package's service makes.
	must(t, os.MkdirAll("/run/sshd", 0o755))

	s.cmd = exec.Command(SSHD, "-D", "-e", "-f", cfgPath)
	stderr, err := s.cmd.StdoutPipe()
	must(t, err)
	s.cmd.Stderr = s.cmd.Stdout
	must(t, netnsfs.Start(s.NS, s.cmd))
	s.log = &lockedBuffer{}
	s.done = make(chan struct{})
	ready := make(chan bool, 1)
	go func() {
		defer close(s.done)
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
	t.Cleanup(func() {
		s.cmd.Process.Signal(syscall.SIGTERM)
		<-s.done
		s.cmd.Wait()
		if t.Failed() {
			t.Logf("sshd in %s said:\n%s", s.NS, s.log.String())
		}
	})
	if !<-ready {
		t.Fatalf("sshd did not start:\n%s", s.log.String())
	}
	return s
}

// Machine returns how to reach the server as root with the test's key
// and known_hosts, under the name name.
func (s *Server) Machine(name string) remote.Machine {
	return remote.Machine{Name: name, Address: s.Addr.String(), User: "root",
		IdentityFile: s.IdentityFile, KnownHosts: s.KnownHosts}
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
	var b []byte
	if key != nil {
		b = []byte(knownhosts.Line([]string{knownhosts.Normalize(s.Addr.String() + ":22")}, key) + "\n")
	}
	must(t, os.WriteFile(s.KnownHosts, b, 0o600))
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

func (s *Server) writeKey(t testing.TB, name string) ssh.PublicKey {
	t.Helper()
	return WriteKey(t, filepath.Join(s.Dir, name))
}

// WriteKey makes an ed25519 key pair, writes the private key in OpenSSH's
// format to path and returns the public key.
func WriteKey(t testing.TB, path string) ssh.PublicKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	must(t, err)
	block, err := ssh.MarshalPrivateKey(priv, "")
	must(t, err)
	must(t, os.WriteFile(path, pem.EncodeToMemory(block), 0o600))
	k, err := ssh.NewPublicKey(pub)
	must(t, err)
	return k
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
