package hcl

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/tsolab/tsolab/config"
)

// ifnameMax is the longest Linux interface name in bytes (IFNAMSIZ-1).
const ifnameMax = 15

// checkName checks a block's name: a lab, host or switch name becomes
// part of a namespace name, a NIC name is a Linux interface name, and
// every referenceable name must be an HCL identifier.
func (l *loader) checkName(b *block) bool {
	name := b.name
	rng := b.def
	switch b.kind() {
	case kindHost, kindSwitch, kindMachine:
		if !namespaceSafe(name) {
			l.errorf(rng, fmt.Sprintf("Invalid %s name", b.kind()),
				"%q cannot name a %s: use letters, digits, - and _, starting with a letter (it becomes part of a namespace name), like %q.",
				name, b.kind(), suggestName(name))
			return false
		}
	case kindNIC:
		if problem := ifnameProblem(name); problem != "" {
			l.errorf(rng, "Invalid interface name",
				"A NIC's name is its Linux interface name, and %q is not one: %s. Pick a short name like \"tx0\".", name, problem)
			return false
		}
		if !hclsyntax.ValidIdentifier(name) {
			l.errorf(rng, "Invalid interface name",
				"%q cannot be referenced as nic.%s: use letters, digits, - and _, starting with a letter, like %q.", name, name, suggestName(name))
			return false
		}
	case kindLab:
		if !namespaceSafe(name) {
			l.errorf(rng, "Invalid lab name",
				"%q cannot name a lab: use letters, digits, - and _, starting with a letter (it becomes part of namespace names), like %q.", name, suggestName(name))
			return false
		}
	case kindExpect:
		if strings.TrimSpace(name) == "" {
			l.errorf(rng, "Invalid expect name", "Give the expectation a name that says what it checks, like expect \"tso_helps\".")
			return false
		}
	default:
		if !hclsyntax.ValidIdentifier(name) {
			l.errorf(rng, fmt.Sprintf("Invalid %s name", b.kind()),
				"%q cannot be referenced as %s.%s: use letters, digits, - and _, starting with a letter, like %q.",
				name, referenceRoot(b.kind()), name, suggestName(name))
			return false
		}
	}
	return true
}

func referenceRoot(kind string) string {
	if kind == kindVariable {
		return rootVar
	}
	return kind
}

// namespaceSafe is true for ASCII identifiers: letters, digits, - and _,
// starting with a letter or _.
func namespaceSafe(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		letter := c < unicode.MaxASCII && (unicode.IsLetter(c) || c == '_')
		if i == 0 && !letter {
			return false
		}
		if !letter && !(c < unicode.MaxASCII && unicode.IsDigit(c)) && c != '-' {
			return false
		}
	}
	return true
}

// suggestName turns s into a valid name, for the fix in a diagnostic.
func suggestName(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case c < unicode.MaxASCII && (unicode.IsLetter(c) || unicode.IsDigit(c) || c == '_' || c == '-'):
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	if out == "" || !(unicode.IsLetter(rune(out[0])) || out[0] == '_') {
		out = "n" + out
	}
	return out
}

// ifnameProblem says why s is not a valid Linux interface name
// (dev_valid_name), or "" when it is one. "lo" is valid but taken.
func ifnameProblem(s string) string {
	switch {
	case s == "":
		return "it is empty"
	case len(s) > ifnameMax:
		return fmt.Sprintf("it is %d bytes long and Linux allows at most %d", len(s), ifnameMax)
	case s == "." || s == "..":
		return "it is a path element"
	case s == "lo":
		return "lo is the loopback interface every namespace already has"
	case strings.ContainsAny(s, "/:"):
		return "it contains '/' or ':'"
	case strings.IndexFunc(s, unicode.IsSpace) >= 0:
		return "it contains whitespace"
	}
	return ""
}

// address parses a NIC address in CIDR notation.
func (e *evaluator) address(b *block, s string) (netip.Prefix, bool) {
	a := b.attrs["address"]
	bad := func(format string, args ...any) (netip.Prefix, bool) {
		e.fail(a, a.Expr.Range(), "Invalid address", format, args...)
		return netip.Prefix{}, false
	}
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil {
		if ip, aerr := netip.ParseAddr(strings.TrimSpace(s)); aerr == nil {
			bits := 24
			if ip.Is6() {
				bits = 64
			}
			return bad("%q has no prefix length: write the address with its subnet, like \"%s/%d\".", s, ip, bits)
		}
		return bad("%q is not an address in CIDR notation: write it like \"10.77.0.1/24\" (%s).", s, err)
	}
	ip := p.Addr()
	switch {
	case ip.Zone() != "":
		return bad("%q has a zone; write the address without %%%s.", s, ip.Zone())
	case ip.IsUnspecified(), ip.IsLoopback(), ip.IsMulticast():
		return bad("%s cannot be a NIC's address (it is unspecified, loopback or multicast): pick one from a private subnet, like \"10.77.0.1/24\".", ip)
	}
	if ip.Is4() && p.Bits() <= 30 {
		if ip == p.Masked().Addr() {
			return bad("%s is the network address of %s, not a host's: pick another, like \"%s/%d\".", ip, p.Masked(), ip.Next(), p.Bits())
		}
		if ip == broadcast(p) {
			return bad("%s is the broadcast address of %s, not a host's: pick another, like \"%s/%d\".", ip, p.Masked(), ip.Prev(), p.Bits())
		}
	}
	return p, true
}

func broadcast(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	for i := p.Bits(); i < 32; i++ {
		a[i/8] |= 1 << (7 - i%8)
	}
	return netip.AddrFrom4(a)
}

// checkScenario checks one evaluated cell as a whole: links, peers,
// segments and addresses, workloads.
func (l *loader) checkScenario(sc *config.Scenario) {
	l.checkHosts(sc)
	l.checkMachines(sc)
	l.checkLinks(sc)
	l.checkSegments(sc)
	l.checkWorkloads(sc)
}

func (l *loader) blockOf(kind, name string) *block { return l.byAddr[kind+"."+name] }

// attrFail reports a mistake at an attribute of a block.
func (l *loader) attrFail(b *block, attr, summary, format string, args ...any) {
	rng := b.def
	if a := b.attrs[attr]; a != nil {
		rng = a.SrcRange
	}
	l.errorf(rng, summary, format, args...)
}

func (l *loader) checkHosts(sc *config.Scenario) {
	local := map[string]*config.Host{} // machine -> its local host
	for _, h := range sc.Hosts {
		if h.Kind != config.HostLocal {
			continue
		}
		if first := local[h.Machine]; first != nil {
			l.attrFail(l.blockOf(kindHost, h.Name), "kind", "Two local hosts",
				"host %q and host %q are both kind = \"local\", the machine's own namespace%s: a machine has one. Make one of them a namespace host.",
				first.Name, h.Name, onMachine(h.Machine))
			continue
		}
		local[h.Machine] = h
	}
	for _, h := range sc.Hosts {
		if h.CoresOf == "" {
			continue
		}
		b := l.blockOf(kindHost, h.Name)
		owner := sc.Host(h.CoresOf)
		switch {
		case owner != nil && owner.CoresOf != "":
			l.attrFail(b, "cores_of", "Cores of a host without cores",
				"host %q runs on host %q's cores, but %q runs on host %q's: name %q, whose cores they are.", h.Name, owner.Name, owner.Name, owner.CoresOf, owner.CoresOf)
		case h.Cores > 0:
			l.attrFail(b, "cores", "Cores and cores_of",
				"host %q has cores = %d and runs on host %q's cores: give the count on host %q only.", h.Name, h.Cores, h.CoresOf, h.CoresOf)
		case owner != nil && owner.Machine != h.Machine:
			l.attrFail(b, "cores_of", "Cores on another machine",
				"host %q lives on %s and host %q on %s: hosts share cores only on one machine.", h.Name, machineOf(sc, h.Name), owner.Name, machineOf(sc, owner.Name))
		}
	}
}

// onMachine names a machine in a diagnostic: " on machine \"r1\"", or
// "" for the machine tsolab runs on.
func onMachine(m string) string {
	if m == "" {
		return ""
	}
	return fmt.Sprintf(" on machine %q", m)
}

// machineOf names where a host lives, for diagnostics.
func machineOf(sc *config.Scenario, host string) string {
	if h := sc.Host(host); h != nil && h.Machine != "" {
		return fmt.Sprintf("machine %q", h.Machine)
	}
	return "the machine tsolab runs on"
}

// checkMachines places each switch on the machine of its ports' hosts
// and reports links that would cross machines: a veth has both ends in
// one kernel, and so does a bridge with its ports. Machines are joined by
// their devices (device = "enp3s0") and the cable between them.
func (l *loader) checkMachines(sc *config.Scenario) {
	hostMachine := map[string]string{}
	for _, h := range sc.Hosts {
		hostMachine[h.Name] = h.Machine
	}
	// firstPort is, per switch, the first NIC connected to it.
	firstPort := map[string]*config.NIC{}
	for _, n := range sc.NICs {
		m := hostMachine[n.Host]
		switch {
		case n.Connect != "":
			first := firstPort[n.Connect]
			if first == nil {
				firstPort[n.Connect] = n
				if sw := sc.Switch(n.Connect); sw != nil {
					sw.Machine = m
				}
				continue
			}
			if hostMachine[first.Host] == m {
				continue
			}
			l.attrFail(l.blockOf(kindNIC, n.Name), "connect", "Link crosses machines",
				"switch %q lives on %s, where the host of its first port nic %q is, and nic %q's host %q is on %s: a switch is a bridge in one kernel, with its ports. "+
					"Give each machine a switch of its own, and join them by a device of each (device = \"enp3s0\") cabled together.",
				n.Connect, machineOf(sc, first.Host), first.Name, n.Name, n.Host, machineOf(sc, n.Host))
		case n.Peer != "":
			p := sc.NIC(n.Peer)
			if p == nil || hostMachine[p.Host] == m {
				continue
			}
			l.attrFail(l.blockOf(kindNIC, n.Name), "peer", "Link crosses machines",
				"nic %q is on %s and its peer nic %q on %s: a veth pair cannot cross machines. "+
					"Give each NIC a device of its machine (device = \"enp3s0\"), the two devices cabled together.",
				n.Name, machineOf(sc, n.Host), p.Name, machineOf(sc, p.Host))
		}
	}
}

// link names how a NIC is linked, for diagnostics.
func link(n *config.NIC) string {
	switch {
	case n.Connect != "":
		return "connect = switch." + n.Connect
	case n.Peer != "":
		return "peer = nic." + n.Peer
	case n.Device != "":
		return fmt.Sprintf("device = %q", n.Device)
	}
	return ""
}

func (l *loader) checkLinks(sc *config.Scenario) {
	peerOf := map[string]*config.NIC{}  // NIC name -> the NIC whose peer it is
	adopted := map[string]*config.NIC{} // machine + "/" + device -> the NIC adopting it
	for _, n := range sc.NICs {
		b := l.blockOf(kindNIC, n.Name)
		var set []string
		for _, attr := range []string{"connect", "peer", "device"} {
			v := map[string]string{"connect": n.Connect, "peer": n.Peer, "device": n.Device}[attr]
			if v != "" {
				set = append(set, attr)
			}
		}
		if len(set) > 1 {
			l.attrFail(b, set[1], "Conflicting link attributes",
				"A NIC is linked one way: connect (a veth to a switch), peer (a back-to-back veth pair) or device (an existing interface). nic %q sets both %s and %s: remove one.",
				n.Name, set[0], set[1])
			n.Connect, n.Peer, n.Device = firstOnly(n, set[0])
		}
		if n.Device != "" && n.Device != "lo" {
			// One device of the machine is one NIC: adopted on the local
			// host, or moved into one namespace host.
			key := ""
			if h := sc.Host(n.Host); h != nil {
				key = h.Machine
			}
			key += "/" + n.Device
			if first := adopted[key]; first != nil && !l.misspelt(kindMachine) {
				l.attrFail(b, "device", "Device adopted twice",
					"device %q is already nic %q's (%s); a device of this machine can be one NIC only. Adopt another device, or link this NIC with connect or peer.",
					n.Device, first.Name, rangeLoc(l.blockOf(kindNIC, first.Name).attrs["device"].SrcRange))
			} else {
				adopted[key] = n
			}
		}
		if n.Peer == "" {
			continue
		}
		target := sc.NIC(n.Peer)
		if target == nil {
			continue
		}
		if first := peerOf[n.Peer]; first != nil {
			fb := l.blockOf(kindNIC, first.Name)
			l.attrFail(b, "peer", "NIC is peer of two NICs",
				"nic %q is already the peer of nic %q (%s); a veth pair has two ends. Pair nic %q with another NIC, or connect both to a switch.",
				n.Peer, first.Name, rangeLoc(fb.attrs["peer"].SrcRange), n.Name)
			continue
		}
		peerOf[n.Peer] = n
		if other := link(target); other != "" {
			l.attrFail(b, "peer", "Peer is already linked",
				"nic %q is already linked (%s), so it cannot also be the other end of nic %q's pair. Remove %s from nic %q, or pair nic %q with another NIC.",
				target.Name, other, n.Name, strings.SplitN(other, " ", 2)[0], target.Name, n.Name)
		}
	}
}

func firstOnly(n *config.NIC, keep string) (connect, peer, device string) {
	switch keep {
	case "connect":
		return n.Connect, "", ""
	case "peer":
		return "", n.Peer, ""
	}
	return "", "", n.Device
}

// segmentName names a segment in a diagnostic: `switch "sw"`, or
// `the pair nic "a" - nic "b"`.
func segmentName(s *config.Segment) string {
	if s.Switch != "" {
		return fmt.Sprintf("switch %q", s.Switch)
	}
	return fmt.Sprintf("the pair nic %q - nic %q", s.NICs[0].Name, s.NICs[1].Name)
}

// checkSegments reports two NICs with one address on one segment, and
// warns about NICs of one segment in different subnets.
func (l *loader) checkSegments(sc *config.Scenario) {
	segs, _ := sc.Segments()
	for _, s := range segs {
		byAddr := map[netip.Addr]*config.NIC{}
		var first *config.NIC
		for _, n := range s.NICs {
			if !n.Address.IsValid() {
				continue
			}
			b := l.blockOf(kindNIC, n.Name)
			if prev := byAddr[n.Address.Addr()]; prev != nil {
				l.attrFail(b, "address", "Duplicate address on segment",
					"%s is already the address of nic %q (%s) on %s: give each NIC on a segment an address of its own.",
					n.Address.Addr(), prev.Name, rangeLoc(prev.AttrRanges["address"]), segmentName(s))
				continue
			}
			byAddr[n.Address.Addr()] = n
			if first == nil {
				first = n
				continue
			}
			if !first.Address.Masked().Contains(n.Address.Addr()) || first.Address.Bits() != n.Address.Bits() {
				l.warnf(rangeOf(b, "address"), "Different subnets on one segment",
					"nic %q (%s) and nic %q (%s) are on %s but in different subnets, so they cannot reach each other without a router. Use one subnet per segment, like %s.",
					first.Name, first.Address, n.Name, n.Address, segmentName(s), first.Address.Masked())
			}
		}
	}
}

func rangeOf(b *block, attr string) hclv2.Range {
	if a := b.attrs[attr]; a != nil {
		return a.SrcRange
	}
	return b.def
}

// linksMisspelt reports whether a NIC writes an attribute that links it
// or addresses it under a wrong name or with a mistake already reported
// there (host = host.txx), or a host, switch or NIC block is written
// under a misspelt type: what reaches what is then unknown, and the
// unknown attribute, reference or block type is the one diagnostic.
func (l *loader) linksMisspelt() bool {
	links := []string{"host", "connect", "peer", "device", "address"}
	for _, b := range l.blocks[kindNIC] {
		if b.isMisspelt(links...) {
			return true
		}
		for _, name := range links {
			if a := b.attrs[name]; a != nil && (b.skip[name] || l.diags.errorWithin(a.Range())) {
				return true
			}
		}
	}
	return l.misspelt(kindNIC) || l.misspelt(kindHost) || l.misspelt(kindSwitch) || l.misspelt(kindMachine)
}

// checkWorkloads checks that each workload's client can reach its servers.
func (l *loader) checkWorkloads(sc *config.Scenario) {
	_, segOf := sc.Segments()
	for _, w := range sc.Workloads {
		b := l.blockOf(kindWorkload, w.Name)
		if w.Client == "" {
			continue
		}
		if w.Loopback {
			for _, s := range w.Servers {
				if s != w.Client {
					l.attrFail(b, "servers", "Loopback across hosts",
						"Loopback traffic stays inside one host, but the client is host %q and a server is host %q. Set servers = [host.%s], or use NICs without loopback.",
						w.Client, s, w.Client)
					break
				}
			}
			continue
		}
		for _, s := range w.Servers {
			n := sc.NIC(s)
			if n == nil || l.blockOf(kindNIC, n.Name).isMisspelt("address", "host") {
				continue // reported as an unknown attribute
			}
			if a := l.blockOf(kindNIC, n.Name).attr("address"); a != nil && l.diags.errorWithin(a.Range()) {
				continue // a wrong address, reported where it is written
			}
			if _, twice := l.dropped[kindNIC+"."+n.Name]; twice {
				continue // which of the two is meant is the mistake, reported
			}
			switch {
			case !n.Address.IsValid():
				l.attrFail(b, "servers", "Server without an address",
					"The workload connects to nic %q, which has no address: give it one, like address = \"10.77.0.2/24\".", n.Name)
			case n.Host == w.Client:
				l.attrFail(b, "servers", "Server on the client host",
					"nic %q is on host %q, the client itself: the kernel would carry the traffic over loopback, never through the NIC. Pick a NIC of another host, or write loopback = true with servers = [host.%s].",
					n.Name, n.Host, n.Host)
			case n.Device == "" && !l.linksMisspelt() && sc.Route(w.Client, n) == nil:
				where := "is not linked to any switch or peer"
				if seg := segOf[n.Name]; seg != nil {
					where = "is on " + segmentName(seg)
				}
				l.attrFail(b, "servers", "Server not reachable",
					"nic %q %s, and host %q has no NIC there in the subnet of %s. Link a NIC of host %q to the same segment with an address in %s.",
					n.Name, where, w.Client, n.Address, w.Client, n.Address.Masked())
			}
		}
	}
}
