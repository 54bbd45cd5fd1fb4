package netnsfs

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// dirShared records that this process has made Dir a shared mount point
// (shareDir): it is done once, before the first namespace is bound.
var dirShared struct {
	mu   sync.Mutex
	done bool
}

// shareDir makes Dir a mount point of its own with shared propagation
// before this process binds its first namespace there, as `ip netns add`
// does (iproute2's netns_add): make it shared, and when it is no mount
// point (EINVAL), bind it over itself (recursively) and make that
// shared. Namespaces bound afterwards are bound in that mount, so a
// later `ip netns add` finds Dir a mount point and binds nothing over
// them. (Bound in a plain directory, on a fresh image whose / is
// private, they were hidden by that later bind: the copies in it
// unmounted, the files could not be removed, EBUSY.) Dir is flocked
// meanwhile, as iproute2 does, so that an `ip netns add` run at the same
// time does not bind it twice.
//
// When Dir is no mount point and namespaces are bound in it already (by
// an older tsolab, or a tool that binds as vishvananda/netns does),
// shareDir leaves it as it is: binding over them would hide them.
func shareDir() error {
	dirShared.mu.Lock()
	defer dirShared.mu.Unlock()
	if dirShared.done {
		return nil
	}
	fd, err := unix.Open(Dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", Dir, err)
	}
	defer unix.Close(fd) // and unlocks it
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", Dir, err)
	}
	if err := makeShared(); err != nil {
		return err
	}
	dirShared.done = true
	return nil
}

// makeShared is shareDir's work, with Dir locked.
func makeShared() error {
	err := unix.Mount("", Dir, "none", unix.MS_SHARED|unix.MS_REC, "")
	if !errors.Is(err, unix.EINVAL) {
		if err != nil {
			return fmt.Errorf("make %s a shared mount: %w", Dir, err)
		}
		return nil
	}
	// EINVAL: Dir is no mount point.
	if bound, err := boundUnder(Dir); err != nil || len(bound) > 0 {
		return err
	}
	if err := unix.Mount(Dir, Dir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s over itself: %w", Dir, err)
	}
	if err := unix.Mount("", Dir, "none", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("make %s a shared mount: %w", Dir, err)
	}
	return nil
}
