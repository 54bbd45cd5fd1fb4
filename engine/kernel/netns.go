package kernel

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"
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
