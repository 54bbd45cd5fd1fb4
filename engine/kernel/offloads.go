package kernel

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/provider/nic"
)

// offloadsOf reads the offloads in force on an interface in a namespace.
func offloadsOf(ns, ifname string) (map[string]bool, error) { return nic.ReadOffloads(ns, ifname) }

// gsoNotes explains what the AF_PACKET ring could see on sender NICs
// that cut super-packets in software, when the ring counted the send
// units (the eBPF counter sees them before the cut).
func gsoNotes(job Job, taps []tapResult, offloads map[string]map[string]bool) []string {
	if job.DisableCapture {
		return nil
	}
	for _, t := range taps {
		if t.Units != nil {
			return nil
		}
	}
	var notes []string
	seen := map[string]bool{}
	for _, ep := range job.Endpoints {
		o, ok := offloads[ep.SenderNIC]
		if !ok || seen[ep.SenderNIC] {
			continue
		}
		seen[ep.SenderNIC] = true
		if !o["tso"] {
			notes = append(notes, fmt.Sprintf("%s has TSO off: TCP still builds GSO super-packets (always, since Linux 4.19) and the device layer cuts them in software before the capture's tap, so send_units counts the units the driver received, not the skbs TCP built (the eBPF counter at the device layer did not run)", ep.SenderNIC))
		}
	}
	return notes
}

// hostNotes names host attributes that only the sim engine applies;
// kernels are the release of each machine's kernel ("" = this one's).
func hostNotes(req engine.RunRequest, kernels map[string]string) []string {
	var notes []string
	for _, h := range req.Scenario.Hosts {
		var attrs []string
		if h.Stack != "" {
			attrs = append(attrs, "stack")
		}
		if len(h.StackOptions) > 0 {
			attrs = append(attrs, "stack_options")
		}
		if h.CPU != "" {
			attrs = append(attrs, "cpu")
		}
		if h.Cores != 0 {
			attrs = append(attrs, "cores")
		}
		if h.CoresOf != "" {
			attrs = append(attrs, "cores_of")
		}
		if h.Bus != 0 {
			attrs = append(attrs, "bus")
		}
		if h.Scheduler != "" {
			attrs = append(attrs, "scheduler")
		}
		if !h.DelayedAck {
			// Linux has no switch that turns delayed ACKs off for a
			// socket (TCP_QUICKACK is cleared by the stack as it
			// goes), and with GRO every merged packet is ACKed at once
			// anyway: the kernel engine leaves the receiver as it is.
			attrs = append(attrs, "delayed_ack")
		}
		if len(attrs) > 0 {
			sort.Strings(attrs)
			where, release := "this machine's", kernelRelease()
			if h.Machine != "" {
				where, release = "machine "+h.Machine+"'s", kernels[h.Machine]
			}
			notes = append(notes, strings.TrimSpace(fmt.Sprintf("host.%s: %s describe the sim engine's model; the kernel engine runs %s kernel %s", h.Name, strings.Join(attrs, ", "), where, release)))
		}
	}
	return notes
}

// txPackets reads an interface's tx_packets counter in a namespace.
func txPackets(ns, ifname string) (uint64, error) {
	var n uint64
	err := inNamespace(ns, func() error {
		l, err := netlink.LinkByName(ifname)
		if err != nil {
			return err
		}
		if st := l.Attrs().Statistics; st != nil {
			n = st.TxPackets
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("interface counters of %s: %w", ifname, err)
	}
	return n, nil
}
