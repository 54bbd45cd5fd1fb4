package netnsfs

import (
	"fmt"

	"github.com/vishvananda/netlink"
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
