package netnsfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// Mark returns the mark of the named namespace: the alias (IFLA_IFALIAS)
// of its lo, "" when it has none; exists is false (and mark "") when
// there is no such namespace. The providers give marks their meaning (the
// state that owns the namespace, see provider.Naming.OwnerMark).
//
// lo is read from a dump of the namespace's links, not asked for by
// index: the kernel answers a request for one link under the rtnl lock,
// and holds that lock for long stretches while it frees namespaces
// removed before (a destroy removes a thousand, and checks each mark
// just before); it answers a dump without it.
func Mark(name string) (mark string, exists bool, err error) {
	if ok, err := Exists(name); err != nil || !ok {
		return "", false, err
	}
	err = Do(name, func() error {
		mark, err = loAlias()
		return err
	})
	if err != nil {
		return "", true, fmt.Errorf("read the mark of namespace %s: %w", name, err)
	}
	return mark, true, nil
}

// rtextFilterSkipStats is RTEXT_FILTER_SKIP_STATS (linux/rtnetlink.h),
// which neither x/sys/unix nor vishvananda/netlink names.
const rtextFilterSkipStats = 1 << 3

// loAlias returns the alias of lo (ifindex 1 in every namespace) in the
// calling thread's namespace, from a dump of its links without their
// statistics.
func loAlias() (string, error) {
	req := nl.NewNetlinkRequest(unix.RTM_GETLINK, unix.NLM_F_DUMP)
	req.AddData(nl.NewIfInfomsg(unix.AF_UNSPEC))
	req.AddData(nl.NewRtAttr(unix.IFLA_EXT_MASK, nl.Uint32Attr(rtextFilterSkipStats)))
	msgs, err := req.Execute(unix.NETLINK_ROUTE, unix.RTM_NEWLINK)
	if err != nil {
		return "", fmt.Errorf("list links: %w", err)
	}
	for _, m := range msgs {
		ifi := nl.DeserializeIfInfomsg(m)
		if ifi.Index != 1 {
			continue
		}
		attrs, err := nl.ParseRouteAttr(m[ifi.Len():])
		if err != nil {
			return "", fmt.Errorf("read lo: %w", err)
		}
		for _, a := range attrs {
			if a.Attr.Type == unix.IFLA_IFALIAS {
				return string(bytes.TrimRight(a.Value, "\x00")), nil
			}
		}
		return "", nil
	}
	return "", errors.New("find lo: it is not among the namespace's links")
}

// markHere writes mark as the alias of lo in the calling thread's
// namespace.
func markHere(mark string) error {
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("mark the new namespace: %w", err)
	}
	defer h.Close()
	lo, err := h.LinkByIndex(1)
	if err == nil {
		err = h.LinkSetAlias(lo, mark)
	}
	if err != nil {
		return fmt.Errorf("mark the new namespace: %w", err)
	}
	return nil
}

// lockPath is the machine-wide lock LockClaims takes: in /run, which
// holds per-boot state, and not in Dir, whose every entry `ip netns list`
// shows as a namespace.
const lockPath = "/run/tsolab-netns.lock"

// LockClaims takes a lock that every tsolab process on the machine shares
// around looking at a namespace's mark and creating it (Mark, then
// CreateMarked), so that two applies started at once cannot both find a
// name free and both create on it. It returns the unlock.
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
