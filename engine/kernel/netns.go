package kernel

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// inNamespace runs fn on a fresh OS thread that has entered the named
// network namespace, and waits for it. ns == "" means the namespace of the
// process (a host of kind "local"). The thread is locked and never
// unlocked: when the goroutine ends, the Go runtime terminates the thread
// rather than reuse one left in a foreign namespace.
func inNamespace(ns string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if ns != "" {
			h, err := netns.GetFromName(ns)
			if err != nil {
				errc <- fmt.Errorf("open network namespace %s: %w", ns, err)
				return
			}
			defer h.Close()
			if err := netns.Set(h); err != nil {
				errc <- fmt.Errorf("enter network namespace %s: %w", ns, err)
				return
			}
		}
		errc <- fn()
	}()
	return <-errc
}

// deviceID names an interface of the calling thread's namespace the way
// the kernel does: its ifindex and the inode number of the namespace
// (ns.inum). Call it inside inNamespace.
func deviceID(ifname string) (ifindex int, netnsInode uint64, err error) {
	l, err := netlink.LinkByName(ifname)
	if err != nil {
		return 0, 0, fmt.Errorf("interface %s: %w", ifname, err)
	}
	var st unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &st); err != nil {
		return 0, 0, fmt.Errorf("network namespace of interface %s: %w", ifname, err)
	}
	return l.Attrs().Index, st.Ino, nil
}
