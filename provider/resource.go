package provider

import (
	"fmt"
	"sort"
	"strings"
)

// Kind is a resource type.
type Kind string

const (
	KindHost   Kind = "host"
	KindSwitch Kind = "switch"
	KindNIC    Kind = "nic"
)

// Addr names one resource of a lab: "host.tx", "switch.sw", "nic.tx0".
type Addr struct {
	Kind Kind
	Name string
}

func (a Addr) String() string { return string(a.Kind) + "." + a.Name }

// ParseAddr parses "nic.tx0".
func ParseAddr(s string) (Addr, error) {
	kind, name, ok := strings.Cut(s, ".")
	switch Kind(kind) {
	case KindHost, KindSwitch, KindNIC:
		if ok && name != "" {
			return Addr{Kind(kind), name}, nil
		}
	}
	return Addr{}, fmt.Errorf("%q is not a resource address (host.NAME, switch.NAME or nic.NAME)", s)
}

// MarshalText makes Addr usable as a JSON string and map key.
func (a Addr) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText parses the form MarshalText writes.
func (a *Addr) UnmarshalText(b []byte) error {
	p, err := ParseAddr(string(b))
	*a = p
	return err
}

// Attrs are a resource's attributes flattened to strings, keyed by the
// names plans show ("mtu", "offload.tso", "sysctl.net.ipv4.tcp_wmem").
// A missing key means "not managed"; see the Attr* constants.
type Attrs map[string]string

// Keys returns the attribute names sorted.
func (a Attrs) Keys() []string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Clone copies a.
func (a Attrs) Clone() Attrs {
	if a == nil {
		return nil
	}
	c := make(Attrs, len(a))
	for k, v := range a {
		c[k] = v
	}
	return c
}

// Equal reports whether a and b hold the same attributes.
func (a Attrs) Equal(b Attrs) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Attribute names. Attributes marked "replace" cannot change in place: a
// change destroys and re-creates the resource. The others are updated in
// place.
const (
	// host and nic
	AttrMachine = "machine" // replace: the machine block the object lives on; absent = the machine tsolab runs on

	// host
	AttrHostKind = "kind"    // replace: "netns" or "local"
	AttrNetNS    = "netns"   // replace: the namespace name ("" = the machine's own)
	PrefixSysctl = "sysctl." // update: "sysctl.net.ipv4.tcp_wmem" = "4096 1048576 4194304"
	AttrLoUp     = "lo.up"   // update: "true", the namespace's lo is up (namespace hosts only)

	// switch and nic
	AttrUp = "up" // update: "true", the bridge (switch) or the NIC's interface is up

	// switch
	AttrBridge = "bridge" // replace: the bridge interface name inside the switch's namespace

	// nic (AttrNetNS too: the namespace of the host the NIC lives in)
	AttrHost       = "host"        // replace: the host name
	AttrIfName     = "ifname"      // replace: the interface name inside the host's namespace
	AttrLink       = "link"        // replace: see the Link* constants
	AttrPeerNetNS  = "peer_netns"  // replace: the namespace of the other end of the veth
	AttrPeerIfName = "peer_ifname" // replace: the other end's interface name
	AttrAddress    = "address"     // update: CIDR, "" = none
	AttrMTU        = "mtu"         // update: decimal bytes; absent = unmanaged
	AttrRate       = "rate"        // update: bits/s as a decimal, "" or absent = no shaping (AbsentMeansNone)
	AttrQueue      = "queue"       // update: tbf queue limit in bytes (with rate)
	AttrDelay      = "delay"       // update: one-way delay as a Go duration (needs netem)
	AttrPortUp     = "port.up"     // update: "true", a switch NIC's port (the veth's switch end) is up
	AttrPortMaster = "port.master" // update: the bridge the port belongs to (BridgeName; "" = none)
	AttrPortMTU    = "port.mtu"    // update: the port's MTU, the NIC's own; absent = unmanaged
	PrefixOffload  = "offload."    // update: "offload.tso" = "true"/"false"
	// AttrAddrGenMode is the IPv6 link-local address generation mode
	// (IN6_ADDR_GEN_MODE_*) a link tsolab makes for the NIC gets before
	// it comes up: its host's net.ipv6.conf.default.addr_gen_mode when
	// the host declares that sysctl; absent = 1, none (no link-local
	// address). replace: the kernel gives a link its link-local address
	// when it comes up. AttrPeerAddrGenMode is the same for the far end
	// of a pair the NIC owns (the peer NIC's host's).
	AttrAddrGenMode     = "addr_gen_mode"
	AttrPeerAddrGenMode = "peer_addr_gen_mode"
)

// SysctlAddrGenMode is the host sysctl AttrAddrGenMode follows.
const SysctlAddrGenMode = "net.ipv6.conf.default.addr_gen_mode"

// Link kinds, the value of AttrLink is KIND or KIND:NAME.
const (
	LinkSwitch = "switch"  // switch:SW — a veth whose peer is a port of bridge SW
	LinkPeer   = "peer"    // peer:NIC — owner of a back-to-back veth pair with NIC
	LinkPeerOf = "peer-of" // peer-of:NIC — the far end of NIC's pair; NIC creates and deletes it
	LinkDevice = "device"  // device:DEV — an adopted existing device, never created or deleted
	LinkNone   = "none"    // a NIC with no link: a dummy interface
)

// ReplaceAttr reports whether a change of the attribute key forces
// replacement.
func ReplaceAttr(key string) bool {
	switch key {
	case AttrMachine, AttrHostKind, AttrNetNS, AttrBridge, AttrHost, AttrIfName, AttrLink, AttrPeerNetNS, AttrPeerIfName,
		AttrAddrGenMode, AttrPeerAddrGenMode:
		return true
	}
	return false
}

// Resource is one desired object of a lab.
type Resource struct {
	Addr      Addr
	Attrs     Attrs
	DependsOn []Addr // resources that must exist first
}

// AbsentMeansNone reports whether leaving attribute k out of a desired
// resource means "none" rather than "whatever it is": shaping. A lab that
// drops its rate wants the tbf gone, while one that never set an MTU
// leaves the device's own.
func AbsentMeansNone(k string) bool {
	return k == AttrRate || k == AttrQueue || k == AttrDelay
}
