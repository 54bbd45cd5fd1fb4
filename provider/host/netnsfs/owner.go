package netnsfs

import (
	"fmt"
	"os"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Mark returns the mark of the named namespace: the alias (IFLA_IFALIAS)
// of its lo, "" when it has none; exists is false (and mark "") when
// there is no such namespace. The providers give marks their meaning (the
// state that owns the namespace, see provider.Naming.OwnerMark).
func Mark(name string) (mark string, exists bool, err error) {
	mark, h, exists, err := OpenMarked(name)
	h.Close()
	return mark, exists, err
}

// OpenMarked is Mark keeping the namespace open: h holds the namespace
// whose mark it read until the caller closes it (see Bound); it is
// netns.None() when there is no namespace or the mark cannot be read.
func OpenMarked(name string) (mark string, h netns.NsHandle, exists bool, err error) {
	if ok, err := Exists(name); err != nil || !ok {
		return "", netns.None(), false, err
	}
	h, err = Open(name)
	if err == nil {
		err = DoHandle(h, func() error {
			nh, err := netlink.NewHandle(unix.NETLINK_ROUTE)
			if err != nil {
				return err
			}
			defer nh.Close()
			lo, err := nh.LinkByIndex(1)
			if err != nil {
				return fmt.Errorf("find lo: %w", err)
			}
			mark = lo.Attrs().Alias
			return nil
		})
	}
	if err != nil {
		h.Close()
		return "", netns.None(), true, fmt.Errorf("read the mark of namespace %s: %w", name, err)
	}
	return mark, h, true, nil
}

// configureHere marks the calling thread's namespace with mark (when not
// empty: the alias of lo, which comes up in the same request) and runs
// setup (when not nil) there.
func configureHere(mark string, setup func() error) error {
	if mark != "" {
		if err := markHere(mark); err != nil {
			return fmt.Errorf("mark the new namespace: %w", err)
		}
	}
	if setup != nil {
		return setup()
	}
	return nil
}

// markHere sets mark as the alias of lo (ifindex 1 in every namespace:
// no look-up) in the calling thread's namespace and brings lo up, in one
// RTM_SETLINK (netlink.Handle has no call for both at once).
func markHere(mark string) error {
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = 1
	msg.Change, msg.Flags = unix.IFF_UP, unix.IFF_UP
	req := nl.NewNetlinkRequest(unix.RTM_SETLINK, unix.NLM_F_ACK)
	req.AddData(msg)
	req.AddData(nl.NewRtAttr(unix.IFLA_IFALIAS, []byte(mark)))
	s, err := OpenRouteSocket()
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.Do(req)
	return err
}

// lockPath is the machine-wide lock LockClaims takes: in /run, which
// holds per-boot state, and not in Dir, whose every entry `ip netns list`
// shows as a namespace.
const lockPath = "/run/tsolab-netns.lock"

// LockClaims takes a lock that every tsolab process on the machine shares
// around finding a name free and binding a namespace to it
// (CreateSetUp), so that two applies started at once cannot both find a
// name free and both bind on it. It returns the unlock.
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
