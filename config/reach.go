package config

// Segment is one broadcast domain tsolab links: the NICs on one switch, or
// one back-to-back veth pair.
type Segment struct {
	Switch string // the switch's name; "" for a pair
	NICs   []*NIC // on a switch in declaration order; a pair's NIC that names Peer first
}

// Segments lists the scenario's segments in the order their first NIC is
// declared, and maps each linked NIC's name to its segment. A NIC that
// adopts a device, or is linked to nothing, is on no segment.
func (s *Scenario) Segments() ([]*Segment, map[string]*Segment) {
	var out []*Segment
	byNIC := map[string]*Segment{}
	bySwitch := map[string]*Segment{}
	for _, n := range s.NICs {
		switch {
		case n.Connect != "":
			seg := bySwitch[n.Connect]
			if seg == nil {
				seg = &Segment{Switch: n.Connect}
				bySwitch[n.Connect] = seg
				out = append(out, seg)
			}
			seg.NICs = append(seg.NICs, n)
			byNIC[n.Name] = seg
		case n.Peer != "":
			t := s.NIC(n.Peer)
			if t == nil || byNIC[t.Name] != nil {
				continue
			}
			seg := &Segment{NICs: []*NIC{n, t}}
			out = append(out, seg)
			byNIC[n.Name], byNIC[t.Name] = seg, seg
		}
	}
	return out, byNIC
}

// Route is the one rule for which NIC of host client carries its traffic
// to server, used by the language's check, the model and the kernel
// engine; nil when none does.
//
// On a segment tsolab links (a switch or a pair), it is the client's first
// NIC on that segment whose subnet holds the server's address; when the
// server has no address (the model needs none), the client's first NIC on
// the segment. A NIC that adopts a device is on a network tsolab does not
// know, so the machine's routing decides: the client's first NIC whose
// subnet holds the address, or else its first NIC with an address.
func (s *Scenario) Route(client string, server *NIC) *NIC {
	_, segOf := s.Segments()
	if seg := segOf[server.Name]; seg != nil {
		for _, n := range seg.NICs {
			if n.Host != client {
				continue
			}
			if !server.Address.IsValid() || n.Address.IsValid() && n.Address.Masked().Contains(server.Address.Addr()) {
				return n
			}
		}
		return nil
	}
	if server.Device == "" {
		return nil
	}
	var first *NIC
	for _, n := range s.NICs {
		if n.Host != client || !n.Address.IsValid() {
			continue
		}
		if server.Address.IsValid() && n.Address.Masked().Contains(server.Address.Addr()) {
			return n
		}
		if first == nil {
			first = n
		}
	}
	return first
}
