package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/rpc"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// Options are the controller's side of a connection.
type Options struct {
	// Version is this tsolab's version (provenance.Version).
	Version string
	// Binary is the tsolab binary copied to the machine and run there as
	// `BINARY agent`; "" means the running executable.
	Binary string
	// Dial opens the TCP connection; nil means a net.Dialer.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// HandshakeTimeout bounds connecting, authenticating and the agent's
	// hello; 0 means 30 s.
	HandshakeTimeout time.Duration
	// KeepAlive is how often the connection asks the machine's SSH
	// server for an answer; after MissedKeepAlives in a row go
	// unanswered, the connection is abandoned as lost (the network to
	// the machine is down, or the machine hangs), so that no call waits
	// forever. 0 means 10 s.
	KeepAlive time.Duration
}

// MissedKeepAlives is how many keepalives in a row may go unanswered
// before a connection is abandoned.
const MissedKeepAlives = 3

// Client is a connection to one machine's agent.
type Client struct {
	Machine Machine
	// Info is the agent's answer to the hello.
	Info HelloResponse
	// Installed says the agent binary was copied by this connection (it
	// was not on the machine yet).
	Installed bool
	// Path is where the agent binary lives on the machine.
	Path string

	conn   *ssh.Client
	tcp    net.Conn // under conn
	sess   *ssh.Session
	rpc    *rpc.Client
	stderr *tail
	exited chan struct{} // closed when the agent's session ends
	exit   error         // the session's end, valid after exited is closed

	closed    chan struct{} // closed by Close
	closeOnce sync.Once
	silent    atomic.Pointer[string] // why keepAlive abandoned the connection
}

// agentRoot is the directory, relative to the remote user's home, that
// holds one subdirectory per agent binary: VERSION-HASH/tsolab.
const agentRoot = "~/.cache/tsolab/agent"

// Connect dials m, verifies its host key, authenticates, installs this
// tsolab there when the machine lacks this very binary, starts the agent
// and checks its hello. Every error names the machine.
func Connect(ctx context.Context, m Machine, opts Options) (*Client, error) {
	timeout := opts.HandshakeTimeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	binary := opts.Binary
	hash, err := SelfHash()
	if binary != "" {
		hash, err = fileHash(binary)
	} else if exe, exeErr := os.Executable(); exeErr == nil {
		binary = exe
	}
	if err != nil {
		return nil, fmt.Errorf("machine %s: %w", m, err)
	}
	conn, tcp, err := dialSSH(ctx, m, opts)
	if err != nil {
		return nil, err
	}
	c := &Client{Machine: m, conn: conn, tcp: tcp, closed: make(chan struct{})}
	every := opts.KeepAlive
	if every == 0 {
		every = 10 * time.Second
	}
	go c.keepAlive(every)
	ok := false
	defer func() {
		if !ok {
			c.Close()
		}
	}()
	if err := c.install(ctx, opts.Version, hash, binary); err != nil {
		return nil, err
	}
	if err := c.start(ctx); err != nil {
		return nil, err
	}
	if err := c.hello(ctx, HelloRequest{ProtocolVersion: ProtocolVersion, Version: opts.Version, Hash: hash}); err != nil {
		return nil, err
	}
	if c.Info.UID != 0 {
		return nil, fmt.Errorf("machine %s: the agent runs as uid %d, not root, and namespaces, links and offloads need root: "+
			"connect as root (user = \"root\"), or set sudo = true with a NOPASSWD sudoers rule for %s on the machine, e.g.\n"+
			"    %s ALL=(root) NOPASSWD: %s",
			m, c.Info.UID, m.user(), m.user(), agentGlob(c.Path))
	}
	ok = true
	return c, nil
}

// hello greets the agent and checks that it is the binary the
// controller installed, speaking the controller's protocol.
func (c *Client) hello(ctx context.Context, want HelloRequest) error {
	if err := c.call(ctx, "Hello", want, &c.Info); err != nil {
		return err
	}
	if c.Info.ProtocolVersion != want.ProtocolVersion || c.Info.Hash != want.Hash {
		return &MismatchError{Machine: c.Machine.String(), Want: want, Got: c.Info}
	}
	return nil
}

// keepAlive asks the SSH server for an answer every interval, and
// abandons the connection when none came for MissedKeepAlives intervals:
// its calls then end as lost (see LostError) instead of waiting for TCP
// to give up, which takes many minutes. It returns when the client
// closes.
func (c *Client) keepAlive(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	var last atomic.Int64 // when the last answer came, in UnixNano
	last.Store(time.Now().UnixNano())
	for {
		select {
		case <-c.closed:
			return
		case <-t.C:
		}
		if quiet := time.Since(time.Unix(0, last.Load())); quiet > every*MissedKeepAlives {
			why := fmt.Sprintf("the machine answered no keepalive for %s: the network to it is down, or it hangs", quiet.Round(time.Millisecond))
			c.silent.Store(&why)
			c.abandon()
			return
		}
		go func() {
			if _, _, err := c.conn.SendRequest("keepalive@openssh.com", true, nil); err == nil {
				last.Store(time.Now().UnixNano())
			}
		}()
	}
}

// abandon closes the connection at once: what was not sent yet is
// dropped, never to reach the machine when the network comes back.
func (c *Client) abandon() {
	if tc, ok := c.tcp.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.conn.Close()
}

// dialSSH opens the SSH connection: host key verified, authenticated. It
// returns the TCP connection under it too.
func dialSSH(ctx context.Context, m Machine, opts Options) (*ssh.Client, net.Conn, error) {
	check, algos, err := hostKeyCheck(m)
	if err != nil {
		return nil, nil, err
	}
	auth, closeAuth, err := authMethod(m)
	if err != nil {
		return nil, nil, err
	}
	defer closeAuth()
	dial := opts.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	tcp, err := dial(ctx, "tcp", m.HostPort())
	if err != nil {
		return nil, nil, fmt.Errorf("machine %s: connect: %w", m, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		tcp.SetDeadline(dl)
	}
	cfg := &ssh.ClientConfig{
		User:              m.user(),
		Auth:              []ssh.AuthMethod{auth},
		HostKeyCallback:   check,
		HostKeyAlgorithms: algos,
	}
	sc, chans, reqs, err := ssh.NewClientConn(tcp, m.HostPort(), cfg)
	if err != nil {
		tcp.Close()
		var hk *HostKeyError
		if errors.As(err, &hk) {
			return nil, nil, hk
		}
		if strings.Contains(err.Error(), "unable to authenticate") {
			how := "the SSH agent's keys ($SSH_AUTH_SOCK)"
			if m.IdentityFile != "" {
				how = "identity_file " + m.IdentityFile
			}
			return nil, nil, fmt.Errorf("machine %s: the machine refused %s for user %s: add its public key to ~%s/.ssh/authorized_keys there, or set user or identity_file: %w",
				m, how, m.user(), m.user(), err)
		}
		return nil, nil, fmt.Errorf("machine %s: SSH handshake: %w", m, err)
	}
	tcp.SetDeadline(time.Time{})
	return ssh.NewClient(sc, chans, reqs), tcp, nil
}

// authMethod is the identity file's key, or else the SSH agent's keys.
// The returned func closes the agent's socket once authentication is done.
func authMethod(m Machine) (ssh.AuthMethod, func(), error) {
	if m.IdentityFile != "" {
		path, err := ExpandHome(m.IdentityFile)
		if err != nil {
			return nil, nil, err
		}
		pem, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, fmt.Errorf("machine %s: read identity_file: %w", m, err)
		}
		signer, err := ssh.ParsePrivateKey(pem)
		var pp *ssh.PassphraseMissingError
		if errors.As(err, &pp) {
			return nil, nil, fmt.Errorf("machine %s: identity_file %s is protected by a passphrase, and tsolab never reads one: "+
				"add the key to your SSH agent (ssh-add %s) and leave identity_file out to use the agent", m, m.IdentityFile, m.IdentityFile)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("machine %s: identity_file %s: %w", m, m.IdentityFile, err)
		}
		return ssh.PublicKeys(signer), func() {}, nil
	}
	sock := os.Getenv("SSH_AUTH_SOCK")
	if sock == "" {
		return nil, nil, fmt.Errorf("machine %s: no identity_file and no SSH agent ($SSH_AUTH_SOCK is unset): "+
			"set identity_file = \"~/.ssh/id_ed25519\" in the machine block, or start ssh-agent and ssh-add your key", m)
	}
	ac, err := net.Dial("unix", sock)
	if err != nil {
		return nil, nil, fmt.Errorf("machine %s: reach the SSH agent at $SSH_AUTH_SOCK: %w", m, err)
	}
	return ssh.PublicKeysCallback(agent.NewClient(ac).Signers), func() { ac.Close() }, nil
}

// run runs a shell command on the machine with stdin and returns its
// standard output; an exit other than 0 is an error carrying its stderr.
func (c *Client) run(ctx context.Context, cmd string, stdin io.Reader) (string, error) {
	s, err := c.conn.NewSession()
	if err != nil {
		return "", fmt.Errorf("machine %s: open a session: %w", c.Machine, err)
	}
	defer s.Close()
	var out, errb bytes.Buffer
	s.Stdin, s.Stdout, s.Stderr = stdin, &out, &errb
	done := make(chan error, 1)
	go func() { done <- s.Run(cmd) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		return "", fmt.Errorf("machine %s: %w", c.Machine, ctx.Err())
	}
	if err != nil {
		return "", fmt.Errorf("machine %s: %s: %w: %s", c.Machine, strings.Fields(cmd)[0], err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// install makes sure the machine has this binary at its keyed path:
// nothing is copied when it is there already.
func (c *Client) install(ctx context.Context, version, hash, binary string) error {
	dir := agentRoot + "/" + pathSafe(version) + "-" + hash[:16]
	script := `set -e; uname -s -m; p="$HOME/` + strings.TrimPrefix(dir, "~/") + `/tsolab"; echo "$p"; if [ -x "$p" ]; then echo present; else echo absent; fi`
	out, err := c.run(ctx, script, nil)
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		return fmt.Errorf("machine %s: unexpected answer to the install probe: %q", c.Machine, out)
	}
	goos, goarch := unameToGo(lines[0])
	if goos != runtime.GOOS || goarch != runtime.GOARCH {
		return fmt.Errorf("machine %s is %s/%s (uname: %s), but this tsolab is built for %s/%s: "+
			"the agent is this very binary, so run tsolab from a machine of the same architecture, or build it for %s/%s (GOOS=%s GOARCH=%s go build ./cmd/tsolab) and run that one",
			c.Machine, goos, goarch, lines[0], runtime.GOOS, runtime.GOARCH, goos, goarch, goos, goarch)
	}
	c.Path = lines[1]
	if lines[2] == "present" {
		return nil
	}
	f, err := os.Open(binary)
	if err != nil {
		return fmt.Errorf("machine %s: copy tsolab: %w", c.Machine, err)
	}
	defer f.Close()
	q := shellQuote(c.Path)
	copyCmd := `set -e; umask 022; mkdir -p "$(dirname ` + q + `)"; t=` + q + `.tmp.$$; cat > "$t"; chmod 0755 "$t"; mv -f "$t" ` + q
	if _, err := c.run(ctx, copyCmd, f); err != nil {
		return fmt.Errorf("copy tsolab to %s: %w", c.Path, err)
	}
	c.Installed = true
	return nil
}

// start runs the agent over one session and connects the protocol to
// its standard input and output.
func (c *Client) start(ctx context.Context) error {
	s, err := c.conn.NewSession()
	if err != nil {
		return fmt.Errorf("machine %s: open the agent's session: %w", c.Machine, err)
	}
	stdin, err := s.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := s.StdoutPipe()
	if err != nil {
		return err
	}
	c.stderr = &tail{max: 4096}
	s.Stderr = c.stderr
	cmd := "exec " + shellQuote(c.Path) + " agent"
	if c.Machine.Sudo {
		cmd = "exec sudo -n " + shellQuote(c.Path) + " agent"
	}
	if err := s.Start(cmd); err != nil {
		return fmt.Errorf("machine %s: start the agent: %w", c.Machine, err)
	}
	c.sess = s
	c.exited = make(chan struct{})
	go func() {
		c.exit = s.Wait()
		close(c.exited)
	}()
	c.rpc = rpc.NewClient(pipe{stdout, stdin})
	return nil
}

// call makes one protocol call. A connection that ends is a *LostError
// naming the machine and what the agent said last.
func (c *Client) call(ctx context.Context, method string, req, resp any) error {
	call := c.rpc.Go(Service+"."+method, req, resp, make(chan *rpc.Call, 1))
	select {
	case <-call.Done:
	case <-ctx.Done():
		return fmt.Errorf("machine %s: %s: %w", c.Machine, method, ctx.Err())
	case <-c.exited:
		// The agent ended; its answer may still be in the pipe.
		select {
		case <-call.Done:
		case <-time.After(time.Second):
			return c.lost(method, io.ErrUnexpectedEOF)
		}
	}
	if err := call.Error; err != nil {
		var se rpc.ServerError
		if errors.As(err, &se) {
			return fmt.Errorf("machine %s: %s: %s", c.Machine, method, string(se))
		}
		return c.lost(method, err)
	}
	return nil
}

// LostError says the connection to a machine's agent ended.
type LostError struct {
	Machine Machine
	Call    string
	Err     error  // what the connection reported
	Exit    error  // how the agent's session ended, if it did
	Stderr  string // the last of what the agent wrote to stderr
	Sudo    bool   // the agent was started with sudo -n
	Path    string // the agent's binary on the machine
	Silent  string // why the connection was abandoned, when it was (keepalives unanswered)
}

// agentGlob is the sudoers pattern of every agent binary installed beside
// path ($HOME/.cache/tsolab/agent/*/tsolab), or agentRoot's when path is
// not known yet.
func agentGlob(path string) string {
	if path == "" {
		return agentRoot + "/*/tsolab"
	}
	return filepath.Join(filepath.Dir(filepath.Dir(path)), "*", "tsolab")
}

func (e *LostError) Error() string {
	msg := fmt.Sprintf("machine %s: lost the connection to the agent during %s: %v", e.Machine, e.Call, e.Err)
	if e.Silent != "" {
		msg = fmt.Sprintf("machine %s: lost the connection to the agent during %s: %s", e.Machine, e.Call, e.Silent)
	}
	if e.Exit != nil {
		msg += fmt.Sprintf(" (the agent's session ended: %v)", e.Exit)
	}
	if e.Sudo && strings.Contains(e.Stderr, "password is required") {
		return fmt.Sprintf("machine %s: sudo -n asks for a password for user %s, and tsolab never reads one: "+
			"connect as root (user = \"root\"), or let %s run the agent without a password, with a NOPASSWD rule in a file of /etc/sudoers.d on the machine:\n"+
			"    %s ALL=(root) NOPASSWD: %s",
			e.Machine, e.Machine.user(), e.Machine.user(), e.Machine.user(), agentGlob(e.Path))
	}
	if e.Sudo && strings.Contains(e.Stderr, "sudo: not found") {
		return fmt.Sprintf("machine %s: sudo = true, but the machine has no sudo: install it there, or connect as root (user = \"root\") without sudo", e.Machine)
	}
	if e.Stderr != "" {
		msg += "; the agent said: " + e.Stderr
	}
	return msg
}

func (c *Client) lost(method string, err error) error {
	e := &LostError{Machine: c.Machine, Call: method, Err: err, Sudo: c.Machine.Sudo, Path: c.Path}
	if why := c.silent.Load(); why != nil {
		e.Silent = *why
	}
	select {
	case <-c.exited:
		e.Exit = c.exit
	case <-time.After(2 * time.Second):
	}
	e.Stderr = strings.TrimSpace(c.stderr.String())
	return e
}

// ended says the agent's session has ended (the agent exited, or the
// connection under it was lost or closed): no call can reach it.
func (c *Client) ended() bool {
	select {
	case <-c.exited:
		return true
	case <-c.closed:
		return true
	default:
		return false
	}
}

// Close ends the agent (its standard input closes) and the connection.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		if c.closed != nil {
			close(c.closed)
		}
	})
	if c.rpc != nil {
		c.rpc.Close()
	}
	if c.sess != nil {
		select {
		case <-c.exited:
		case <-time.After(5 * time.Second):
		}
		c.sess.Close()
	}
	return c.conn.Close()
}

// pipe joins the agent's standard output and input into one connection.
type pipe struct {
	io.Reader
	io.WriteCloser
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

func unameToGo(uname string) (goos, goarch string) {
	f := strings.Fields(uname)
	if len(f) != 2 {
		return uname, ""
	}
	goos = strings.ToLower(f[0])
	switch f[1] {
	case "x86_64", "amd64":
		goarch = "amd64"
	case "aarch64", "arm64":
		goarch = "arm64"
	case "i386", "i486", "i586", "i686":
		goarch = "386"
	case "armv6l", "armv7l":
		goarch = "arm"
	default:
		goarch = f[1] // ppc64le, s390x, riscv64 are named alike
	}
	return goos, goarch
}

func pathSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
