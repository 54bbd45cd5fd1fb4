package inspect

import (
	"fmt"
	"net"
	"sort"

	"github.com/vishvananda/netlink"

	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/provider/nic"
)

// Namespace is one host's or switch's namespace as it is.
type Namespace struct {
	// Resource is the lab's host or switch ("host.tx", "switch.sw").
	Resource string `json:"resource"`
	// NetNS is the namespace's name; "" for a local host.
	NetNS string `json:"netns"`
	// Machine is the lab's machine the namespace is on, read there by
	// its agent; "" for the machine tsolab runs on.
	Machine    string      `json:"machine,omitempty"`
	Interfaces []Interface `json:"interfaces"`
	// Error says why the namespace could not be read (it is gone).
	Error string `json:"error,omitempty"`
}

// Interface is one network device as the kernel reports it.
type Interface struct {
	Name string `json:"name"`
	// NIC is the lab's NIC the device is ("nic.tx0"), or whose switch
	// port it is ("nic.tx0 port"); "" for a device of no NIC (lo).
	NIC  string `json:"nic,omitempty"`
	Type string `json:"type"` // netlink's link type: veth, bridge, device
	// Up is the administrative state (IFF_UP); Oper the operational one
	// ("up", "down", "unknown" for lo).
	Up     bool   `json:"up"`
	Oper   string `json:"oper_state"`
	MTU    int    `json:"mtu"`
	Master string `json:"master,omitempty"` // the bridge it is a port of
	// Addresses are the IPv4 and IPv6 addresses with their prefixes.
	Addresses []string `json:"addresses"`
	// Offloads are the language's offloads, on or off ("tso": true).
	Offloads map[string]bool `json:"offloads,omitempty"`
	// Error says why a part of the device could not be read.
	Error string `json:"error,omitempty"`
}

// target is a namespace to read and the NICs the state says are in it.
type target struct {
	res   provider.Addr
	netns string
	local bool
	nics  map[string]string // interface name -> the NIC it is
}

// Observe reads the namespace of every host and switch of recorded (the
// resources a state records, with their recorded attributes), in their
// order. A namespace it cannot read carries the error.
func Observe(recorded []provider.Resource) []Namespace {
	var targets []*target
	byNS := map[string]*target{}
	for _, r := range recorded {
		if r.Addr.Kind != provider.KindHost && r.Addr.Kind != provider.KindSwitch {
			continue
		}
		t := &target{res: r.Addr, netns: r.Attrs[provider.AttrNetNS], nics: map[string]string{}}
		t.local = r.Addr.Kind == provider.KindHost && r.Attrs[provider.AttrHostKind] == "local"
		targets = append(targets, t)
		byNS[t.netns] = t
	}
	for _, r := range recorded {
		if r.Addr.Kind != provider.KindNIC {
			continue
		}
		if t := byNS[r.Attrs[provider.AttrNetNS]]; t != nil && r.Attrs[provider.AttrIfName] != "" {
			t.nics[r.Attrs[provider.AttrIfName]] = r.Addr.String()
		}
		if t := byNS[r.Attrs[provider.AttrPeerNetNS]]; t != nil && t.res.Kind == provider.KindSwitch && r.Attrs[provider.AttrPeerIfName] != "" {
			t.nics[r.Attrs[provider.AttrPeerIfName]] = r.Addr.String() + " port"
		}
	}
	out := make([]Namespace, 0, len(targets))
	for _, t := range targets {
		out = append(out, t.observe())
	}
	return out
}

func (t *target) observe() Namespace {
	ns := Namespace{Resource: t.res.String(), NetNS: t.netns, Interfaces: []Interface{}}
	h, err := netnsfs.Netlink(t.netns)
	if err != nil {
		ns.Error = err.Error()
		return ns
	}
	defer h.Close()
	links, err := h.LinkList()
	if err != nil {
		ns.Error = fmt.Sprintf("list links: %v", err)
		return ns
	}
	names := map[int]string{}
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
	}
	for _, l := range links {
		a := l.Attrs()
		if t.local && t.nics[a.Name] == "" {
			continue // the machine's own devices are not the lab's
		}
		ifc := Interface{
			Name: a.Name, NIC: t.nics[a.Name], Type: l.Type(),
			Up: a.Flags&net.FlagUp != 0, Oper: a.OperState.String(), MTU: a.MTU,
			Master: names[a.MasterIndex], Addresses: []string{},
		}
		addrs, err := h.AddrList(l, netlink.FAMILY_ALL)
		if err != nil {
			ifc.Error = fmt.Sprintf("list addresses: %v", err)
		}
		for _, ad := range addrs {
			ifc.Addresses = append(ifc.Addresses, ad.IPNet.String())
		}
		if off, err := nic.ReadOffloads(t.netns, a.Name); err != nil {
			ifc.Error = err.Error()
		} else {
			ifc.Offloads = off
		}
		ns.Interfaces = append(ns.Interfaces, ifc)
	}
	sort.Slice(ns.Interfaces, func(i, j int) bool { return ns.Interfaces[i].Name < ns.Interfaces[j].Name })
	return ns
}
