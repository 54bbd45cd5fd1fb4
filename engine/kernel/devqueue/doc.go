// Package devqueue counts the TCP send units a sender hands to the device
// layer, before software GSO cuts them, with an eBPF program on the
// net:net_dev_queue tracepoint (github.com/cilium/ebpf, no clang: the
// program is written with cilium/ebpf/asm and its struct offsets are read
// from the running kernel's BTF, /sys/kernel/btf/vmlinux).
//
// It owns that program, its per-CPU counter map and the reading of the
// map. It never sends anything, never changes an interface or a
// namespace, needs no tracefs and keeps no packet bytes.
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
package devqueue
