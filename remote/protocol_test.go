package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/rpc"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/tsolab/tsolab/config"
)

// pipeClient connects a Client to a, over an in-memory pipe instead of
// an SSH session; closing the returned func's result ends the agent.
func pipeClient(t *testing.T, a *Agent) (*Client, net.Conn) {
	t.Helper()
	cc, ac := net.Pipe()
	go a.Serve(ac)
	c := &Client{Machine: Machine{Name: "m1", Reach: config.Reach{Address: "192.0.2.1", User: "root"}},
		rpc: rpc.NewClient(cc), stderr: &tail{max: 64}, exited: make(chan struct{})}
	t.Cleanup(func() { c.rpc.Close() })
	return c, ac
}

func TestHelloOverThePipe(t *testing.T) {
	a := &Agent{version: "1.2.3", hash: "abcdef0123456789abcdef"}
	c, _ := pipeClient(t, a)
	err := c.hello(context.Background(), HelloRequest{ProtocolVersion: ProtocolVersion, Version: "1.2.3", Hash: a.hash})
	if err != nil {
		t.Fatal(err)
	}
	if c.Info.Version != "1.2.3" || c.Info.Hash != a.hash || c.Info.ProtocolVersion != ProtocolVersion || c.Info.GOOS == "" {
		t.Errorf("got %+v, want the agent's version, hash and protocol", c.Info)
	}
}

func TestHelloMismatch(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  HelloRequest
		want []string
	}{
		{"other binary", HelloRequest{ProtocolVersion: ProtocolVersion, Version: "1.2.4", Hash: "ffff"},
			[]string{"machine m1 (root@192.0.2.1): the agent is tsolab 1.2.3 (binary abcdef0123456789)", "not this tsolab 1.2.4 (binary ffff)", "remove the agent's directory"}},
		{"other protocol", HelloRequest{ProtocolVersion: ProtocolVersion + 1, Version: "9", Hash: "abcdef0123456789abcdef"},
			[]string{fmt.Sprintf("speaks protocol version %d (tsolab 1.2.3)", ProtocolVersion), fmt.Sprintf("this tsolab speaks %d (tsolab 9)", ProtocolVersion+1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := pipeClient(t, &Agent{version: "1.2.3", hash: "abcdef0123456789abcdef"})
			err := c.hello(context.Background(), tc.req)
			var me *MismatchError
			if !errors.As(err, &me) {
				t.Fatalf("got %v, want a *MismatchError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}

func TestLostConnectionNamesTheMachine(t *testing.T) {
	c, ac := pipeClient(t, &Agent{version: "1", hash: "h"})
	c.Machine.Sudo = true
	c.stderr.Write([]byte("sudo: a password is required\n"))
	ac.Close()
	close(c.exited)
	err := c.call(context.Background(), "Hello", HelloRequest{}, &HelloResponse{})
	var le *LostError
	if !errors.As(err, &le) {
		t.Fatalf("got %v, want a *LostError", err)
	}
	for _, w := range []string{"machine m1 (root@192.0.2.1): sudo -n asks for a password", "NOPASSWD"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q\nlacks %q", err, w)
		}
	}
	c.Machine.Sudo = false
	err = c.lost("Hello", errors.New("unexpected EOF"))
	if w := "machine m1 (root@192.0.2.1): lost the connection to the agent during Hello: unexpected EOF"; !strings.HasPrefix(err.Error(), w) {
		t.Errorf("got %q, want it to start %q", err, w)
	}
}

func TestUnameToGo(t *testing.T) {
	for in, want := range map[string]string{
		"Linux x86_64": "linux/amd64", "Linux aarch64": "linux/arm64", "Linux armv7l": "linux/arm",
		"Linux i686": "linux/386", "Linux riscv64": "linux/riscv64", "FreeBSD amd64": "freebsd/amd64",
	} {
		goos, goarch := unameToGo(in)
		if got := goos + "/" + goarch; got != want {
			t.Errorf("unameToGo(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestKnownAlgorithms: the client asks the server only for the key types
// known_hosts records for the address, so a machine with several host
// keys is not taken for one whose key changed.
func TestKnownAlgorithms(t *testing.T) {
	dir := t.TempDir()
	ed := mustKey(t, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMth7l17fRZqoywA7916nG3uKg9vcW8nC5yW/cg4wQiB")
	kh := filepath.Join(dir, "known_hosts")
	lines := "[192.0.2.1]:2222 " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(ed))) + "\n" +
		"192.0.2.9 " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(ed))) + "\n"
	if err := os.WriteFile(kh, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	m := Machine{Name: "m1", Reach: config.Reach{Address: "192.0.2.1", Port: 2222, KnownHosts: kh}}
	check, algos, err := hostKeyCheck(m)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(algos, ",") != ssh.KeyAlgoED25519 {
		t.Errorf("algorithms %v, want [%s]", algos, ssh.KeyAlgoED25519)
	}
	if err := check(m.HostPort(), &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 2222}, ed); err != nil {
		t.Errorf("the recorded key: %v", err)
	}
	m.Port = 0
	if _, algos, _ := hostKeyCheck(m); len(algos) != 0 {
		t.Errorf("port 22 has no key recorded, got algorithms %v", algos)
	}
	m.KnownHosts = filepath.Join(dir, "missing")
	if _, _, err := hostKeyCheck(m); err == nil || !strings.Contains(err.Error(), "host keys are always verified") {
		t.Errorf("missing known_hosts: got %v", err)
	}
}

func mustKey(t *testing.T, line string) ssh.PublicKey {
	k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	return k
}
