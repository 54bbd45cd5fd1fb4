package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Naming derives the names of what tsolab creates for one lab, and the
// ownership markers that let it recognise them later. Two labs with
// different IDs never share a name.
type Naming struct {
	// LabID is the lab's name, made safe for namespace names.
	LabID string
}

// NamespacePrefix is the prefix of every namespace this lab creates.
const NamespacePrefix = "tsl."

// NewNaming returns the naming of the lab called name.
func NewNaming(labName string) Naming {
	var b strings.Builder
	for _, r := range labName {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return Naming{LabID: b.String()}
}

// HostNS is the namespace of a host: "tsl.LAB.HOST".
func (n Naming) HostNS(host string) string { return NamespacePrefix + n.LabID + "." + host }

// SwitchNS is the namespace holding a switch's bridge: "tsl.LAB.switch.SW".
func (n Naming) SwitchNS(sw string) string { return NamespacePrefix + n.LabID + ".switch." + sw }

// OwnsNS reports whether the namespace name carries this lab's prefix.
func (n Naming) OwnsNS(ns string) bool {
	return strings.HasPrefix(ns, NamespacePrefix+n.LabID+".")
}

// BridgeName is the bridge interface inside every switch namespace.
const BridgeName = "br0"

// PortName is the switch-side end of a NIC's veth inside the switch
// namespace; at most 15 bytes (IFNAMSIZ-1).
func PortName(nic string) string {
	name := "p-" + nic
	if len(name) <= 15 {
		return name
	}
	sum := sha256.Sum256([]byte(nic))
	return name[:8] + "-" + hex.EncodeToString(sum[:])[:6]
}

// Alias is the ownership marker written as the interface alias
// (IFLA_IFALIAS) of every link tsolab creates: "tsolab:LAB:nic.tx0".
func (n Naming) Alias(a Addr) string { return "tsolab:" + n.LabID + ":" + a.String() }

// OwnsAlias reports whether an interface alias marks a link of this lab.
func (n Naming) OwnsAlias(alias string) bool {
	return strings.HasPrefix(alias, "tsolab:"+n.LabID+":")
}
