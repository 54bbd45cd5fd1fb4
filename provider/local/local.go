// Package local wires the providers of the machine the process runs on,
// one per resource kind: what tsolab calls in-process, and what its agent
// calls on another machine (package remote). It owns nothing else.
package local

import (
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host"
	"github.com/tsolab/tsolab/provider/nic"
)

// Providers returns fresh real providers, one per resource kind.
func Providers() map[provider.Kind]provider.Interface {
	return map[provider.Kind]provider.Interface{
		provider.KindHost:   host.New(),
		provider.KindSwitch: nic.NewSwitch(),
		provider.KindNIC:    nic.New(),
	}
}
