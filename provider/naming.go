package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// Naming derives the names of what tsolab creates for one lab, and the
// ownership markers that let it recognise them later. Two labs with
// different IDs never share a name.
type Naming struct {
	// LabID is the lab's name, made safe for namespace names.
	LabID string
	// Owner is the lineage of the state (lab directory) that creates and
	// deletes the resources; "" before a state exists. Two copies of one
	// lab (two directories, two CI jobs) share names but not owners: a
	// namespace carries its owner's mark (OwnerMark) and the other copy
	// neither adopts nor deletes it.
	Owner string
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

// OwnerMark is the ownership mark of a namespace this lab's state
// creates, written as the alias of the namespace's lo:
// "tsolab:LAB:state=LINEAGE"; "" without an Owner.
func (n Naming) OwnerMark() string {
	if n.Owner == "" {
		return ""
	}
	return "tsolab:" + n.LabID + ":state=" + n.Owner
}

// Ours reports whether a namespace's ownership mark says this state made
// it. An unmarked namespace is never ours: tsolab marks a namespace
// before binding it to its name (netnsfs.CreateMarked), so one without a
// mark was made by hand (ip netns add) or by another program, and holds
// what its maker put there.
func (n Naming) Ours(mark string) bool { return mark != "" && mark == n.OwnerMark() }

// ForeignOwnerDiagnostic says that the namespace ns of resource a exists
// but is not this state's, as its mark (or the lack of one) shows, and
// how to go on.
func (n Naming) ForeignOwnerDiagnostic(a Addr, ns, mark string) *hcl.Diagnostic {
	if mark == "" {
		return &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("%s: namespace %s exists and tsolab did not make it", a, ns),
			Detail: fmt.Sprintf("It carries no tsolab mark (the alias of its lo): it was made by hand (ip netns add) or by another program, and tsolab never takes over, changes or deletes a namespace it did not make, nor what is inside. "+
				"If it is yours and no longer needed, delete it (ip netns delete %s); otherwise run this lab under another name (-name NAME, or rename its lab block).",
				ns),
		}
	}
	ours := "this lab directory has no state yet"
	if n.Owner != "" {
		ours = "this lab directory's state is " + n.Owner
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  fmt.Sprintf("%s: namespace %s belongs to another copy of lab %s", a, ns, n.LabID),
		Detail: fmt.Sprintf("Its lo carries the mark %q: another lab directory (or CI job) on this machine applied a lab of the same name, and %s. "+
			"Two copies of one lab cannot share a machine: destroy the other one (tsolab destroy in its directory), or run this copy under another name (-name NAME, or rename its lab block). "+
			"If that copy's state is lost (its .tsolab/state.json deleted), nothing owns the namespace any more: remove it by hand (ip netns delete %s).",
			mark, ours, ns),
	}
}
