package host

import (
	"sync"

	"github.com/tsolab/tsolab/provider/host/netnsfs"
)

// hiddenAtFirstRead is which namespaces a later mount over netnsfs.Dir
// hides (netnsfs.HiddenAll), read once, at a provider's first Read: right
// after `ip netns add` binds Dir over itself, the bind holds copies of
// the namespaces bound before it, so they read as they were, and only
// destroy would fail (EBUSY); a plan's refresh says so from this. One
// read of /proc/self/mountinfo a command, not one a host (a 1000-host
// lab's plan). A namespace hidden later in the same command is seen by
// Delete and Create, which check it themselves.
type hiddenAtFirstRead struct {
	once sync.Once
	m    map[string]*netnsfs.HiddenError // nil when it could not be told
}

// of is the *HiddenError of namespace ns, nil when it is not hidden or
// that could not be told.
func (h *hiddenAtFirstRead) of(ns string) *netnsfs.HiddenError {
	h.once.Do(func() { h.m, _ = netnsfs.HiddenAll() })
	return h.m[ns]
}
