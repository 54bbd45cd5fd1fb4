package remote

import (
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// Machine says how to reach one machine of a lab. It holds no secret:
// the key is read from IdentityFile or asked of the SSH agent when
// connecting.
type Machine struct {
	Name         string // the lab's name for it: "r1"
	Address      string // an IP address or a DNS name
	Port         int    // 0 means 22
	User         string // "" means the user tsolab runs as
	IdentityFile string // a private key file; "" means the SSH agent at $SSH_AUTH_SOCK
	KnownHosts   string // "" means ~/.ssh/known_hosts
	Sudo         bool   // run the agent with sudo -n (a user other than root)
}

// DefaultKnownHosts is the known_hosts file used when a machine names none.
const DefaultKnownHosts = "~/.ssh/known_hosts"

// String is how plans and errors name the machine: "r1 (root@10.1.2.3)".
func (m Machine) String() string {
	addr := m.Address
	if m.Port != 0 && m.Port != 22 {
		addr = net.JoinHostPort(m.Address, strconv.Itoa(m.Port))
	}
	return fmt.Sprintf("%s (%s@%s)", m.Name, m.user(), addr)
}

// HostPort is the address dialed: "10.1.2.3:22".
func (m Machine) HostPort() string {
	port := m.Port
	if port == 0 {
		port = 22
	}
	return net.JoinHostPort(m.Address, strconv.Itoa(port))
}

func (m Machine) user() string {
	if m.User != "" {
		return m.User
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}

func (m Machine) knownHosts() (string, error) {
	if m.KnownHosts == "" {
		return ExpandHome(DefaultKnownHosts)
	}
	return ExpandHome(m.KnownHosts)
}

// ExpandHome replaces a leading "~/" of path with the user's home
// directory.
func ExpandHome(path string) (string, error) {
	if path != "~" && !strings.HasPrefix(path, "~/") {
		return path, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("expand %s: %w", path, err)
	}
	return filepath.Join(home, path[1:]), nil
}
