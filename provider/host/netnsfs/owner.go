package netnsfs

import (
	"fmt"
	"os"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Mark returns the mark of the named namespace: the alias (IFLA_IFALIAS)
// of its lo, "" when it has none; exists is false (and mark "") when
// there is no such namespace. The providers give marks their meaning (the
// state that owns the namespace, see provider.Naming.OwnerMark).
func Mark(name string) (mark string, exists bool, err error) {
	if ok, err := Exists(name); err != nil || !ok {
		return "", false, err
	}
	err = withNetlink(name, func(h *netlink.Handle) error {
		lo, err := h.LinkByIndex(1)
		if err != nil {
			return fmt.Errorf("find lo: %w", err)
		}
		mark = lo.Attrs().Alias
		return nil
	})
	if err != nil {
		return "", true, fmt.Errorf("read the mark of namespace %s: %w", name, err)
	}
	return mark, true, nil
}

// SetMark writes the mark of the named namespace (see Mark).
func SetMark(name, mark string) error {
	err := withNetlink(name, func(h *netlink.Handle) error {
		lo, err := h.LinkByIndex(1)
		if err != nil {
			return fmt.Errorf("find lo: %w", err)
		}
		if lo.Attrs().Alias == mark {
			return nil
		}
		return h.LinkSetAlias(lo, mark)
	})
	if err != nil {
		return fmt.Errorf("mark namespace %s: %w", name, err)
	}
	return nil
}

// Claim writes mark on the named namespace (see Mark) unless the mark it
// already carries is one accept refuses: then it changes nothing and
// returns that mark. An empty mark is never written.
func Claim(name, mark string, accept func(held string) bool) (refused string, err error) {
	held, _, err := Mark(name)
	if err != nil {
		return "", err
	}
	if !accept(held) {
		return held, nil
	}
	if mark == "" {
		return "", nil
	}
	return "", SetMark(name, mark)
}

// lockPath is the machine-wide lock LockClaims takes: in /run, which
// holds per-boot state, and not in Dir, whose every entry `ip netns list`
// shows as a namespace.
const lockPath = "/run/tsolab-netns.lock"

// LockClaims takes a lock that every tsolab process on the machine shares
// around creating and claiming a namespace (Create, then Claim), so that
// two applies started at once cannot both find a namespace unmarked and
// both take it. It returns the unlock.
func LockClaims() (unlock func(), err error) {
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", lockPath, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", lockPath, err)
	}
	return func() { f.Close() }, nil // closing releases the lock
}
