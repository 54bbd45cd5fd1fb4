package nic

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/tsolab/tsolab/provider"
)

// spec is a NIC's attributes, parsed.
type spec struct {
	ns     string // the host's namespace; "" = the machine's own
	ifname string
	link   link   // what the interface is, chosen by AttrLink's kind
	target string // the switch, peer NIC, owning NIC or device named by AttrLink

	peerNS, peerIf string // the other end of a switch or peer veth

	address      netip.Prefix // invalid = none
	mtu          int          // 0 = unmanaged
	shape        shaping
	queueManaged bool
	offloads     []wantOffload
	// genMode and peerGenMode are the IPv6 address generation modes
	// (IN6_ADDR_GEN_MODE_*) of the NIC's link and of the far end of a
	// pair it owns, when tsolab makes them (AttrAddrGenMode).
	genMode, peerGenMode uint8
}

// genModeNone is IN6_ADDR_GEN_MODE_NONE: no IPv6 link-local address.
const genModeNone = 1

// parseGenMode parses an AttrAddrGenMode value; absent is none.
func parseGenMode(a provider.Attrs, key string) (uint8, error) {
	v, ok := a[key]
	if !ok {
		return genModeNone, nil
	}
	m, err := strconv.ParseUint(v, 10, 8)
	if err != nil || m > 3 {
		return 0, fmt.Errorf("%s %q is not an IPv6 address generation mode 0..3 (net.ipv6.conf.default.addr_gen_mode)", key, v)
	}
	return uint8(m), nil
}

func parseSpec(a provider.Attrs) (spec, error) {
	s := spec{ns: a[provider.AttrNetNS], ifname: a[provider.AttrIfName]}
	kind, target, _ := strings.Cut(a[provider.AttrLink], ":")
	veth := false // the NIC owns a veth: its far end is named too
	switch kind {
	case provider.LinkSwitch:
		s.link, veth = switchPort{}, true
	case provider.LinkPeer:
		s.link, veth = vethPair{}, true
	case provider.LinkPeerOf:
		s.link = peerEnd{}
	case provider.LinkDevice:
		s.link = adopted{}
		if s.ns != "" && target != "lo" {
			s.link = moved{}
		}
	case provider.LinkNone:
		s.link = sink{}
	default:
		return s, fmt.Errorf("link %q is not one of switch:SW, peer:NIC, peer-of:NIC, device:DEV, none", a[provider.AttrLink])
	}
	s.target = target
	if kind != provider.LinkNone && target == "" {
		return s, fmt.Errorf("link %q names nothing", a[provider.AttrLink])
	}
	if err := checkIfName(s.ifname); err != nil {
		return s, err
	}
	if veth {
		s.peerNS, s.peerIf = a[provider.AttrPeerNetNS], a[provider.AttrPeerIfName]
		if err := checkIfName(s.peerIf); err != nil {
			return s, fmt.Errorf("peer: %w", err)
		}
	}
	if v := a[provider.AttrAddress]; v != "" {
		p, err := netip.ParsePrefix(v)
		if err != nil {
			return s, fmt.Errorf("address %q is not a CIDR like 10.77.0.1/24", v)
		}
		s.address = p
	}
	if v, ok := a[provider.AttrMTU]; ok && v != "" {
		mtu, err := strconv.Atoi(v)
		if err != nil || mtu < 68 || mtu > 65535 {
			return s, fmt.Errorf("mtu %q is not a number in 68..65535", v)
		}
		s.mtu = mtu
	}
	if v := a[provider.AttrRate]; v != "" {
		r, err := strconv.ParseUint(v, 10, 64)
		if err != nil || r == 0 {
			return s, fmt.Errorf("rate %q is not a positive number of bits per second", v)
		}
		s.shape.rate = r
	}
	if v := a[provider.AttrQueue]; v != "" {
		q, err := strconv.ParseInt(v, 10, 64)
		if err != nil || q <= 0 {
			return s, fmt.Errorf("queue %q is not a positive number of bytes", v)
		}
		s.shape.queue = q
		s.queueManaged = true
	}
	if v := a[provider.AttrDelay]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return s, fmt.Errorf("delay %q is not a duration like 10ms", v)
		}
		s.shape.delay = d
	}
	offs, err := declaredOffloads(a)
	if err != nil {
		return s, err
	}
	s.offloads = offs
	if s.genMode, err = parseGenMode(a, provider.AttrAddrGenMode); err != nil {
		return s, err
	}
	if s.peerGenMode, err = parseGenMode(a, provider.AttrPeerAddrGenMode); err != nil {
		return s, err
	}
	return s, nil
}
