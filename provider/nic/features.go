package nic

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/safchain/ethtool"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
)

// featureGroup is how one language offload maps to kernel features (the
// names `ethtool -k` prints). Setting it changes every feature whose name
// matches set (a path.Match pattern, the one the ethtool binary uses for
// `ethtool -K DEV tso off`, off_flag_def in its common.c) and that the
// device lets change; reading it looks at show: the offload is on when
// any of those is active. The members of set come from the kernel's own
// feature names, so a feature a newer kernel adds to a group
// (tx-tcp-accecn-segmentation in 6.18) goes with it.
type featureGroup struct {
	set  string
	show []string
}

var featureGroups = map[config.Offload]featureGroup{
	config.TSO:    {set: "tx-tcp*-segmentation", show: []string{"tx-tcp-segmentation"}},
	config.GSO:    {set: "tx-generic-segmentation", show: []string{"tx-generic-segmentation"}},
	config.GRO:    {set: "rx-gro", show: []string{"rx-gro"}},
	config.LRO:    {set: "rx-lro", show: []string{"rx-lro"}},
	config.SG:     {set: "tx-scatter-gather*", show: []string{"tx-scatter-gather"}},
	config.TxCsum: {set: "tx-checksum-*", show: []string{"tx-checksum-ipv4", "tx-checksum-ip-generic", "tx-checksum-ipv6"}},
	config.RxCsum: {set: "rx-checksum", show: []string{"rx-checksum"}},
}

// members returns the names in f (every feature the kernel names) that
// make offload o, sorted.
func (f Features) members(o config.Offload) []string {
	var out []string
	for name := range f {
		if ok, _ := path.Match(featureGroups[o].set, name); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Offloads says which of the language's offloads are on, given which
// kernel features a device has active (safchain/ethtool's Features):
// the one place outside this package's own calls where kernel feature
// names turn into the language's.
func Offloads(active map[string]bool) map[config.Offload]bool {
	out := map[config.Offload]bool{}
	for o, g := range featureGroups {
		for _, name := range g.show {
			out[o] = out[o] || active[name]
		}
	}
	return out
}

// Features is a device's feature state as ethtool reports it, by kernel
// feature name.
type Features map[string]ethtool.FeatureState

// State reports whether the offload is on, whether the device has any
// feature of it at all, and whether it can change (not [fixed]).
func (f Features) State(o config.Offload) (on, known, changeable bool) {
	g := featureGroups[o]
	for _, name := range g.show {
		st, ok := f[name]
		if !ok {
			continue
		}
		known = true
		on = on || st.Active
	}
	for _, name := range f.members(o) {
		if f[name].Available {
			changeable = true
		}
	}
	return on, known, changeable
}

// request is the ethtool change that asks for the wanted offloads: every
// changeable feature of each group, set to the wanted value.
func (f Features) request(want []wantOffload) map[string]bool {
	req := map[string]bool{}
	for _, w := range want {
		for _, name := range f.members(w.o) {
			if f[name].Available {
				req[name] = w.on
			}
		}
	}
	return req
}

// wantOffload is one declared offload.
type wantOffload struct {
	o  config.Offload
	on bool
}

func (w wantOffload) String() string { return w.o.String() + "=" + onOff(w.on) }

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// declaredOffloads reads the offload.* attributes, in canonical order.
func declaredOffloads(a provider.Attrs) ([]wantOffload, error) {
	var out []wantOffload
	for k, v := range a {
		name, ok := strings.CutPrefix(k, provider.PrefixOffload)
		if !ok {
			continue
		}
		o, ok := config.ParseOffload(name)
		if !ok {
			return nil, fmt.Errorf("unknown offload %q (known: %s)", name, strings.Join(config.OffloadNames(), ", "))
		}
		on, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("offload.%s = %q is not true or false", name, v)
		}
		out = append(out, wantOffload{o, on})
	}
	// canonical order, independent of map iteration
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].o < out[j-1].o; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

// why explains why the kernel left offload w.o at the opposite of w.on,
// given the features after the change: "the kernel kept it off (requires
// scatter-gather)" or "the device has it [fixed] off".
func (f Features) why(w wantOffload) string {
	on, known, changeable := f.State(w.o)
	switch {
	case !known:
		return "the device does not have this offload"
	case !changeable:
		return "the device has it [fixed] " + onOff(on)
	}
	if w.on {
		var missing []string
		for _, r := range config.Requirements(w.o) {
			if rOn, _, _ := f.State(r.Needs); !rOn {
				missing = append(missing, r.What)
			}
		}
		if len(missing) > 0 {
			return fmt.Sprintf("the kernel kept it off (requires %s)", strings.Join(missing, " and "))
		}
	}
	return "the kernel kept it " + onOff(on)
}

// fixedConflict returns, for a device's features before any change, why
// an offload cannot be had at all (it is [fixed] at the other value, or
// the device lacks it), or "".
func (f Features) fixedConflict(w wantOffload) string {
	on, known, changeable := f.State(w.o)
	switch {
	case !known && w.on:
		return "the device does not have this offload"
	case !known:
		return ""
	case !changeable && on != w.on:
		return "the device has it [fixed] " + onOff(on)
	}
	return ""
}

// ReadOffloads reads which of the language's offloads are on for the
// interface ifname in the named namespace ("" the machine's own), through
// the ethtool ioctl, keyed by the language's names ("tso"). It changes
// nothing.
func ReadOffloads(ns, ifname string) (map[string]bool, error) {
	var feats map[string]bool
	err := netnsfs.Do(ns, func() error {
		e, err := ethtool.NewEthtool()
		if err != nil {
			return err
		}
		defer e.Close()
		feats, err = e.Features(ifname)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read offloads of %s: %w", ifname, err)
	}
	out := map[string]bool{}
	on := Offloads(feats)
	for _, o := range config.AllOffloads() {
		out[o.String()] = on[o]
	}
	return out, nil
}
