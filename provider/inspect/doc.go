// Package inspect observes an applied lab as it is: for every host and
// switch the state records, the interfaces in its namespace with their
// state, MTU, addresses and offloads, read through netlink and the
// ethtool ioctl (containerlab's inspect).
//
// It only reads: it never changes a device, and on a local host (the
// machine's own namespace) it reads only the devices the lab's NICs
// adopted, never the machine's others.
package inspect
