// Package host is the provider for hosts: a host is a named network
// namespace ("tsl.LAB.HOST") with `lo` up and the lab's net.* sysctls
// written inside it, or, with kind = "local", the machine's own namespace,
// which is configured (sysctls, restored on delete) but never created or
// deleted.
//
// It owns namespaces carrying the lab's prefix and the sysctls it writes.
// A namespace it creates also records the state that made it (its lo's
// alias, provider.Naming.OwnerMark), so that two copies of one lab on a
// machine never take or remove each other's: CreateNamespace and
// ForeignNamespace hold that rule for hosts and for the switches'
// namespaces (provider/nic). The mark is written before the namespace
// is bound to its name, so an unmarked namespace is never tsolab's (one
// made by hand with ip netns add): it is neither taken nor removed. It
// never removes a namespace without the lab's prefix or the mark of its
// own state, never writes a sysctl
// outside net.*, and never touches links other than lo's alias:
// provider/nic does. A Delete right after a Read in the same command
// (a destroy) takes the mark Read found when the namespace bound at the
// name is still the one Read held open (Checked), instead of asking the
// kernel again while it frees the namespaces removed before; the NIC
// provider takes the marks of the namespaces Create made or Read found
// the same way (Checked.Mark). A new namespace is marked, its lo brought
// up (in the same request) and its sysctls written before it is bound
// to its name, on the thread that made it; only the binding holds the
// machine-wide claims lock (netnsfs.CreateSetUp). Its lo.up is recorded
// from the kernel's acknowledgement of that request, not read back.
// The files namespaces are bound on are hard links of one file the
// process made (netnsfs.mountPoints): on this machine /run is ext4
// without a journal, whose inode allocator passes over every inode freed
// in the last seconds, which made 1000 new files after a destroy 12% of
// a 1000-host apply's CPU, under the claims lock. What a host's create
// costs now (perf record -g of an apply of 1000 hosts alone, main
// f4e5fdb): the kernel making the namespace (copy_net_ns) 58%, the
// marking request 12% (lo coming up: its addresses and routes), the
// binding 6% (claims lock, hard link, mount), the rest the Go runtime,
// the thread's namespace switches and loading the lab: 1000 hosts in
// 0.43-0.50 s at any parallelism from 2 to 64, 0.45 s of CPU; ip -batch
// made 1000 bare namespaces in 0.31 s (0.22 s of CPU) on the same
// machine.
// The namespace mechanics (creating, entering without leaving a thread
// behind) live in the sub-package netnsfs, shared with provider/nic.
package host
