// Package nic is the provider for NICs and switches: veth pairs created
// directly in their target namespaces (IFLA_NET_NS_FD on both ends),
// bridges for switches, adopted physical devices (moved into a namespace
// host and back when the host is one), and on each NIC its
// MTU, address, offloads (through the ethtool ioctl, read back after
// every change) and egress shaping (a tbf qdisc through netlink).
//
// It owns the links it creates, each marked with the lab's alias
// (provider.Naming.Alias), and the switch namespaces. It never deletes a
// link without this NIC's alias nor a namespace without the lab's prefix,
// never deletes an adopted device (it restores its MTU and offloads
// instead, and a moved one's namespace, addresses and up state), and never creates host namespaces (provider/host does).
//
// The Provider's calls (nic.go) do what is the same for every NIC: open
// its namespace, check the ownership marks, configure MTU, address,
// offloads and shaping and read them back (what a create made, as the
// kernel acknowledged making it: below). What differs by the kind of
// link is a type of its own with create, release and the hooks of read,
// configure and observe (the link interface, link.go): switchPort and
// vethPair make a veth and peerEnd waits for one (veth.go), adopted
// configures a device where it is (device.go), moved moves one into a
// namespace host and back (move.go), sink makes a dummy (sink.go).
// parseSpec chooses the type once from AttrLink; nic.go holds no switch
// on the kind.
//
// Kernel feature names ("tx-tcp-segmentation") stay inside this package;
// the rest of tsolab speaks the language's offload names ("tso").
//
// Where the time goes (BenchmarkLab100: 100 hosts, each with a veth to
// one switch, 8 workers): creating a veth in place costs about 1 ms;
// reading features through safchain/ethtool cost 0.5 ms a call (it fetches
// the kernel's feature names into a 1 MiB buffer every time), so the name
// table is probed once and features are read and set with one small ioctl
// (6 us). Deleting a veth takes about 18 ms, nearly all of it waiting for
// RCU (rcu_barrier in netdev_run_todo), so a switch's ports are deleted
// in batches: the ports being deleted while a batch is in flight join
// the next one, each put in the batch's link group, and one RTM_DELLINK
// of the group removes them all with one wait (pool.go). The namespace
// of the far ends (a switch's) is shared by the calls in flight and its
// mark read once per opening. A NIC deleted together with its host (a
// destroy: DeleteRequest.Going names the host) leaves its veth to the
// removal of the host's namespace, which frees the pair and its port in
// the kernel's own time instead of a deletion and its RCU wait per batch
// here; a create that finds the NIC's veth from before without its other
// end (the far namespace went first) makes the pair again
// (bench/provision-1000 measures a 1000-host lab).
// Namespaces cost little: the bind mounts are private, and the kernel
// frees a namespace asynchronously once it is unmounted.
//
// On this kernel (6.18) the kernel answers every change, every request
// for one link and every link dump under the rtnl lock, and so an
// AF_UNSPEC address dump; a dump of one family's addresses runs without
// it, so a NIC's address is read back by its family. The lock is what
// the calls in flight queue on, so a switch NIC's create makes four
// requests under it and reads nothing back: the veth is created up with
// NLM_F_ECHO (Linux 6.3 and later echo a creation: the new link's index,
// flags and MTU, and its far end's index, IFLA_LINK, without looking
// either up; an older kernel's link is looked up by name), marked with
// its alias and its IPv6 address generation mode in one RTM_SETLINK, its
// port made a marked, up port of the bridge with the NIC's MTU in one
// more, and its address added. What the create made is recorded as the
// kernel acknowledged it (the kernel applies all of an RTM_SETLINK or
// refuses it): the echo, the port's settings, the address (observe); a
// link the call found rather than made is read back, and Read reads
// everything. The mark of the NIC's namespace is the host provider's
// (HostMarks, host.Checked.Mark) when that provider made or read the
// same namespace in this process. Requests built by hand go through
// netnsfs.RouteSocket, which keeps its answer buffer (vishvananda's
// Execute put a 64 KiB array on each requesting goroutine's stack,
// growing it).
//
// Where a 1000-host apply's time goes (bench/provision-1000's lab; perf
// record -g of the NIC half alone, its hosts made by an apply before it,
// main f4e5fdb, loaded machine): the kernel's work under the rtnl lock is
// half of it, RTM_SETLINK 27% (br_add_if 15%: each new port walks the
// bridge's other ports, br_port_state_selection, br_manage_promisc) and
// the veths' RTM_NEWLINK 22% (register_netdevice: sysfs, the IPv4 and
// IPv6 per-device sysctls); the Go scheduler and allocator 15%, page
// faults 3.4% (8.6% before RouteSocket), namespace handles and sockets
// 5%, loading and planning the lab 4%. The host half is 58% copy_net_ns
// (provider/host). Requests per 1000-host apply (perf stat -e
// syscalls:sys_enter_sendto): 5015 (8015 before the read-backs went,
// 13015 at session 8's start). The kernel's floor for the NIC half's
// changes, made one after another by ip -batch on the same machine: the
// veths 0.21 s of CPU, the 1000 ports 0.13 s. A namespace made right
// after a destroy waits for the kernel's teardown of the namespaces
// destroyed (cleanup_net, under the rtnl lock: a namespace made every
// 20 ms stalled 0.5-0.8 s in all in the 2 s after a 1000-host destroy,
// loaded), and on a loaded machine the teardown's worker, preempted
// while it holds the lock, holds up an apply for seconds (applies of
// 13-23 s at load 19-31 with 1.5-2.2 s of CPU). `flock
// /work/.netns.lock /work/tools/prio.sh env BASE=3124d37 ROUNDS=3
// bench/provision-1000/run.sh` (main f4e5fdb against session 9's start,
// load 19-31): CPU of an apply 1.65 s against 1.99 s (medians), plan
// 0.30 against 0.27, destroy 0.38 against 0.33, peak RSS 94 MB; the
// wall times waited on the machine (above). A fresh apply on the loaded
// machine with tsolab's autogroup at nice -20 (one.sh, notes/h3.md, load
// 28): 1.79 s, the hosts' half 0.46 s and the NICs' 1.2 s.
//
// On the AMD EPYC guest of session 15 (perf record -e cpu-clock -g of
// one `tsolab apply` of bench/provision-1000's lab, main bc54f03, load
// 3.3-3.5, 19702 samples): the kernel takes 79% of the apply's CPU and
// tsolab's Go code 21%. In the kernel: the ports' RTM_SETLINK 21%
// (do_set_master 12%, nearly all br_add_if), the veths' RTM_NEWLINK 13%
// (register_netdevice 11.7%, of it the per-device sysctls 5.8%), the
// hosts' namespaces 12.6% (copy_net_ns), IPv6's notifier on each new and
// each up link 6.5% (addrconf_notify, link-local addresses or not), lo's
// marks 4.6% and the namespaces' bind mounts 3.6%, the addresses 2.2%,
// the rtnl mutex 4.1% (3.1% spinning on its owner); 19.7% of all samples
// fall in pvm_irq_enable, this guest's paravirtual interrupt enable,
// where the timer's samples of code run with interrupts off are counted
// (spin locks, the scheduler, page faults). In Go: the runtime's sysmon
// 6.3% (it polls every 20 us while threads sit in syscalls, which the
// apply's short netlink calls keep doing), page faults 5.1%, loading the
// lab 4.1%, state writes 1.3%, GC 1.1%. The kernel's floor in the same
// image (bench/provision-1000's ip -batch, load 3.7-4.8): 0.70 s of CPU
// (namespaces 0.22, veths 0.27, ports 0.21) against 2.9 s for that
// apply under perf (2.2-3.3 s without, six runs at load 3.6-7.7): the
// kernel's part alone, 2.3 s, is 3.3x the floor, so the gap is the kernel's own work for what the
// floor does not ask (MTUs, marks, addresses, the NIC ends up, ports
// that come up with a carrier) and its lock contention, before tsolab's
// Go code.
//
// Against the floor request by request (the code as of session 16): for
// each host, bench/provision-1000's ip -batch makes the namespace
// (unshare and a bind mount) and two rtnetlink requests, the veth pair in
// place (link add ... netns ... peer ... netns) and the port (link set
// pN master br0 up). tsolab makes the namespace and five: the host's lo
// marked and up (provider/host, one RTM_SETLINK before the namespace is
// bound), the veth with both MTUs and the NIC end up (RTM_NEWLINK,
// echoed, not read back), the NIC end's alias and IPv6 address
// generation mode (RTM_SETLINK: the kernel ignores IFLA_IFALIAS on
// creation, and the mode has to be set before the port comes up and
// gives the NIC end its carrier), the port's alias, master, MTU and up
// state (one RTM_SETLINK), and the address (RTM_NEWADDR); the switch's
// namespace and bridge once. None of the three requests the floor does
// not make is a re-read or a repeat: each is work the floor does not ask
// for (the ownership marks, lo up, the address), and the kernel takes
// the rtnl lock for each message of a batch, so sending two in
// one sendmsg would save a system call, not a turn under the lock.
// Making the port the veth's primary device would let its master, MTU
// and up state ride on the creation (rtnl_newlink_create applies
// IFLA_MASTER to the primary device only), but not its alias, so the
// count stays five. On a loaded machine both wait, and CPU is what
// separates them: `flock /work/.netns.lock env SETTLE=3 ROUNDS=2
// bench/provision-1000/run.sh` (main c159337, load 15.7-17.3): apply
// 3.59 and 8.76 s with 2.31 and 2.42 s of CPU, the floor 4.21 s with
// 0.86 s of CPU (namespaces 0.26, veths 0.36, ports 0.24), so the wall
// times are 1.5x apart and the CPU 2.7x; at load 4.5-7.2 (the same
// script with BASE=main ROUNDS=3) apply 1.74-3.66 s, median 1.90, with
// 2.10-3.03 s of CPU, the floor 1.08 s. Bounding the process's
// namespace and link creations to 8 at a time (the planner's 64 workers
// otherwise) was tried and not kept: six alternated pairs against main,
// apply 0.78-1.44 of main's wall time at load 4.5-14.
//
// No link tsolab makes gets an IPv6 link-local address (unless the
// NIC's host declares net.ipv6.conf.default.addr_gen_mode, which its
// links then get: AttrAddrGenMode): the mode is set before a link comes
// up with a carrier (the kernel gives a link its link-local address as
// it comes up, before the rest of a request), per link for a NIC's
// veth, a pair's far end and a dummy, once per namespace for a switch
// (switchAddrGenMode). With link-local addresses, each new link's
// duplicate address detection, multicast listener reports and router
// solicitations, which the bridge flooded to every port, took the
// kernel more CPU than a 1000-host apply itself (perf record -a: 21169
// samples in kworkers and ksoftirqd against 10650 in tsolab during an
// apply and the 3 s after it; 1064 against 12181 without), held the rtnl
// lock for seconds after the apply, and made a plan run at once after it
// pay for that.
package nic
