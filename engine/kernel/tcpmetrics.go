package kernel

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// The tcp_metrics generic netlink family (include/uapi/linux/tcp_metrics.h);
// golang.org/x/sys/unix does not define it.
const (
	tcpMetricsGenlName    = "tcp_metrics"
	tcpMetricsGenlVersion = 1
	tcpMetricsCmdDel      = 2 // TCP_METRICS_CMD_DEL
	tcpMetricsAttrAddrV4  = 1 // TCP_METRICS_ATTR_ADDR_IPV4, 4 bytes, network order
	tcpMetricsAttrAddrV6  = 2 // TCP_METRICS_ATTR_ADDR_IPV6, 16 bytes
)

// forgetPeer deletes what the calling thread's network namespace caches
// of TCP connections to addr (net/ipv4/tcp_metrics.c): when a connection
// ends, tcp_update_metrics stores its RTT, RTT variance, reordering and
// cwnd (and ssthresh unless net.ipv4.tcp_no_ssthresh_metrics_save, 1 by
// default), and tcp_init_metrics seeds the next connection to addr from
// them: a run would start from the state the last one left. It deletes
// every entry for addr whatever its source address (a
// TCP_METRICS_CMD_DEL with the address alone), and nothing else. found
// says whether an entry was cached (the kernel answers ESRCH when none
// was). Call it inside inNamespace.
func forgetPeer(addr netip.Addr) (found bool, err error) {
	fam, err := netlink.GenlFamilyGet(tcpMetricsGenlName)
	if err != nil {
		return false, fmt.Errorf("generic netlink family %s: %w", tcpMetricsGenlName, err)
	}
	req := nl.NewNetlinkRequest(int(fam.ID), unix.NLM_F_ACK)
	req.AddData(&nl.Genlmsg{Command: tcpMetricsCmdDel, Version: tcpMetricsGenlVersion})
	addr = addr.Unmap()
	if addr.Is4() {
		req.AddData(nl.NewRtAttr(tcpMetricsAttrAddrV4, addr.AsSlice()))
	} else {
		req.AddData(nl.NewRtAttr(tcpMetricsAttrAddrV6, addr.AsSlice()))
	}
	_, err = req.Execute(unix.NETLINK_GENERIC, 0)
	switch {
	case errors.Is(err, unix.ESRCH):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("delete cached TCP metrics of %s: %w", addr, err)
	}
	return true, nil
}

// forgetPeers deletes the cached TCP metrics of the lab's own addresses
// (peers) in namespace ns before a run opens its connections there, and
// records what it deleted in r.forgot, keyed by host. In the process's
// namespace (ns == "", a host of kind "local") a loopback address is
// the machine's, not the lab's, and is left alone. Without
// CAP_NET_ADMIN (a local host's run as another user) the kernel refuses
// the deletion: the run goes on and r.forgetNote says so.
func (r *run) forgetPeers(host, ns string, peers ...netip.Addr) error {
	var keep []netip.Addr
	for _, a := range peers {
		if !a.IsValid() || (ns == "" && a.IsLoopback()) {
			continue
		}
		keep = append(keep, a)
	}
	if len(keep) == 0 {
		return nil
	}
	return inNamespace(ns, func() error {
		for _, a := range keep {
			found, err := forgetPeer(a)
			if errors.Is(err, unix.EPERM) {
				r.mu.Lock()
				r.forgetNote = fmt.Sprintf("host %s: %v: not allowed without CAP_NET_ADMIN, so this run's connections may start from what an earlier connection to it left cached (RTT, reordering, cwnd)", host, err)
				r.mu.Unlock()
				continue
			}
			if err != nil {
				return fmt.Errorf("host %s: %w", host, err)
			}
			if found {
				r.addForgot(host, a)
			}
		}
		return nil
	})
}

// addForgot records that host's cached metrics of a were deleted.
func (r *run) addForgot(host string, a netip.Addr) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.forgot == nil {
		r.forgot = map[string][]string{}
	}
	r.forgot[host] = append(r.forgot[host], a.String())
}
