package nic

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
)

// nsConn is one namespace a provider call works in: a handle on the
// namespace, a netlink socket opened inside it, and the ethtool socket
// opened there when features are first read or set. Sockets stay bound
// to the namespace they were opened in, so after one switch of a locked
// thread every request runs from any goroutine.
type nsConn struct {
	name string         // "" = the machine's own namespace
	fd   netns.NsHandle // for IFLA_NET_NS_FD
	nl   *netlink.Handle
	// probe gives the kernel's feature names, probed when features are
	// first read or set (a NIC without offloads never needs them); set
	// by the NIC provider, nil for a switch, which never touches features.
	probe *prober

	etOnce sync.Once
	et     featureSocket
	etErr  error
	// pool is the shared namespace c belongs to, nil when the call
	// opened c for itself.
	pool *pooled

	markOnce sync.Once
	mark     string // the alias of lo: the namespace's ownership mark
	markErr  error
	// marks, when set, may know mark already (host.Checked.Mark).
	marks *host.Checked

	rawOnce sync.Once
	raw     *netnsfs.RouteSocket // for requests built by hand
	rawErr  error
}

// errNoNamespace reports that a namespace does not exist.
var errNoNamespace = errors.New("namespace does not exist")

// openNS opens the named namespace ("" = the machine's own); its socket
// for requests built by hand is opened when first used.
func openNS(name string) (*nsConn, error) { return openNSWith(name, false) }

// openNSWith is openNS opening the socket for requests built by hand
// too when raw, on the same visit to the namespace (a create uses it).
func openNSWith(name string, raw bool) (*nsConn, error) {
	fd, err := netnsfs.Open(name)
	if errors.Is(err, unix.ENOENT) {
		return nil, fmt.Errorf("%s: %w", name, errNoNamespace)
	}
	if err != nil {
		return nil, err
	}
	c := &nsConn{name: name, fd: fd}
	open := func() error {
		var err error
		if c.nl, err = netlink.NewHandle(unix.NETLINK_ROUTE); err != nil {
			return fmt.Errorf("netlink socket: %w", err)
		}
		if raw {
			c.rawOnce.Do(func() { c.rawErr = c.openRaw() })
		}
		return c.rawErr
	}
	err = c.inside(open)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("namespace %s: %w", name, err)
	}
	return c, nil
}

// Close releases the sockets and the namespace handle.
func (c *nsConn) Close() {
	if c == nil {
		return
	}
	if c.nl != nil {
		c.nl.Close()
	}
	c.raw.Close()
	c.et.Close()
	c.fd.Close()
}

// inside runs fn on a thread in c's namespace (where the caller is, for
// the machine's own), to open sockets there.
func (c *nsConn) inside(fn func() error) error {
	if c.name == "" {
		return fn()
	}
	return netnsfs.DoHandle(c.fd, fn)
}

// featureAccess returns the ethtool socket, opened on first use, and the
// kernel's feature names.
func (c *nsConn) featureAccess() (featureSocket, *featureTable, error) {
	if c.probe == nil {
		panic("nic: features touched without the kernel's feature table")
	}
	caps, err := c.probe.get()
	if err != nil {
		return featureSocket{}, nil, err
	}
	c.etOnce.Do(func() {
		c.etErr = c.inside(func() error {
			var err error
			if c.et, err = openFeatureSocket(); err != nil {
				return fmt.Errorf("ethtool socket: %w", err)
			}
			return nil
		})
	})
	return c.et, caps.table, c.etErr
}

// features reads a device's features.
func (c *nsConn) features(ifname string) (Features, error) {
	et, table, err := c.featureAccess()
	if err != nil {
		return nil, err
	}
	return et.get(table, ifname)
}

// setFeatures asks for features on or off.
func (c *nsConn) setFeatures(ifname string, req map[string]bool) error {
	et, table, err := c.featureAccess()
	if err != nil {
		return err
	}
	return et.set(table, ifname, req)
}

// foreign is host.ForeignNamespace for c's namespace, its mark (the
// alias of its lo) read through c's socket, once for as long as c is
// open, unless the host provider knows it (c.marks); nil for the
// machine's own. A mark that cannot be read is an
// error, as with ForeignNamespace: nothing is touched in a namespace
// whose owner is unknown.
func (c *nsConn) foreign(n provider.Naming, a provider.Addr, op string) *hcl.Diagnostic {
	if c.name == "" {
		return nil
	}
	c.markOnce.Do(func() {
		if mark, ok := c.marks.Mark(c.name, c.fd); ok {
			c.mark = mark
			return
		}
		lo, err := c.nl.LinkByIndex(1)
		if err != nil {
			c.markErr = err
			return
		}
		c.mark = lo.Attrs().Alias
	})
	if c.markErr != nil {
		return &hcl.Diagnostic{Severity: hcl.DiagError,
			Summary: fmt.Sprintf("%s: namespace %s: read the mark of namespace %s: find lo: %v", a, c.name, c.name, c.markErr)}
	}
	return host.ForeignMark(n, a, c.name, c.mark, op)
}

// execute sends a request built by hand through c's raw socket and
// waits for the kernel's answer.
func (c *nsConn) execute(req *nl.NetlinkRequest) error {
	sock, err := c.rawSocket()
	if err != nil {
		return err
	}
	_, err = sock.Do(req)
	return err
}

// create sends req, an RTM_NEWLINK that creates the link name in c's
// namespace, with NLM_F_ECHO through c's raw socket, and returns the
// link as the kernel's echo reports it: what the kernel made, with its
// index, without asking for it again. A kernel older than 6.3, which
// does not echo a creation, is asked by name.
func (c *nsConn) create(req *nl.NetlinkRequest, name string) (netlink.Link, error) {
	sock, err := c.rawSocket()
	if err != nil {
		return nil, err
	}
	req.Flags |= unix.NLM_F_ECHO
	msg, err := sock.Do(req)
	if err != nil {
		return nil, err
	}
	if msg == nil {
		l, err := c.linkByName(name)
		if err == nil && l == nil {
			err = errors.New("not found after creation")
		}
		return l, err
	}
	return netlink.LinkDeserialize(nil, msg)
}

// rawSocket is a netlink socket in c's namespace for requests built by
// hand, opened on first use (or with c's other socket: openNSWith).
func (c *nsConn) rawSocket() (*netnsfs.RouteSocket, error) {
	c.rawOnce.Do(func() { c.rawErr = c.inside(c.openRaw) })
	return c.raw, c.rawErr
}

// openRaw opens c.raw in the calling thread's namespace.
func (c *nsConn) openRaw() error {
	s, err := netnsfs.OpenRouteSocket()
	if err != nil {
		return err
	}
	c.raw = s
	return nil
}

// addAddress adds p to the link of index index (as netlink.Handle's
// AddrAdd does: an IPv4 address with its broadcast address, an IPv6 one
// without duplicate address detection, toAddr), through c's raw socket.
func (c *nsConn) addAddress(index int, p netip.Prefix) error {
	family := unix.AF_INET
	if p.Addr().Is6() {
		family = unix.AF_INET6
	}
	msg := nl.NewIfAddrmsg(family)
	msg.Index = uint32(index)
	msg.Prefixlen = uint8(p.Bits())
	if p.Addr().Is6() {
		msg.Flags = unix.IFA_F_NODAD
	}
	req := nl.NewNetlinkRequest(unix.RTM_NEWADDR, unix.NLM_F_CREATE|unix.NLM_F_EXCL|unix.NLM_F_ACK)
	req.AddData(msg)
	ip := p.Addr().AsSlice()
	req.AddData(nl.NewRtAttr(unix.IFA_LOCAL, ip))
	req.AddData(nl.NewRtAttr(unix.IFA_ADDRESS, ip))
	if p.Addr().Is4() && p.Bits() < 31 {
		brd := p.Addr().As4()
		mask := net.CIDRMask(p.Bits(), 32)
		for i := range brd {
			brd[i] |= ^mask[i]
		}
		req.AddData(nl.NewRtAttr(unix.IFA_BROADCAST, brd[:]))
	}
	return c.execute(req)
}

// markNew gives l, a link the call made, not yet up with a carrier, the
// alias alias and the IPv6 link-local address generation mode mode
// (IN6_ADDR_GEN_MODE_*, see AttrAddrGenMode) in one RTM_SETLINK: the
// kernel gives a link its link-local address (or none) when it comes
// up with a carrier, by the mode it has then.
func (c *nsConn) markNew(l netlink.Link, alias string, mode uint8) error {
	err := c.setLink(func(inet6 bool) *nl.NetlinkRequest {
		req := setLinkRequest(l.Attrs().Index, false, inet6, mode)
		req.AddData(nl.NewRtAttr(unix.IFLA_IFALIAS, []byte(alias)))
		return req
	})
	if err == nil {
		l.Attrs().Alias = alias
	}
	return err
}

// setLink sends the RTM_SETLINK build makes, with the IPv6 part
// (inet6), or without it when the kernel has no IPv6 (EAFNOSUPPORT):
// then there is no link-local address to leave out.
func (c *nsConn) setLink(build func(inet6 bool) *nl.NetlinkRequest) error {
	err := c.execute(build(true))
	if errors.Is(err, unix.EAFNOSUPPORT) {
		err = c.execute(build(false))
	}
	return err
}

// setLinkRequest is an RTM_SETLINK of link index, setting it up when up,
// with the IPv6 address generation mode mode when inet6; callers add to
// it.
func setLinkRequest(index int, up, inet6 bool, mode uint8) *nl.NetlinkRequest {
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(index)
	if up {
		msg.Change, msg.Flags = unix.IFF_UP, unix.IFF_UP
	}
	req := nl.NewNetlinkRequest(unix.RTM_SETLINK, unix.NLM_F_ACK)
	req.AddData(msg)
	if inet6 {
		spec := nl.NewRtAttr(unix.IFLA_AF_SPEC, nil)
		spec.AddRtAttr(unix.AF_INET6, nil).AddRtAttr(unix.IFLA_INET6_ADDR_GEN_MODE, []byte{mode})
		req.AddData(spec)
	}
	return req
}

// linkByName finds a link; nil, nil when there is none.
func (c *nsConn) linkByName(name string) (netlink.Link, error) {
	l, err := c.nl.LinkByName(name)
	var nf netlink.LinkNotFoundError
	if errors.As(err, &nf) {
		return nil, nil
	}
	return l, err
}

// linkAttrs returns attributes for a new link called name. (A zero
// LinkAttrs would ask for txqueuelen 0.)
func linkAttrs(name string) netlink.LinkAttrs {
	a := netlink.NewLinkAttrs()
	a.Name = name
	return a
}
