// Package kernel is the engine that runs a scenario's workloads on the
// running Linux kernel: real TCP sockets inside the lab's network
// namespaces, measured with per-thread CPU clocks, TCP_INFO, interface
// counters and an AF_PACKET capture on the sender's NIC.
//
// It owns the workloads (stream, rr, sendfile), their measurement and the
// assembly of an engine.WorkloadResult. It must not provision or change
// anything: the planner has applied the lab before Run is called, and this
// package only opens sockets, reads counters and reads offloads back. It
// never judges results (package outcome does).
//
// Namespaces. Every socket is created on an OS thread that entered the
// namespace of its host (runtime.LockOSThread + netns.Set); such a thread
// is never unlocked, so it dies with its goroutine instead of returning to
// the pool in a foreign namespace. A socket keeps the namespace it was
// created in, so the data path then runs on ordinary locked threads.
//
// CPU. cpu_tx_pct and cpu_rx_pct are in % of one core over the measured
// wall time. Each worker thread reads its own CLOCK_THREAD_CPUTIME_ID
// (the scheduler's sum_exec_runtime, ns resolution) when it starts and
// ends; the sender side is the sum over the client threads, the receiver
// side the sum over the server threads. This kernel is built without
// CONFIG_IRQ_TIME_ACCOUNTING, so softirq work that runs in a thread's
// context (on veth and loopback the whole receive path runs in the
// sending thread's local_bh_enable) is part of that thread's runtime: the
// kernel charges it there and so do we. CPU time that no thread ran is
// interrupt and softirq work on otherwise idle CPUs (TCP pacing timers and
// TSQ tasklets do the sending of a paced socket there); it is the machine's
// busy time (online CPUs × wall time − idle − iowait − steal from
// /proc/stat, idle measured exactly under NO_HZ) minus the runtime of
// every thread (/proc/*/task/*/schedstat). That time and the ksoftirqd
// threads' runtime are split between the two sides in proportion to the
// segments each side sent and received (TCP_INFO tcpi_segs_out +
// tcpi_segs_in), since softirq work is per segment: a transmit on one
// side, a receive on the other. Other processes' threads, the Go runtime
// and the capture's reader thread are not counted.
//
// Send units. The capture (package capture) taps the sender's NIC with a
// TPACKET_V3 ring where dev_hard_start_xmit hands packets to the driver:
// TSO super-packets are seen whole, software-GSO ones already cut to MSS.
// TCP builds GSO skbs whatever the device's gso flag says (Linux >= 4.19),
// so with TSO off send_units counts the MSS-sized units the driver
// received, not the skbs TCP built; counting those needs the
// net:net_dev_queue tracepoint, which this engine does not attach (a Note
// says so). The counts are checked against TCP_INFO (tcpi_data_segs_out)
// and the interface's tx_packets, and a Note is added when they disagree
// by more than 2%. capture_loss is the ring's tp_drops.
package kernel
