// Command iperf-compare runs tsolab's kernel-engine stream workload once
// between two namespaces, tsl.LAB.tx and tsl.LAB.rx joined by the veth
// pair tx0 <-> rx0, and prints one line:
// "throughput_bps=... capture_loss=... data_packets=... source=bpf|ring|none
// task_tx_pct=... task_rx_pct=... task_other_pct=...". task_tx_pct and
// task_rx_pct are the CPU its threads used, in % of one core, as iperf3
// reports its own (the threads' runtime, softirq work in their context
// included, softirq on idle CPUs not): the sender's threads plus every
// other thread of the process (Go runtime, sampler), and the receiver's
// threads; task_other_pct is the other threads' part of task_tx_pct. All
// three come from the engine's CPU note. It can switch TSO on the sender
// NIC first (through the ethtool ioctl), so run.sh needs no ethtool
// binary; with -set-tso it only does that. With -setup it only makes the
// two namespaces and the pair (MTU 1500, through netlink), with -teardown
// it only removes them, so run.sh needs no ip binary to build them. It is
// a benchmark driver, not part of the product.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/engine/kernel"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/result"
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
	cc := flag.String("cc", "", "congestion control of the stream's sockets (TCP_CONGESTION; iperf3 -C); empty: the namespace's default")
	tso := flag.String("tso", "", "set TSO on tx0 first: on, off, or empty to leave it")
	setTSO := flag.Bool("set-tso", false, "only set TSO on tx0 as -tso says, then exit")
	setup := flag.Bool("setup", false, "only make the namespaces and the veth pair with the two addresses (MTU 1500), then exit")
	teardown := flag.Bool("teardown", false, "only remove the namespaces (and the pair with them), then exit")
	flag.Parse()

	naming := provider.Naming{LabID: *lab}
	tx := netnsfs.End{NS: naming.HostNS("tx"), IfName: "tx0", Addr: mustPrefix(*txAddr)}
	rx := netnsfs.End{NS: naming.HostNS("rx"), IfName: "rx0", Addr: mustPrefix(*rxAddr)}
	if *setup || *teardown {
		fixture(tx, rx, *setup, *teardown)
		return
	}
	counter, err := kernel.ParseCounter(*counterName)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	switch *tso {
	case "":
	case "on", "off":
		if err := netnsfs.SetFeatures(tx.NS, tx.IfName, map[string]bool{"tx-tcp-segmentation": *tso == "on"}); err != nil {
			fmt.Fprintln(os.Stderr, "set tso:", err)
			os.Exit(1)
		}
	default:
		fmt.Fprintf(os.Stderr, "-tso %q: want on, off or empty\n", *tso)
		os.Exit(2)
	}
	if *setTSO {
		if *tso == "" {
			fmt.Fprintln(os.Stderr, "-set-tso needs -tso on or -tso off")
			os.Exit(2)
		}
		return
	}
	sc := &config.Scenario{
		Name:  "bench",
		Hosts: []*config.Host{{Name: "tx", Kind: config.HostNamespace, DelayedAck: true}, {Name: "rx", Kind: config.HostNamespace, DelayedAck: true}},
		NICs: []*config.NIC{
			{Name: tx.IfName, Host: "tx", Peer: rx.IfName, Address: tx.Addr},
			{Name: rx.IfName, Host: "rx", Address: rx.Addr},
		},
	}
	w := &config.Workload{Name: "stream", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"},
		Connections: *conns, WriteSize: *ws, Duration: *dur, CC: *cc}
	sc.Workloads = []*config.Workload{w}
	res, err := kernel.New(kernel.Options{DisableCapture: !*capture, Counter: counter}).Run(context.Background(),
		engine.RunRequest{Scenario: sc, Workload: w, Naming: naming})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	m := res.Metrics
	source := "none"
	taskTx, taskRx, taskOther := -1.0, -1.0, -1.0
	for _, n := range res.Notes {
		switch {
		case strings.HasPrefix(n, "send units counted by eBPF"):
			source = "bpf"
		case strings.HasPrefix(n, "send units counted by the AF_PACKET ring"):
			source = "ring"
		case cpuNote.MatchString(n):
			f := cpuNote.FindStringSubmatch(n)
			tx, _ := strconv.ParseFloat(f[1], 64)
			rx, _ := strconv.ParseFloat(f[2], 64)
			other, _ := strconv.ParseFloat(f[3], 64)
			taskTx, taskRx, taskOther = tx+other, rx, other
		}
	}
	if taskTx < 0 {
		fmt.Fprintf(os.Stderr, "no note gives the threads' CPU (the engine's CPU note changed?): %q\n", res.Notes)
		os.Exit(1)
	}
	fmt.Printf("throughput_bps=%.0f capture_loss=%.0f data_packets=%.0f send_units=%.0f avg_send_bytes=%.0f cpu_tx_pct=%.1f cpu_rx_pct=%.1f retransmits=%.0f tso=%v source=%s task_tx_pct=%.1f task_rx_pct=%.1f task_other_pct=%.1f cc=%s\n",
		m[result.MetricThroughputBps], m[result.MetricCaptureLoss], m[result.MetricDataPackets], m[result.MetricSendUnits],
		m[result.MetricAvgSendBytes], m[result.MetricCPUTxPct], m[result.MetricCPURxPct], m[result.MetricRetransmits],
		res.Offloads["tx0"]["tso"], source, taskTx, taskRx, taskOther, res.CongestionControl)
	for _, n := range res.Notes {
		fmt.Fprintln(os.Stderr, "note:", n)
	}
}

// cpuNote is the engine's note on its threads' CPU: sender threads,
// receiver threads, the process's other threads.
var cpuNote = regexp.MustCompile(`^CPU in % of one core: sender threads ([0-9.]+), receiver threads ([0-9.]+), the process's other threads ([0-9.]+)`)

// fixture makes (setup) or removes (teardown) the two namespaces and the
// pair, and exits 2 if any flag but -lab and the addresses was given, as
// it would be ignored.
func fixture(tx, rx netnsfs.End, setup, teardown bool) {
	var extra []string
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "lab", "tx-addr", "rx-addr", "setup", "teardown":
		default:
			extra = append(extra, "-"+f.Name)
		}
	})
	if setup && teardown || len(extra) > 0 {
		fmt.Fprintf(os.Stderr, "-setup and -teardown take only -lab, -tx-addr and -rx-addr, and not each other (got %v)\n", extra)
		os.Exit(2)
	}
	var err error
	if setup {
		err = netnsfs.CreatePair(tx, rx, 1500)
	} else {
		err = errors.Join(netnsfs.Remove(tx.NS), netnsfs.Remove(rx.NS))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// mustPrefix parses an address flag or exits 2.
func mustPrefix(s string) netip.Prefix {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	return p
}
