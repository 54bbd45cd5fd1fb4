package netnsfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Dir is where named namespaces are bound, as with `ip netns` and
// vishvananda/netns (/var/run is a link to /run).
const Dir = "/run/netns"

// Between, when set, is called between the steps of CreateMarked and
// Remove that a crash can separate: after the file is made and before
// the namespace is mounted on it, after it is unmounted and before the
// file is removed. It is for fault-injection tests (cmd/tsolab's
// TSOLAB_TEST_KILL_AFTER_OPS), which kill the process there; nil
// otherwise.
var Between func()

// threadNS is the network namespace of the calling thread.
const threadNS = "/proc/thread-self/ns/net"

// Path is the file a named namespace is bound to.
func Path(name string) string { return filepath.Join(Dir, name) }

// checkName refuses names that would escape Dir.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return fmt.Errorf("%q is not a namespace name", name)
	}
	return nil
}

// Exists reports whether the named namespace is bound (its file is an
// nsfs mount, not a left-over empty file).
func Exists(name string) (bool, error) {
	if err := checkName(name); err != nil {
		return false, err
	}
	var st unix.Statfs_t
	if err := unix.Statfs(Path(name), &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, nil
		}
		return false, err
	}
	return st.Type == unix.NSFS_MAGIC, nil
}

// Create makes the named namespace (vishvananda/netns NewNamed semantics:
// unshare a new network namespace on a locked thread and bind-mount it at
// Path(name)), without leaving any thread in it. It reports created=false
// when the namespace already exists. A file left without a mount by an
// interrupted Create or Remove (see Leftover) is reused.
func Create(name string) (created bool, err error) { return CreateMarked(name, "") }

// CreateMarked is Create writing mark (see Mark) inside the new namespace
// before binding it to its name: a namespace bound at Path(name) by
// CreateMarked carries its mark from the first moment anyone can see it,
// so a kill at any point never leaves it unmarked. Its lo comes up with
// the mark. An empty mark writes none (and lo stays down). An existing
// namespace is left as it is, mark included.
func CreateMarked(name, mark string) (created bool, err error) {
	return CreateSetUp(name, mark, nil)
}

// CreateSetUp is CreateMarked running setup (when not nil) inside the new
// namespace, on the thread that made it, after the mark and before the
// binding: the namespace is configured when it first appears under its
// name. An error from setup leaves nothing bound.
//
// The namespace is made and set up on a thread of its own before the
// name is claimed: only the check that nothing is bound at the name and
// the bind mount run under LockClaims, so that two processes never bind
// one name twice, while namespaces are made in parallel (a 1000-host
// apply waited most of its first second for the lock when it was held
// around making them: bench/provision-1000). When a namespace is bound at
// the name by the time the new one is ready, the new one is dropped,
// setup's work with it, and created is false.
func CreateSetUp(name, mark string, setup func() error) (created bool, err error) {
	if ok, err := Exists(name); err != nil || ok {
		return false, err
	}
	if err := os.MkdirAll(Dir, 0o755); err != nil {
		return false, err
	}
	err = onThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("unshare: %w", err)
		}
		if mark != "" || setup != nil {
			if err := configureHere(mark, setup); err != nil {
				return err
			}
		}
		var err error
		created, err = bindHere(name)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("create namespace %s: %w", name, err)
	}
	return created, nil
}

// bindHere binds the calling thread's namespace at Path(name) unless a
// namespace is bound there already (bound false), under LockClaims,
// having made Dir a shared mount point first (shareDir). A file left at
// the name without a namespace (Leftover) is reused, unless a namespace
// is bound there under a later mount over Dir (a *HiddenError); the file
// is removed again when the binding fails.
func bindHere(name string) (bound bool, err error) {
	unlock, err := LockClaims()
	if err != nil {
		return false, err
	}
	defer unlock()
	if ok, err := Exists(name); err != nil || ok {
		return false, err
	}
	if err := shareDir(); err != nil {
		return false, err
	}
	p := Path(name)
	left, err := mountPoint(p)
	if err != nil {
		return false, err
	}
	if left {
		// A file at the name, and no namespace seen on it: a Leftover, or
		// the name of one a later mount over Dir hides (which a new one
		// bound over it would leave alive, unreachable).
		if h, _ := Hidden(name); h != nil {
			return false, h
		}
	}
	if Between != nil {
		Between()
	}
	if err := unix.Mount(threadNS, p, "none", unix.MS_BIND, ""); err != nil {
		os.Remove(p)
		return false, fmt.Errorf("bind mount %s: %w", p, err)
	}
	return true, nil
}

// mountPoints is the file this process made last for a namespace to be
// bound on, held open: every later mount point is another name of its
// inode (a hard link), a directory entry without an inode of its own.
// (On this machine /run is ext4 without a journal, whose inode allocator
// passes over every inode freed in the last seconds, one by one, for
// each new inode: after a destroy of 1000 namespaces, making the 1000
// files of the next apply took 12% of its CPU, under LockClaims: perf
// record -g of bench/provision-1000's apply.) A name is removed as any
// file is (Remove, ip netns delete); the inode goes with its last name.
var mountPoints struct {
	mu     sync.Mutex
	anchor *os.File // nil: none yet, or it could not be linked again
}

// mountPoint makes the file at p, where nothing is bound, for a
// namespace to be bound on: a new name of the anchor's inode, or a new
// file, which becomes the anchor, when there is none or the link fails
// (every name of the anchor removed, its link count at the file
// system's maximum, no CAP_DAC_READ_SEARCH). A file already at p (a
// Leftover) is used as it is, and left says so.
func mountPoint(p string) (left bool, err error) {
	mountPoints.mu.Lock()
	defer mountPoints.mu.Unlock()
	if a := mountPoints.anchor; a != nil {
		err := unix.Linkat(int(a.Fd()), "", unix.AT_FDCWD, p, unix.AT_EMPTY_PATH)
		if err == nil || errors.Is(err, unix.EEXIST) {
			return err != nil, nil
		}
		a.Close()
		mountPoints.anchor = nil
	}
	f, err := os.OpenFile(p, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if errors.Is(err, os.ErrExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	mountPoints.anchor = f
	return false, nil
}

// Leftover reports whether a file is at Path(name) with no namespace
// bound on it: what a kill leaves between Create making the file and
// mounting on it, or between Remove unmounting and removing it. It is no
// namespace (Exists is false, Open fails as for a missing one), `ip netns
// list` fails on it, Create reuses it and Remove removes it.
func Leftover(name string) (bool, error) {
	if err := checkName(name); err != nil {
		return false, err
	}
	if ok, err := Exists(name); err != nil || ok {
		return false, err
	}
	if _, err := os.Lstat(Path(name)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// Remove unbinds and removes the named namespace. The kernel frees it (and
// the links inside) once nothing else holds it. Removing a namespace that
// does not exist is not an error. A namespace a later mount over Dir
// hides cannot be removed: the error is a *HiddenError, which says what
// to run.
func Remove(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	p := Path(name)
	if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("remove namespace %s: unmount: %w", name, err)
	}
	if Between != nil {
		Between()
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		if errors.Is(err, unix.EBUSY) {
			if h, _ := Hidden(name); h != nil {
				return h
			}
		}
		return fmt.Errorf("remove namespace %s: %w", name, err)
	}
	return nil
}

// List returns the names of the bound namespaces whose names start with
// prefix.
func List(prefix string) ([]string, error) {
	ents, err := os.ReadDir(Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Open returns a handle (an open file descriptor) on the named namespace;
// the caller closes it. A missing namespace (a left-over file included)
// is an error wrapping unix.ENOENT. The empty name is the namespace of the calling
// thread (the machine's own, as tsolab never leaves threads elsewhere).
func Open(name string) (netns.NsHandle, error) {
	if name == "" {
		return netns.GetFromPath(threadNS)
	}
	if err := checkName(name); err != nil {
		return netns.None(), err
	}
	h, err := netns.GetFromPath(Path(name))
	if err != nil {
		return netns.None(), fmt.Errorf("namespace %s: %w", name, err)
	}
	// A left-over file (see Leftover) opens, but holds no namespace.
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(h), &st); err != nil || st.Type != unix.NSFS_MAGIC {
		h.Close()
		if err == nil {
			err = fmt.Errorf("no namespace is bound on %s: %w", Path(name), unix.ENOENT)
		}
		return netns.None(), fmt.Errorf("namespace %s: %w", name, err)
	}
	return h, nil
}

// Bound reports whether the namespace bound at name is the one h holds
// open: the same nsfs inode. While h is open, no other namespace can have
// its inode number, so a namespace removed and another made under the
// name since h was opened is told apart.
func Bound(name string, h netns.NsHandle) (bool, error) {
	if err := checkName(name); err != nil {
		return false, err
	}
	var at, held unix.Stat_t
	if err := unix.Stat(Path(name), &at); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, nil
		}
		return false, err
	}
	if err := unix.Fstat(int(h), &held); err != nil {
		return false, err
	}
	return at.Dev == held.Dev && at.Ino == held.Ino, nil
}

// ID identifies a namespace while a handle on it is open: its nsfs
// device and inode.
type ID struct{ dev, ino uint64 }

// IDOf returns the identity of the namespace h holds.
func IDOf(h netns.NsHandle) (ID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(h), &st); err != nil {
		return ID{}, err
	}
	return ID{dev: st.Dev, ino: st.Ino}, nil
}

// Do runs fn on an OS thread that has entered the named namespace, and
// moves that thread back before anything else can run on it. Sockets fn
// opens stay bound to the namespace after Do returns. The empty name runs
// fn where the caller is (the machine's own namespace).
func Do(name string, fn func() error) error {
	if name == "" {
		return fn()
	}
	target, err := Open(name)
	if err != nil {
		return err
	}
	defer target.Close()
	return DoHandle(target, fn)
}

// DoHandle is Do with an open namespace handle.
func DoHandle(target netns.NsHandle, fn func() error) error {
	return onThread(func() error {
		if err := unix.Setns(int(target), unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("setns: %w", err)
		}
		return fn()
	})
}

// onThread runs fn on a fresh goroutine locked to its OS thread, having
// saved the thread's network namespace; fn may change it. Afterwards the
// thread moves back and is unlocked, or, if it cannot move back, its
// goroutine exits still locked so the runtime ends the thread.
func onThread(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		sent := false
		defer func() {
			// fn called runtime.Goexit (t.Fatal on this goroutine): the
			// thread is still locked, in whatever namespace, and is
			// discarded; the caller must not wait forever.
			if !sent {
				errc <- errors.New("the function run in the namespace exited its goroutine (runtime.Goexit; t.Fatal?)")
			}
		}()
		send := func(err error) { sent = true; errc <- err }
		orig, err := unix.Open(threadNS, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			send(fmt.Errorf("save thread namespace: %w", err))
			return // still locked: the thread is discarded
		}
		defer unix.Close(orig)
		var ferr error
		func() {
			defer func() {
				if r := recover(); r != nil {
					ferr = fmt.Errorf("panic in namespace: %v", r)
				}
			}()
			ferr = fn()
		}()
		if !threadIn(orig) {
			if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
				send(errors.Join(ferr, fmt.Errorf("restore thread namespace: %w", err)))
				return // still locked: the thread is discarded
			}
		}
		runtime.UnlockOSThread()
		send(ferr)
	}()
	return <-errc
}

// threadIn reports whether the calling thread is in the namespace fd
// holds: then there is nothing to restore. A user the kernel refused
// the move (unshare or setns: EPERM) may not setns back either, even
// into its own namespace, and that second refusal told nothing new.
func threadIn(fd int) bool {
	var at, held unix.Stat_t
	if unix.Stat(threadNS, &at) != nil || unix.Fstat(fd, &held) != nil {
		return false // unknown: restore
	}
	return at.Dev == held.Dev && at.Ino == held.Ino
}

// Scratch runs fn on a thread in a new anonymous network namespace that
// disappears afterwards (for capability probes: nothing is named, nothing
// can be left behind).
func Scratch(fn func() error) error {
	return onThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("unshare: %w", err)
		}
		return fn()
	})
}

// Netlink returns a NETLINK_ROUTE handle bound to the named namespace (the
// empty name: the machine's own). Only the route family is opened: the
// xfrm and netfilter sockets netlink.NewHandleAt opens by default cost a
// namespace switch each and are never used here.
func Netlink(name string) (*netlink.Handle, error) {
	if name == "" {
		return netlink.NewHandle(unix.NETLINK_ROUTE)
	}
	var h *netlink.Handle
	err := Do(name, func() error {
		var err error
		h, err = netlink.NewHandle(unix.NETLINK_ROUTE)
		return err
	})
	return h, err
}
