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
// mark read once per opening; a new veth is created up, and its port
// made an up, marked port of the bridge with the NIC's MTU in one
// RTM_SETLINK. A NIC deleted together with its host (a destroy:
// DeleteRequest.Going names the host) leaves its veth to the removal of
// the host's namespace, which frees the pair and its port in the kernel's
// own time instead of a deletion and its RCU wait per batch here; a
// create that finds the NIC's veth from before without its other end
// (the far namespace went first) makes the pair again
// (bench/provision-1000 measures a 1000-host lab).
// Namespaces cost little: the bind mounts are private, and the kernel
// frees a namespace asynchronously once it is unmounted.
//
// On this kernel (6.18) the kernel answers every change, every request
// for one link and every link dump under the rtnl lock, and so an
// AF_UNSPEC address dump; a dump of one family's addresses runs without
// it, so a NIC's address is read back by its family. The lock is what
// the calls in flight queue on: in a 1000-host apply (perf record -g)
// 10.7% of the samples spin on it, inside the rest: veth creation 9.4%
// (veth_newlink, the kernel's floor), switch ports 13.9% (br_add_if
// 6.8%), link look-ups 18.9% (after LinkAdd for the index 21% of them,
// the port's read-back 20%, the host namespace's mark 19%, the NIC's
// read-back 14%, the far end 14%), addresses 4.9%, aliases 2.6%, host
// namespaces 17% (copy_net_ns 10.8%, the floor). The kernel also holds
// the lock for seconds after a command, for work the command started:
// after an apply, the IPv6 configuration of the new links (duplicate
// address detection and MLD reports, which the bridge floods to every
// port), after a destroy, freeing the namespaces; a plan at once after
// a 1000-host apply took 1.6 s, five seconds later 0.7 s
// (bench/provision-1000 SETTLE). A destroy's deletions take the marks the
// refresh read (host.Checked) instead of asking the kernel again.
package nic
