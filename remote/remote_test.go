package remote_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/tsolab/tsolab/provider/local"
	"github.com/tsolab/tsolab/remote"
	"github.com/tsolab/tsolab/remote/remotetest"
)

// TestMain makes this test binary an agent when run as `BINARY agent`:
// the tests copy it to their SSH servers as "tsolab's own binary".
func TestMain(m *testing.M) {
	if len(os.Args) >= 6 && os.Args[1] == "agent" && os.Args[2] == remote.ExecArg && os.Args[4] == "--" {
		// tsolab agent exec NETNS -- COMMAND...
		code, err := remote.RunIn(context.Background(), os.Args[3], os.Args[5:], os.Stdin, os.Stdout, os.Stderr, nil)
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(code)
	}
	if len(os.Args) == 2 && os.Args[1] == "agent" {
		if err := remote.ServeStdio(testVersion, local.Providers()); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const testVersion = "0.0.0-test"

func connect(t *testing.T, s *remotetest.Server, m remote.Machine) (*remote.Client, error) {
	t.Helper()
	c, err := remote.Connect(context.Background(), m, remote.Options{Version: testVersion, Dial: s.Dial})
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

func TestConnectInstallsOnceAndSaysHello(t *testing.T) {
	s := remotetest.Start(t)
	c, err := connect(t, s, s.Machine("m1"))
	if err != nil {
		t.Fatal(err)
	}
	hash, err := remote.SelfHash()
	if err != nil {
		t.Fatal(err)
	}
	if !c.Installed {
		t.Errorf("first connection: Installed = false, want true (the binary was not there)")
	}
	if !strings.HasPrefix(c.Path, s.Home+"/.cache/tsolab/agent/"+testVersion+"-"+hash[:16]+"/") {
		t.Errorf("agent path %q: want it under %s keyed by version and hash", c.Path, s.Home)
	}
	if c.Info.Hash != hash || c.Info.Version != testVersion || c.Info.ProtocolVersion != remote.ProtocolVersion {
		t.Errorf("hello: got %+v, want hash %s version %s protocol %d", c.Info, hash, testVersion, remote.ProtocolVersion)
	}
	if c.Info.GOARCH != runtime.GOARCH || c.Info.UID != 0 {
		t.Errorf("hello: got arch %s uid %d, want %s and 0 (root)", c.Info.GOARCH, c.Info.UID, runtime.GOARCH)
	}
	got, err := os.ReadFile(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := os.ReadFile(os.Args[0]); string(got) != string(want) {
		t.Errorf("the installed agent differs from this binary")
	}
	t.Logf("installed at %s: %+v", c.Path, c.Info)
	c.Close()

	again, err := connect(t, s, s.Machine("m1"))
	if err != nil {
		t.Fatal(err)
	}
	if again.Installed || again.Path != c.Path {
		t.Errorf("second connection: Installed = %v at %q, want the binary at %q reused", again.Installed, again.Path, c.Path)
	}
}

// TestHostKeyIsVerified: a machine whose key known_hosts lacks, or
// records otherwise, is refused before the client authenticates, with the
// fingerprint and the line to add.
func TestHostKeyIsVerified(t *testing.T) {
	for _, tc := range []struct {
		name    string
		known   func(t testing.TB) ssh.PublicKey // what known_hosts records
		changed bool
		want    func(s *remotetest.Server) []string
	}{
		{"unknown", func(testing.TB) ssh.PublicKey { return nil }, false, func(s *remotetest.Server) []string {
			return []string{"unknown host key", "add this line to " + s.KnownHosts, s.Addr.String() + " ssh-ed25519 "}
		}},
		{"changed", remotetest.NewKey, true, func(s *remotetest.Server) []string {
			return []string{"the host key CHANGED", "replace the line at " + s.KnownHosts + ":1"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := remotetest.Start(t)
			s.WriteKnownHosts(t, tc.known(t))
			_, err := connect(t, s, s.Machine("m1"))
			t.Log(err)
			var hk *remote.HostKeyError
			if !errors.As(err, &hk) || hk.Changed != tc.changed {
				t.Fatalf("got %v, want a host key error with Changed=%v", err, tc.changed)
			}
			want := append(tc.want(s), "machine m1 (root@"+s.Addr.String()+")", ssh.FingerprintSHA256(s.HostKey))
			for _, w := range want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
			if strings.Contains(s.Log(), "Accepted publickey") {
				t.Errorf("the client authenticated to a server whose key it does not know:\n%s", s.Log())
			}
		})
	}
}

func TestWrongIdentityIsRefused(t *testing.T) {
	s := remotetest.Start(t)
	m := s.Machine("m1")
	m.IdentityFile = t.TempDir() + "/other"
	remotetest.WriteKey(t, m.IdentityFile)
	_, err := connect(t, s, m)
	t.Log(err)
	if err == nil || !strings.Contains(err.Error(), "refused identity_file "+m.IdentityFile+" for user root") {
		t.Fatalf("got %v, want the machine's refusal of the identity file", err)
	}
}
