package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/rpc"
	"os"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/provider"
)

// Agent is the server side of the protocol: what `tsolab agent` answers
// on a machine. Its exported methods are the protocol's calls (net/rpc
// requires the form Method(req T, resp *U) error).
type Agent struct {
	version   string
	hash      string
	providers map[provider.Kind]provider.Interface
	workers   agentWorkers // the kernel engine's (engine.go)
}

// NewAgent returns the agent of this binary: version is tsolab's version,
// the hash is that of the running executable, and providers are this
// machine's own (the ones tsolab runs in-process), one per kind.
func NewAgent(version string, providers map[provider.Kind]provider.Interface) (*Agent, error) {
	hash, err := SelfHash()
	if err != nil {
		return nil, err
	}
	return &Agent{version: version, hash: hash, providers: providers}, nil
}

// Serve answers calls on rw (the agent's stdin and stdout) until the
// controller closes it.
func (a *Agent) Serve(rw io.ReadWriteCloser) error {
	srv := rpc.NewServer()
	if err := srv.RegisterName(Service, a); err != nil {
		panic(err) // a method of Agent that net/rpc cannot serve is a bug
	}
	srv.ServeConn(rw)
	a.closeWorkers()
	return nil
}

// Hello answers the controller's greeting with who and where the agent
// is. It never refuses: the controller compares and explains.
func (a *Agent) Hello(req HelloRequest, resp *HelloResponse) error {
	*resp = HelloResponse{
		ProtocolVersion: ProtocolVersion,
		Version:         a.version,
		Hash:            a.hash,
		GOOS:            runtime.GOOS,
		GOARCH:          runtime.GOARCH,
		UID:             os.Geteuid(),
	}
	resp.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		resp.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	return nil
}

// ServeStdio is `tsolab agent`: it answers calls on the process's
// standard input and output until the controller closes them.
func ServeStdio(version string, providers map[provider.Kind]provider.Interface) error {
	a, err := NewAgent(version, providers)
	if err != nil {
		return err
	}
	// An agent killed before it could remove its capture directory left
	// it behind (capturedir.go): the next agent to start removes it. A
	// directory that will not go is no reason to refuse the command.
	if _, err := removeOrphanedCaptureDirs(os.TempDir()); err != nil {
		fmt.Fprintf(os.Stderr, "tsolab agent: %v\n", err)
	}
	return a.Serve(stdio{})
}

// stdio is the process's standard input and output as one connection.
// The agent writes nothing else to standard output.
type stdio struct{}

func (stdio) Read(p []byte) (int, error)  { return os.Stdin.Read(p) }
func (stdio) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
func (stdio) Close() error {
	os.Stdin.Close()
	return os.Stdout.Close()
}

var self struct {
	once sync.Once
	hash string
	err  error
}

// SelfHash returns the SHA-256 of the running executable, hex encoded: it
// keys the agent's install path and tells the controller that the agent
// is the very binary it copied.
func SelfHash() (string, error) {
	self.once.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			self.err = fmt.Errorf("find this tsolab's executable: %w", err)
			return
		}
		self.hash, self.err = fileHash(exe)
	})
	return self.hash, self.err
}

func fileHash(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
