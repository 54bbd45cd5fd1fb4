package netnsfs_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
)

// TestRouteSocket: a request's echo comes back with its acknowledgement,
// a refusal as the kernel's errno, and the socket serves the next
// request after one.
func TestRouteSocket(t *testing.T) {
	netnstest.Require(t)
	newVeth := func(name string) *nl.NetlinkRequest {
		req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_CREATE|unix.NLM_F_EXCL|unix.NLM_F_ACK|unix.NLM_F_ECHO)
		req.AddData(nl.NewIfInfomsg(unix.AF_UNSPEC))
		req.AddData(nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(name)))
		info := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
		info.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated("veth"))
		peer := info.AddRtAttr(nl.IFLA_INFO_DATA, nil).AddRtAttr(nl.VETH_INFO_PEER, nil)
		nl.NewIfInfomsgChild(peer, unix.AF_UNSPEC)
		peer.AddRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated("p"+name))
		req.AddData(info)
		return req
	}
	err := netnsfs.Scratch(func() error {
		s, err := netnsfs.OpenRouteSocket()
		if err != nil {
			return err
		}
		defer s.Close()
		msg, err := s.Do(newVeth("d0"))
		if err != nil {
			return fmt.Errorf("create d0: %w", err)
		}
		l, err := netlink.LinkDeserialize(nil, msg)
		if err != nil || l.Attrs().Name != "d0" || l.Attrs().Index == 0 {
			t.Errorf("echo of d0: %+v, %v; want the link d0 with its index", l, err)
		}
		if _, err := s.Do(newVeth("d0")); !errors.Is(err, unix.EEXIST) {
			t.Errorf("create d0 again: %v, want EEXIST", err)
		}
		if msg, err := s.Do(newVeth("d1")); err != nil || msg == nil {
			t.Errorf("create d1 after a refusal: echo %d bytes, %v", len(msg), err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
