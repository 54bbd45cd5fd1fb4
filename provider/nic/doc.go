// Package nic is the provider for NICs and switches: veth pairs created
// directly in their target namespaces (IFLA_NET_NS_FD on both ends),
// bridges for switches, adopted physical devices, and on each NIC its
// MTU, address, offloads (through the ethtool ioctl, read back after
// every change) and egress shaping (a tbf qdisc through netlink).
//
// It owns the links it creates, each marked with the lab's alias
// (provider.Naming.Alias), and the switch namespaces. It never deletes a
// link without this NIC's alias nor a namespace without the lab's prefix,
// never deletes an adopted device (it restores its MTU and offloads
// instead), and never creates host namespaces (provider/host does).
//
// Kernel feature names ("tx-tcp-segmentation") stay inside this package;
// the rest of tsolab speaks the language's offload names ("tso").
package nic
