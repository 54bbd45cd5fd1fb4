package provider

import (
	"strconv"

	"github.com/tsolab/tsolab/config"
)

// PrefixRestore marks private attributes a provider records for itself
// (the MTU and offloads an adopted device had before tsolab changed them,
// restored on delete). The planner never diffs keys with this prefix.
const PrefixRestore = "restore."

// Desired translates one scenario into the resources it declares, in
// declaration order (hosts, switches, NICs), with their dependencies.
func Desired(sc *config.Scenario, n Naming) []Resource {
	var out []Resource
	hostNS := map[string]string{}
	hostMachine := map[string]string{}
	genMode := map[string]string{} // a host's declared SysctlAddrGenMode
	for _, h := range sc.Hosts {
		r := desiredHost(h, n)
		hostNS[h.Name] = r.Attrs[AttrNetNS]
		hostMachine[h.Name] = h.Machine
		if v, ok := h.Sysctl[SysctlAddrGenMode]; ok {
			genMode[h.Name] = v
		}
		out = append(out, r)
	}
	for _, s := range sc.Switches {
		a := Attrs{AttrNetNS: n.SwitchNS(s.Name), AttrBridge: BridgeName, AttrUp: "true"}
		if s.Machine != "" {
			a[AttrMachine] = s.Machine
		}
		out = append(out, Resource{Addr: Addr{KindSwitch, s.Name}, Attrs: a})
	}
	// peerOwner maps a NIC to the NIC whose `peer` names it.
	peerOwner := map[string]string{}
	for _, nic := range sc.NICs {
		if nic.Peer != "" {
			peerOwner[nic.Peer] = nic.Name
		}
	}
	for _, nic := range sc.NICs {
		a := Attrs{
			AttrHost:    nic.Host,
			AttrNetNS:   hostNS[nic.Host],
			AttrIfName:  nic.Name,
			AttrAddress: "",
			AttrUp:      "true",
		}
		if m := hostMachine[nic.Host]; m != "" {
			a[AttrMachine] = m
		}
		deps := []Addr{{KindHost, nic.Host}}
		switch {
		case nic.Connect != "":
			a[AttrLink] = LinkSwitch + ":" + nic.Connect
			a[AttrPeerNetNS] = n.SwitchNS(nic.Connect)
			a[AttrPeerIfName] = PortName(nic.Name)
			a[AttrPortUp] = "true"
			a[AttrPortMaster] = BridgeName
			deps = append(deps, Addr{KindSwitch, nic.Connect})
		case nic.Peer != "":
			a[AttrLink] = LinkPeer + ":" + nic.Peer
			if p := sc.NIC(nic.Peer); p != nil {
				a[AttrPeerNetNS] = hostNS[p.Host]
				deps = append(deps, Addr{KindHost, p.Host})
				if v, ok := genMode[p.Host]; ok {
					a[AttrPeerAddrGenMode] = v
				}
			}
			a[AttrPeerIfName] = nic.Peer
		case peerOwner[nic.Name] != "":
			a[AttrLink] = LinkPeerOf + ":" + peerOwner[nic.Name]
			deps = append(deps, Addr{KindNIC, peerOwner[nic.Name]})
		case nic.Device != "":
			a[AttrLink] = LinkDevice + ":" + nic.Device
			a[AttrIfName] = nic.Device
		default:
			a[AttrLink] = LinkNone
		}
		if v, ok := genMode[nic.Host]; ok && nic.Device == "" {
			a[AttrAddrGenMode] = v
		}
		nicSettings(nic, a)
		out = append(out, Resource{Addr: Addr{KindNIC, nic.Name}, Attrs: a, DependsOn: deps})
	}
	return out
}

// desiredHost is the resource of one host: its namespace (none for the
// machine's own), lo up, its machine and its sysctls.
func desiredHost(h *config.Host, n Naming) Resource {
	ns := ""
	if h.Kind != config.HostLocal {
		ns = n.HostNS(h.Name)
	}
	a := Attrs{AttrHostKind: string(h.Kind), AttrNetNS: ns}
	if h.Kind == "" {
		a[AttrHostKind] = string(config.HostNamespace)
	}
	if ns != "" {
		a[AttrLoUp] = "true"
	}
	if h.Machine != "" {
		a[AttrMachine] = h.Machine
	}
	for k, v := range h.Sysctl {
		a[PrefixSysctl+k] = v
	}
	return Resource{Addr: Addr{KindHost, h.Name}, Attrs: a}
}

// nicSettings adds what a NIC declares beyond its link to a: address,
// MTU (its switch port's too), shaping and offloads.
func nicSettings(nic *config.NIC, a Attrs) {
	if nic.Address.IsValid() {
		a[AttrAddress] = nic.Address.String()
	}
	if nic.MTU != 0 {
		a[AttrMTU] = strconv.Itoa(nic.MTU)
		if nic.Connect != "" {
			a[AttrPortMTU] = a[AttrMTU]
		}
	}
	if nic.Rate != 0 {
		a[AttrRate] = strconv.FormatUint(uint64(nic.Rate), 10)
		if nic.Queue != 0 {
			a[AttrQueue] = strconv.FormatInt(nic.Queue, 10)
		}
	}
	if nic.Delay != 0 {
		a[AttrDelay] = nic.Delay.String()
	}
	for _, f := range config.AllOffloads() {
		if on, decl := nic.Offload.Get(f); decl {
			a[PrefixOffload+f.String()] = strconv.FormatBool(on)
		}
	}
}
