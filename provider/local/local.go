// Package local wires the providers of the machine the process runs on,
// one per resource kind: what tsolab calls in-process, and what its agent
// calls on another machine (package remote). It owns nothing else.
package local

import (
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host"
	"github.com/tsolab/tsolab/provider/nic"
)

// Providers returns fresh real providers, one per resource kind. The NIC
// provider takes the marks the host provider found (nic.Provider.HostMarks).
func Providers() map[provider.Kind]provider.Interface {
	h, n := host.New(), nic.New()
	n.HostMarks = h.Marks()
	return map[provider.Kind]provider.Interface{
		provider.KindHost:   h,
		provider.KindSwitch: nic.NewSwitch(),
		provider.KindNIC:    n,
	}
}
