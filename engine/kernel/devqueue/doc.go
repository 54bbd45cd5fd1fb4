// Package devqueue counts the TCP send units a sender hands to the device
// layer, before software GSO cuts them, with an eBPF program on the
// net:net_dev_queue tracepoint (github.com/cilium/ebpf, no clang: the
// program is written with cilium/ebpf/asm and its struct offsets are read
// from the running kernel's BTF, /sys/kernel/btf/vmlinux).
//
// It owns that program, its per-CPU counter map and the reading of the
// map, and, when asked (Options.Headers), a ring buffer the program
// records every TCP packet to a watched port into: its headers (at most
// HeaderMax bytes from the MAC header), its whole length and the time it
// was queued, read by a goroutine that hands them to a Sink (the engine's
// capture files). It never sends anything, never changes an interface or
// a namespace, needs no tracefs and keeps no payload bytes.
//
// Where it counts: the program is a BTF-enabled raw tracepoint (tp_btf)
// on net_dev_queue, which __dev_queue_xmit fires for every skb before the
// qdisc and before validate_xmit_skb segments GSO skbs the device cannot
// take whole. So a TSO super-packet and a software-GSO super-packet both
// count once, with their whole payload; the wire segments they become are
// skb_shinfo(skb)->gso_segs (TCP's tcp_skb_pcount), or 1 for a non-GSO
// skb. The program keeps skbs whose device has the watched ifindex in the
// watched network namespace (net_device.ifindex and dev_net(dev)->ns.inum,
// both read through BTF-typed loads), whose IP protocol is TCP (IPv4, or
// IPv6 without extension headers), whose TCP destination port is one of
// the watched ports and whose TCP payload (skb->len minus the headers up
// to the end of the TCP header) is not empty. Everything else on that
// device counts as "other".
//
// What it aggregates, in the kernel, per CPU (a few atomic adds per send
// unit, no copies): send units, payload bytes, wire segments, GSO units,
// units of exactly one MSS, other packets, and a histogram of units by
// ceil(payload/MSS) with Buckets buckets (larger units go to the last one
// and are counted as clamped). A map has no ring to overflow; Result
// also carries the runs the kernel skipped (recursion_misses). Paced
// flows still show a few skbs (~0.1-0.5%) that TCP sent and no run of
// the program counted (the engine reports them from TCP_INFO as loss).
//
// What was measured about those (kernel 6.18, loopback in a test
// namespace, one connection paced with SO_MAX_PACING_RATE at 50 MB/s,
// 1.5 s, about half the runs lose one or two skbs): it is not read
// timing, the port filter or the map. TCP_INFO taken when the receiver
// reads EOF already equals TCP_INFO after a drain (notsent 0, unacked 0;
// only the FIN unacked before it); a counter polled during the run shows
// the deficit appearing mid-run (e.g. 166 ms in) and staying until Stop;
// a second counter with no port filter misses the same bytes; there are
// no retransmissions and no recursion_misses. The missing skbs were
// transmitted: an AF_PACKET ring on the same lo (package capture, fed by
// dev_queue_xmit_nit in xmit_one) saw every payload byte TCP sent, by
// sequence number, while three separate tp_btf programs (this counter, a
// per-skb recorder at net_dev_queue and one at net_dev_start_xmit, which
// xmit_one fires right after feeding the ring) all missed the same
// segments, and perf record of net:net_dev_queue summed to the counter's
// bytes too. Each lost data skb comes with one lost pure ACK (the
// counter's Other is one below the ring's), i.e. a whole transmit chain
// (pacing timer softirq, then the receiver's ACK on loopback) ran with no
// tracepoint probe called. So the loss is in the kernel's tracepoint
// dispatch, not in this program: no tracepoint hook tried counts them,
// the AF_PACKET ring does.
package devqueue
