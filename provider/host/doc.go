// Package host is the provider for hosts: a host is a named network
// namespace ("tsl.LAB.HOST") with `lo` up and the lab's net.* sysctls
// written inside it, or, with kind = "local", the machine's own namespace,
// which is configured (sysctls, restored on delete) but never created or
// deleted.
//
// It owns namespaces carrying the lab's prefix and the sysctls it writes.
// It never removes a namespace without the lab's prefix, never writes a
// sysctl outside net.*, and never touches links: provider/nic does.
// The namespace mechanics (creating, entering without leaving a thread
// behind) live in the sub-package netnsfs, shared with provider/nic.
package host
