package nic

import (
	"testing"

	"github.com/safchain/ethtool"
	"github.com/vishvananda/netlink"

	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
)

// BenchmarkFeatures compares reading a veth's features through
// safchain/ethtool (which fetches the name table every call) with the
// provider's read against the table probed once.
func BenchmarkFeatures(b *testing.B) {
	netnstest.Require(b)
	caps, err := (&prober{}).get()
	if err != nil {
		b.Fatal(err)
	}
	err = netnsfs.Scratch(func() error {
		h, err := netlink.NewHandle()
		if err != nil {
			return err
		}
		defer h.Close()
		if err := h.LinkAdd(&netlink.Veth{LinkAttrs: linkAttrs("v0"), PeerName: "v1", PeerTxQLen: -1}); err != nil {
			return err
		}
		et, err := ethtool.NewEthtool()
		if err != nil {
			return err
		}
		defer et.Close()
		sock, err := openFeatureSocket()
		if err != nil {
			return err
		}
		defer sock.Close()
		b.Run("safchain", func(b *testing.B) {
			for b.Loop() {
				if _, err := et.FeaturesWithState("v0"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("table", func(b *testing.B) {
			for b.Loop() {
				if _, err := sock.get(caps.table, "v0"); err != nil {
					b.Fatal(err)
				}
			}
		})
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
