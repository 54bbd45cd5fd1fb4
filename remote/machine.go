package remote

import (
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tsolab/tsolab/config"
)

// Machine says how to reach one machine of a lab: its name and its
// config.Reach (address, port, user, identity file, known_hosts, sudo).
// It holds no secret: the key is read from IdentityFile or asked of the
// SSH agent when connecting.
type Machine struct {
	Name string // the lab's name for it: "r1"
	config.Reach
}

// MachinesOf names each machine of reaches (a scenario's, or a state's).
func MachinesOf(reaches map[string]config.Reach) map[string]Machine {
	out := make(map[string]Machine, len(reaches))
	for name, r := range reaches {
		out[name] = Machine{Name: name, Reach: r}
	}
	return out
}

// DefaultKnownHosts is the known_hosts file used when a machine names none.
const DefaultKnownHosts = "~/.ssh/known_hosts"

// String is how plans and errors name the machine: "r1 (root@10.1.2.3)".
func (m Machine) String() string {
	r := m.Reach
	r.User = m.user()
	return fmt.Sprintf("%s (%s)", m.Name, r.Login())
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
