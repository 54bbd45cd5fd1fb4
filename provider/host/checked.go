package host

import (
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/vishvananda/netns"

	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
)

// Checked remembers, for Delete, the mark a Read found in each namespace
// of the lab's (a host's, a switch's), with a handle on that namespace
// held open; the host provider's also remembers the namespaces its
// Create made, for the NIC provider's look at their marks (Mark). A destroy reads every resource, then removes them; a mark
// need not be read again when the namespace bound at the name is still
// the one Read looked in: the same inode, which no other namespace can
// have while the handle keeps this one alive. Reading it again cost the
// most of a 1000-host destroy's removals: a request for lo waits for the
// rtnl lock, which the kernel holds for long stretches while it frees
// the namespaces removed before (bench/provision-1000).
//
// A namespace removed by hand after a Read stays in the kernel, with its
// links, until the next Read of it or the end of the command. The zero
// Checked is ready; it is safe for concurrent use.
type Checked struct {
	mu sync.Mutex
	ns map[string]checked
}

// checked is one namespace Read looked in (or Create made).
type checked struct {
	h    netns.NsHandle
	id   netnsfs.ID // h's namespace
	mark string
}

// keep remembers that namespace ns, open as h, carried mark; it takes h
// over.
func (c *Checked) keep(ns string, h netns.NsHandle, mark string) {
	id, err := netnsfs.IDOf(h)
	if err != nil {
		h.Close()
		return // not remembered: asked again
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.ns[ns]; ok {
		old.h.Close()
	}
	if c.ns == nil {
		c.ns = map[string]checked{}
	}
	c.ns[ns] = checked{h: h, id: id, mark: mark}
}

// Mark returns the mark a Read (or Create) of this provider found in
// namespace ns when h, a handle the caller opened on the namespace bound
// at ns, is that same namespace (while the Read's handle is kept, no
// other namespace has its identity); ok is false when the caller must
// read the mark itself. The NIC provider asks it before reading a NIC's
// namespace's mark (provider/nic).
func (c *Checked) Mark(ns string, h netns.NsHandle) (mark string, ok bool) {
	if c == nil {
		return "", false
	}
	c.mu.Lock()
	e, found := c.ns[ns]
	c.mu.Unlock()
	if !found {
		return "", false
	}
	id, err := netnsfs.IDOf(h)
	if err != nil || id != e.id {
		return "", false
	}
	return e.mark, true
}

// forget drops what keep remembered of ns.
func (c *Checked) forget(ns string) {
	if e, ok := c.take(ns); ok {
		e.h.Close()
	}
}

func (c *Checked) take(ns string) (checked, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.ns[ns]
	delete(c.ns, ns)
	return e, ok
}

// ReadNamespace returns the read of resource a, recorded in n's state
// with the namespace ns, when ns is not there for that state: gone when
// no namespace is bound at its name, with Remains when a file is left
// there (netnsfs.Leftover), and gone with a warning when the namespace
// is not n's (ForeignNamespace). It returns nil when ns is there and n's.
// It remembers the mark it read, for Foreign.
func (c *Checked) ReadNamespace(n provider.Naming, a provider.Addr, ns string) *provider.ReadResponse {
	c.forget(ns)
	if r := namespaceMissing(a, ns); r != nil {
		return r
	}
	mark, h, ok, err := netnsfs.OpenMarked(ns)
	if err != nil {
		d := newDiags(a)
		d.errorf("namespace %s", err, ns)
		return &provider.ReadResponse{Diagnostics: d.diags}
	}
	if !ok {
		return &provider.ReadResponse{Gone: true}
	}
	c.keep(ns, h, mark)
	if w := ForeignMark(n, a, ns, mark, "read"); w != nil {
		return &provider.ReadResponse{Gone: true, Diagnostics: hcl.Diagnostics{w}}
	}
	return nil
}

// Foreign is ForeignNamespace(n, a, ns, "delete"), from the mark a Read
// found when ns is still the namespace it read, else from the mark read
// now. The caller calls release once it is done with ns (the handle the
// Read kept holds the namespace until then).
func (c *Checked) Foreign(n provider.Naming, a provider.Addr, ns string) (w *hcl.Diagnostic, release func()) {
	e, ok := c.take(ns)
	if !ok {
		return ForeignNamespace(n, a, ns, "delete"), func() {}
	}
	release = func() { e.h.Close() }
	if same, err := netnsfs.Bound(ns, e.h); err == nil && same {
		return ForeignMark(n, a, ns, e.mark, "delete"), release
	}
	return ForeignNamespace(n, a, ns, "delete"), release
}
