// Package devqueue counts the TCP send units a sender hands to the device
// layer, before software GSO cuts them, with an eBPF program at the
// device's TCX egress hook (github.com/cilium/ebpf, no clang: the
// program is written with cilium/ebpf/asm and its struct offsets are read
// from the running kernel's BTF, /sys/kernel/btf/vmlinux).
//
// It owns that program, its per-CPU counter map and the reading of the
// map, and, when asked (Options.Headers), the record rings the program
// writes every TCP packet to a watched port into, one per CPU in an
// mmapable array map (no BPF ring buffer: its lock, taken for every
// record, was the largest cost of capturing a million packets a second
// on two CPUs): its headers (at most HeaderMax bytes from the MAC
// header), its whole length and its time (at a TCX hook the
// departure time TCP stamped on the skb when it has one, else the time
// the program ran: see triedAndStamped), in a record as
// long as its headers (88 bytes for Ethernet, IPv4 and TCP with
// timestamps), or, at a TCX hook, in a short record of 48 bytes for a
// packet whose Ethernet, IPv4 addresses and TCP ports (what stays the
// same in a connection) are those of the last full record on its CPU:
// the reader rebuilds its headers byte for byte (see shortKind). The
// rings are large at ingress (IngressRingBytes, 512 MB:
// twice the records a 2 s TSO-off run at MTU 1500 writes here;
// RingBytes, 64 MB, at egress), written once a page before the program
// is attached (warm.go: a guest may map a page for the kernel's writes
// only at the first), and the goroutine that reads them leaves the records
// there until Stop, after the run's measurements, unless a ring fills
// past nine tenths (drainAt): it then moves that ring's oldest half, and
// the other CPUs' records as old, into a spool (SpoolBytes of memory
// populated at Open, before the run; a spool that fills hands its
// records on while the run goes on). At Stop it merges the CPUs'
// records by time and hands them to a Sink (the engine's capture
// files): reading, encoding and writing the file are not done while the
// workload is measured, for a run whose records fit. A ring its reader
// fell a whole ring behind on loses the records the reader had not read
// yet, which are counted (Result.RecordLost). It never sends anything
// and never changes an interface or a namespace (its TCX link passes
// every packet on, TCX_NEXT, and goes with Stop), needs no tracefs and
// keeps no payload bytes.
//
// The same program runs at the device's TCX ingress hook for a receiver
// (Options.Ingress, HookTCXIngress: sch_handle_ingress in
// __netif_receive_skb_core, after the AF_PACKET taps, so it sees what
// they see: what the device hands up, after GRO when it aggregates).
// There skb->data is past the Ethernet header the device pulled, so a
// record starts at skb->mac_header and its length counts that header;
// the TCP header's offset comes from the IP header (IHL), at both hooks,
// since ingress has not set skb->transport_header yet. With a record
// (a receiver's capture, a record for every wire segment when the
// device does no GRO) the ingress program records and counts nothing
// else: no units, no GSO fields, no histogram. A program with a record
// at a TCX hook is recordProgram ("tsl_ingress" at ingress,
// "tsl_dev_queue" at egress, where it counts the units as well), the
// least one: no device check (a TCX program runs for its device only),
// the headers parsed in place through direct packet access and copied
// once the packet is known to be recorded (eight words and the word
// that ends them for headers of at most 72 bytes in the linear data,
// bpf_skb_load_bytes for others), short records where it can. Egress
// wrote full records through bpf_probe_read_kernel until session 13;
// the tracepoint fallback still does. Ingress has no tracepoint
// fallback: Open fails and the caller captures otherwise.
//
// Where it counts (Hook): a TCX egress program on the device, which
// __dev_queue_xmit runs (sch_handle_egress) for every skb before the
// qdisc and before validate_xmit_skb segments GSO skbs the device cannot
// take whole; the program turns its __sk_buff into the kernel's sk_buff
// with the kfunc bpf_cast_to_kern_ctx and reads it through BTF-typed
// loads. On a kernel without TCX (before 6.6) or without that kfunc it
// counts at the net:net_dev_queue tracepoint (tp_btf) instead, a few
// lines later in the same function. So a TSO super-packet and a
// software-GSO super-packet both count once, with their whole payload;
// the wire segments they become are skb_shinfo(skb)->gso_segs (TCP's
// tcp_skb_pcount), or 1 for a non-GSO skb. The program keeps skbs whose
// device has the watched ifindex in the watched network namespace
// (net_device.ifindex and dev_net(dev)->ns.inum), whose IP protocol is
// TCP (IPv4, or IPv6 without extension headers), whose TCP destination
// port is one of the watched ports and whose TCP payload (skb->len minus
// the headers up to the end of the TCP header) is not empty. Everything
// else on that device counts as "other".
//
// What it aggregates, in the kernel, per CPU (a few atomic adds per send
// unit, plain ones in recordProgram at TCX egress, which does not nest;
// no copies): send units, payload bytes, wire segments, GSO units,
// units of exactly one MSS, other packets, and a histogram of units by
// ceil(payload/MSS) with Buckets buckets (larger units go to the last one
// and are counted as clamped). A map has no ring to overflow; Result
// also carries the runs the kernel skipped (recursion_misses).
//
// Why not the tracepoint (measured on this lab's VM, kernel 6.18,
// loopback in a test namespace, one connection paced at 50 MB/s with
// SO_MAX_PACING_RATE for 1.5 s): a tp_btf program on net_dev_queue
// missed 1-2 data skbs in 14 of 30 runs (0.1% of the bytes), each with
// the pure ACK that followed it, with no recursion_misses; the TCX
// counter missed none in the same runs. Every missed skb was sent from a
// softirq (the pacing timer, then the receiver's ACK) that interrupted a
// thread of the VM's init process (comm "tokio-rt-worker"), and every
// skb sent in that context was missed: no tracing program runs while
// those threads are current (a tp_btf program on sched_switch sees
// switches to them and never one away from them; fentry programs cannot
// be loaded at all, EPERM), while TCX programs, and the AF_PACKET tap,
// do. Paced flows show it because their units leave from a timer
// softirq on whatever the CPU was running; unpaced streams send from the
// sender's own thread. TCX does not depend on the tracing machinery.
package devqueue
