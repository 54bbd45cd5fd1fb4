package config

import (
	"fmt"
	"strings"
)

// Offload is one segmentation or checksum offload, named as the lab
// language names it. Kernel feature names ("tx-tcp-segmentation") stay
// inside provider/nic.
type Offload uint8

const (
	TSO    Offload = iota // TCP segmentation offload (NETIF_F_TSO/TSO6)
	GSO                   // generic (software) segmentation offload
	GRO                   // generic receive offload
	LRO                   // large receive offload (hardware)
	SG                    // scatter-gather
	TxCsum                // transmit checksum offload
	RxCsum                // receive checksum offload
	numOffloads
)

var offloadNames = [numOffloads]string{"tso", "gso", "gro", "lro", "sg", "tx_csum", "rx_csum"}

func (o Offload) String() string {
	if o < numOffloads {
		return offloadNames[o]
	}
	return fmt.Sprintf("Offload(%d)", uint8(o))
}

// AllOffloads lists every offload in its canonical order.
func AllOffloads() []Offload {
	out := make([]Offload, numOffloads)
	for i := range out {
		out[i] = Offload(i)
	}
	return out
}

// ParseOffload maps a language name ("tso", "tx_csum") to its Offload.
func ParseOffload(name string) (Offload, bool) {
	for i, n := range offloadNames {
		if n == name {
			return Offload(i), true
		}
	}
	return 0, false
}

// OffloadNames returns the language names, for "did you mean" hints.
func OffloadNames() []string { return append([]string(nil), offloadNames[:]...) }

// OffloadSet is a set of offloads as a bitset.
type OffloadSet uint16

func (s OffloadSet) Has(o Offload) bool           { return s&(1<<o) != 0 }
func (s OffloadSet) With(o Offload) OffloadSet    { return s | 1<<o }
func (s OffloadSet) Without(o Offload) OffloadSet { return s &^ (1 << o) }
func (s OffloadSet) Set(o Offload, on bool) OffloadSet {
	if on {
		return s.With(o)
	}
	return s.Without(o)
}

func (s OffloadSet) String() string {
	var names []string
	for _, o := range AllOffloads() {
		if s.Has(o) {
			names = append(names, o.String())
		}
	}
	return "{" + strings.Join(names, ",") + "}"
}

// Offloads is what a NIC declares: which offloads the lab sets (Declared)
// and, of those, which it wants on (On). Offloads not declared are left as
// the device has them.
type Offloads struct {
	Declared OffloadSet
	On       OffloadSet
}

// Get reports whether o is declared and, if so, whether it is wanted on.
func (o Offloads) Get(f Offload) (on, declared bool) {
	return o.On.Has(f), o.Declared.Has(f)
}

// Set declares f with the wanted value.
func (o *Offloads) Set(f Offload, on bool) {
	o.Declared = o.Declared.With(f)
	o.On = o.On.Set(f, on)
}

// Requirement is one rule of the kernel's feature fix-up
// (netdev_fix_features in net/core/dev.c): Offload stays on only while
// Needs is on. It is the one statement of that rule: the language checks
// a NIC's declared offloads against it, the NIC provider explains with it
// what the kernel kept off, and the model applies it.
type Requirement struct {
	Offload, Needs Offload
	What           string // Needs in a diagnostic's words: "scatter-gather"
}

// requirements are the fix-up's rules, in the order they are checked.
var requirements = []Requirement{
	{TSO, SG, "scatter-gather"},
	{TSO, TxCsum, "a tx checksum offload"},
	{GSO, SG, "scatter-gather"},
}

// Requirements lists the rules that keep o on, in the order they are
// checked.
func Requirements(o Offload) []Requirement {
	var out []Requirement
	for _, r := range requirements {
		if r.Offload == o {
			out = append(out, r)
		}
	}
	return out
}

// String is the rule as a diagnostic states it: "tso requires sg
// (scatter-gather): the kernel turns TSO off without it".
func (r Requirement) String() string {
	return fmt.Sprintf("%s requires %s (%s): the kernel turns %s off without it",
		r.Offload, r.Needs, r.What, strings.ToUpper(r.Offload.String()))
}

// Fix returns s as the kernel leaves it: without every offload whose
// requirement is off.
func (s OffloadSet) Fix() OffloadSet {
	for _, r := range requirements {
		if !s.Has(r.Needs) {
			s = s.Without(r.Offload)
		}
	}
	return s
}

// Conflict returns the requirement the kernel would break to hold the
// wanted offloads together, and false when they can coexist. Offloads
// that are not declared are assumed to stay as they are and do not
// conflict.
func (o Offloads) Conflict() (Requirement, bool) {
	for _, r := range requirements {
		on, _ := o.Get(r.Offload)
		needOn, needDecl := o.Get(r.Needs)
		if on && needDecl && !needOn {
			return r, true
		}
	}
	return Requirement{}, false
}
