package kernel_test

import (
	"os"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine/kernel"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
)

// TestCongestionControlReadBack: a run records the congestion control
// its client sockets ran, as TCP_CONGESTION reads it back: the
// namespace's default (net.ipv4.tcp_congestion_control, set here in the
// test's own tx namespace only, to reno, which neither the machine's
// default here, bbr, nor Linux's, cubic, is) when the workload sets no
// cc, and the workload's cc when it sets one.
func TestCongestionControlReadBack(t *testing.T) {
	p := newPair(t, 1500)
	err := netnsfs.Do(p.Naming.HostNS("tx"), func() error {
		return os.WriteFile("/proc/sys/net/ipv4/tcp_congestion_control", []byte("reno"), 0)
	})
	if err != nil {
		t.Fatalf("set the tx namespace's default congestion control: %v", err)
	}
	for _, tc := range []struct{ cc, want string }{{"", "reno"}, {"cubic", "cubic"}} {
		res := runWorkload(t, p, &config.Workload{
			Name: "bulk", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"},
			Connections: 2, WriteSize: 65536, Duration: 1200 * time.Millisecond, CC: tc.cc,
		}, kernel.Options{})
		if res.CongestionControl != tc.want {
			t.Errorf("cc %q: congestion_control = %q, want %q", tc.cc, res.CongestionControl, tc.want)
		}
		if got := res.Provenance.Sysctls["tx"]["tcp_congestion_control"]; got != "reno" {
			t.Errorf("cc %q: the tx namespace's tcp_congestion_control in the provenance = %q, want reno", tc.cc, got)
		}
	}
}
