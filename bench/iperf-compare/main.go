// Command iperf-compare runs tsolab's kernel-engine stream workload once
// between two existing namespaces (made by run.sh) and prints one line:
// "throughput_bps=... capture_loss=... data_packets=... source=bpf|ring|none".
// It can switch TSO on the sender NIC first (through the ethtool ioctl),
// so run.sh needs no ethtool binary. It is a benchmark driver, not part
// of the product.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/safchain/ethtool"
	"github.com/vishvananda/netns"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/engine/kernel"
	"github.com/tsolab/tsolab/provider"
)

func main() {
	lab := flag.String("lab", "ipcmp", "lab id: the namespaces are tsl.LAB.tx and tsl.LAB.rx")
	txAddr := flag.String("tx-addr", "10.203.0.1/24", "sender NIC tx0 address")
	rxAddr := flag.String("rx-addr", "10.203.0.2/24", "receiver NIC rx0 address")
	dur := flag.Duration("duration", 3*time.Second, "stream duration")
	ws := flag.Int("write-size", 128<<10, "bytes per write (iperf3 -l)")
	conns := flag.Int("connections", 1, "parallel connections (iperf3 -P)")
	capture := flag.Bool("capture", true, "count send units (false: no counter at all, to measure what counting costs)")
	counterName := flag.String("counter", "auto", "send-unit counter: auto, bpf, ring or bpf+ring")
	tso := flag.String("tso", "", "set TSO on tx0 first: on, off, or empty to leave it")
	flag.Parse()

	counter, err := kernel.ParseCounter(*counterName)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	naming := provider.Naming{LabID: *lab}
	if *tso != "" {
		if err := setTSO(naming.HostNS("tx"), "tx0", *tso == "on"); err != nil {
			fmt.Fprintln(os.Stderr, "set tso:", err)
			os.Exit(1)
		}
	}
	sc := &config.Scenario{
		Name:  "bench",
		Hosts: []*config.Host{{Name: "tx", Kind: config.HostNamespace, DelayedAck: true}, {Name: "rx", Kind: config.HostNamespace, DelayedAck: true}},
		NICs: []*config.NIC{
			{Name: "tx0", Host: "tx", Peer: "rx0", Address: netip.MustParsePrefix(*txAddr)},
			{Name: "rx0", Host: "rx", Address: netip.MustParsePrefix(*rxAddr)},
		},
	}
	w := &config.Workload{Name: "stream", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"},
		Connections: *conns, WriteSize: *ws, Duration: *dur}
	sc.Workloads = []*config.Workload{w}
	res, err := kernel.New(kernel.Options{DisableCapture: !*capture, Counter: counter}).Run(context.Background(),
		engine.RunRequest{Scenario: sc, Workload: w, Naming: naming})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	m := res.Metrics
	source := "none"
	for _, n := range res.Notes {
		switch {
		case strings.HasPrefix(n, "send units counted by eBPF"):
			source = "bpf"
		case strings.HasPrefix(n, "send units counted by the AF_PACKET ring"):
			source = "ring"
		}
	}
	fmt.Printf("throughput_bps=%.0f capture_loss=%.0f data_packets=%.0f send_units=%.0f avg_send_bytes=%.0f cpu_tx_pct=%.1f cpu_rx_pct=%.1f retransmits=%.0f tso=%v source=%s\n",
		m[engine.MetricThroughputBps], m[engine.MetricCaptureLoss], m[engine.MetricDataPackets], m[engine.MetricSendUnits],
		m[engine.MetricAvgSendBytes], m[engine.MetricCPUTxPct], m[engine.MetricCPURxPct], m[engine.MetricRetransmits],
		res.Offloads["tx0"]["tso"], source)
	for _, n := range res.Notes {
		fmt.Fprintln(os.Stderr, "note:", n)
	}
}

// setTSO switches tx-tcp-segmentation on an interface inside a namespace
// and checks the kernel kept it.
func setTSO(ns, ifname string, on bool) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies in the namespace
		h, err := netns.GetFromName(ns)
		if err != nil {
			errc <- err
			return
		}
		defer h.Close()
		if err := netns.Set(h); err != nil {
			errc <- err
			return
		}
		e, err := ethtool.NewEthtool()
		if err != nil {
			errc <- err
			return
		}
		defer e.Close()
		if err := e.Change(ifname, map[string]bool{"tx-tcp-segmentation": on}); err != nil {
			errc <- err
			return
		}
		f, err := e.Features(ifname)
		if err == nil && f["tx-tcp-segmentation"] != on {
			err = fmt.Errorf("%s: tx-tcp-segmentation is %v after setting it to %v", ifname, f["tx-tcp-segmentation"], on)
		}
		errc <- err
	}()
	return <-errc
}
