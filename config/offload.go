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

// Conflict returns a description of why the kernel cannot hold the wanted
// offloads together (netdev_fix_features: TSO needs SG and a checksum
// feature, GSO needs SG), and the offload that would be dropped, or "" when
// they can coexist. Offloads that are not declared are assumed to stay as
// they are and do not conflict.
func (o Offloads) Conflict() (reason string, dropped Offload) {
	off := func(f Offload) bool { on, decl := o.Get(f); return decl && !on }
	if on, _ := o.Get(TSO); on {
		if off(SG) {
			return "tso requires sg (scatter-gather): the kernel turns TSO off without it", TSO
		}
		if off(TxCsum) {
			return "tso requires tx_csum (a checksum offload): the kernel turns TSO off without it", TSO
		}
	}
	if on, _ := o.Get(GSO); on && off(SG) {
		return "gso requires sg (scatter-gather): the kernel turns GSO off without it", GSO
	}
	return "", 0
}
