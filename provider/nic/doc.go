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
// offloads and shaping and read them back. What differs by the kind of
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
// the calls in flight queue on, so a switch NIC's create makes five
// requests under it: the veth is created up with NLM_F_ECHO (Linux 6.3
// and later echo a creation: the new link's index, flags and MTU, and
// its far end's index, IFLA_LINK, without looking either up; an older
// kernel's link is looked up by name), marked with its alias and its
// IPv6 address generation mode in one RTM_SETLINK, its port made a
// marked, up port of the bridge with the NIC's MTU in one more, its
// address added, and the port read back. The NIC's own read-back is the
// echo when nothing changed the link since. The mark of the NIC's
// namespace is the host provider's (HostMarks, host.Checked.Mark) when
// that provider made or read the same namespace in this process.
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
// pay for that. What a 1000-host apply spends now (perf record -g of the
// process, main 2b5cf26, loaded machine): creating the veths 17%
// (veth_newlink 12.5%), making the ports (setPort) 19% (br_add_if 12%),
// host namespaces (copy_net_ns) 14.5%, the mount point files 4.4% (on
// this machine /run/netns is ext4 without a journal, whose inode
// allocation skips every inode deleted in the last seconds: 17% in one
// profile after repeated runs), read-backs 5.7%, allocation 5%, loading
// the lab 2.3%; 8015 netlink requests (sendto) for 2001 resources
// against 13015 before (perf stat -e syscalls:sys_enter_sendto).
// `flock /work/.netns.lock env BASE=84b254e ROUNDS=3
// bench/provision-1000/run.sh` (main 90ad461, load 17-24, medians,
// against the tree of the session before): apply 3.77 s (2.08 s CPU)
// against 5.26 s (2.62), plan 0.64 s (0.30) against 1.48 (0.42), destroy
// 0.61 s (0.34) against 1.52 (0.50), peak RSS 91 MB; ip -batch made the
// same 1000 namespaces in 5.21 s (0.70 s CPU) and veths in 0.70 s (0.18)
// in that run. The apply's target, 1.5 s, was not met on this loaded
// machine: most of what is left is the kernel's own work under the rtnl
// lock (veths, bridge ports, namespaces), which two cores do not share.
package nic
