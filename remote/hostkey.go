package remote

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// HostKeyError says a machine's host key is not the one known_hosts
// records for it (Changed), or that known_hosts records none (unknown).
// There is no switch that accepts any key: the fix is to check the
// fingerprint on the machine and add or correct the line.
type HostKeyError struct {
	Machine     Machine
	KnownHosts  string // the file consulted
	Key         ssh.PublicKey
	Changed     bool
	Want        []knownhosts.KnownKey // the keys recorded, when Changed
	Fingerprint string                // SHA256:... of Key
}

func (e *HostKeyError) Error() string {
	line := knownhosts.Line([]string{knownhosts.Normalize(e.Machine.HostPort())}, e.Key)
	check := fmt.Sprintf("check on the machine itself that its key has this fingerprint (ssh-keygen -lf /etc/ssh/ssh_host_%s_key.pub), then ",
		keyFileType(e.Key.Type()))
	if e.Changed {
		var at []string
		for _, w := range e.Want {
			at = append(at, fmt.Sprintf("%s:%d", w.Filename, w.Line))
		}
		return fmt.Sprintf("machine %s: the host key CHANGED: it presents %s key %s, but %s records another (%s). "+
			"Someone may be intercepting the connection, or the machine was reinstalled: %sreplace the line at %s with:\n%s",
			e.Machine, e.Key.Type(), e.Fingerprint, e.KnownHosts, strings.Join(at, ", "), check, strings.Join(at, ", "), line)
	}
	return fmt.Sprintf("machine %s: unknown host key: it presents %s key %s, and %s has no key for %s. "+
		"Host keys are always verified: %sadd this line to %s:\n%s",
		e.Machine, e.Key.Type(), e.Fingerprint, e.KnownHosts, knownhosts.Normalize(e.Machine.HostPort()), check, e.KnownHosts, line)
}

// keyFileType maps a key type to the name OpenSSH gives its host key
// file: ssh-ed25519 -> ed25519.
func keyFileType(t string) string {
	switch {
	case strings.Contains(t, "ed25519"):
		return "ed25519"
	case strings.HasPrefix(t, "ecdsa"):
		return "ecdsa"
	case strings.Contains(t, "rsa"):
		return "rsa"
	}
	return "*"
}

// hostKeyCheck returns the callback that verifies m's host key against
// its known_hosts file, and the key algorithms that file records for m
// (so the server is asked for a key known_hosts can vouch for, not one of
// another type that would look changed).
func hostKeyCheck(m Machine) (ssh.HostKeyCallback, []string, error) {
	path, err := m.knownHosts()
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, nil, fmt.Errorf("machine %s: read known_hosts: %w: host keys are always verified; "+
			"create the file with the machine's key (known_hosts = \"FILE\" names another file)", m, err)
	}
	cb, err := knownhosts.New(path)
	if err != nil {
		return nil, nil, fmt.Errorf("machine %s: read known_hosts %s: %w", m, path, err)
	}
	check := func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		err := cb(hostname, remote, key)
		var ke *knownhosts.KeyError
		if errors.As(err, &ke) {
			return &HostKeyError{Machine: m, KnownHosts: path, Key: key, Changed: len(ke.Want) > 0,
				Want: ke.Want, Fingerprint: ssh.FingerprintSHA256(key)}
		}
		return err
	}
	return check, knownAlgorithms(cb, m.HostPort()), nil
}

// knownAlgorithms asks cb about a key no file can hold: the KeyError it
// returns lists the keys recorded for hostport.
func knownAlgorithms(cb ssh.HostKeyCallback, hostport string) []string {
	probe, err := ssh.NewPublicKey(ed25519.PublicKey(make([]byte, ed25519.PublicKeySize)))
	if err != nil {
		panic(err)
	}
	var ke *knownhosts.KeyError
	if !errors.As(cb(hostport, &net.TCPAddr{}, probe), &ke) {
		return nil
	}
	var algos []string
	seen := map[string]bool{}
	for _, w := range ke.Want {
		for _, a := range algorithmsFor(w.Key.Type()) {
			if !seen[a] {
				seen[a] = true
				algos = append(algos, a)
			}
		}
	}
	return algos
}

// algorithmsFor lists the host key algorithms that can present a key of
// type t (an RSA key signs with SHA-2 or SHA-1).
func algorithmsFor(t string) []string {
	if t == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{t}
}
