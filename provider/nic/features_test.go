package nic

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/safchain/ethtool"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/provider"
)

// kernelNames are feature names of kernel 6.18 that the groups use, and
// a few they do not.
var kernelNames = []string{
	"tx-scatter-gather", "tx-scatter-gather-fraglist",
	"tx-checksum-ipv4", "tx-checksum-ip-generic", "tx-checksum-ipv6", "tx-checksum-fcoe-crc", "tx-checksum-sctp",
	"tx-tcp-segmentation", "tx-tcp-ecn-segmentation", "tx-tcp-mangleid-segmentation", "tx-tcp6-segmentation", "tx-tcp-accecn-segmentation",
	"tx-generic-segmentation", "rx-gro", "rx-lro", "rx-checksum",
	"tx-udp-segmentation", "tx-gre-segmentation", "rx-gro-hw", "rx-gro-list",
}

// feats builds a feature state: names listed in on are active, names in
// fixed cannot change; every name in kernelNames is known.
func feats(on, fixed []string) Features {
	f := Features{}
	for _, n := range kernelNames {
		f[n] = ethtool.FeatureState{Available: true}
	}
	for _, n := range on {
		st := f[n]
		st.Active = true
		f[n] = st
	}
	for _, n := range fixed {
		st := f[n]
		st.Available = false
		f[n] = st
	}
	return f
}

func TestWhy(t *testing.T) {
	tests := []struct {
		name string
		f    Features
		w    wantOffload
		want string
	}{
		{"tso without sg", feats([]string{"tx-checksum-ip-generic"}, nil), wantOffload{config.TSO, true},
			"the kernel kept it off (requires scatter-gather)"},
		{"tso without either", feats(nil, nil), wantOffload{config.TSO, true},
			"the kernel kept it off (requires scatter-gather and a tx checksum offload)"},
		{"gso without sg", feats(nil, nil), wantOffload{config.GSO, true},
			"the kernel kept it off (requires scatter-gather)"},
		{"fixed off", feats(nil, []string{"rx-lro"}), wantOffload{config.LRO, true},
			"the device has it [fixed] off"},
		{"kept on", feats([]string{"rx-gro"}, nil), wantOffload{config.GRO, false},
			"the kernel kept it on"},
		{"unknown", Features{}, wantOffload{config.GRO, true},
			"the device does not have this offload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.why(tt.w); got != tt.want {
				t.Errorf("why(%s) = %q, want %q", tt.w, got, tt.want)
			}
		})
	}
}

func TestRequestChangesWholeGroups(t *testing.T) {
	f := feats(nil, []string{"tx-checksum-ipv4", "tx-checksum-ipv6", "tx-checksum-fcoe-crc", "tx-checksum-sctp"})
	got := f.request([]wantOffload{{config.TSO, false}, {config.TxCsum, true}})
	want := map[string]bool{
		"tx-tcp-segmentation": false, "tx-tcp-ecn-segmentation": false, "tx-tcp-mangleid-segmentation": false, "tx-tcp6-segmentation": false,
		"tx-tcp-accecn-segmentation": false,
		"tx-checksum-ip-generic":     true, // the fixed ones are left out
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

func TestDeclaredOffloads(t *testing.T) {
	got, err := declaredOffloads(provider.Attrs{"offload.sg": "true", "offload.tso": "false", "mtu": "1500", "restore.offload.gro": "true"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"tso=off", "sg=on"}
	var gotS []string
	for _, w := range got {
		gotS = append(gotS, w.String())
	}
	if diff := cmp.Diff(want, gotS); diff != "" {
		t.Errorf("declaredOffloads (-want +got):\n%s", diff)
	}
	if _, err := declaredOffloads(provider.Attrs{"offload.tso": "yes"}); err == nil {
		t.Error(`offload.tso = "yes": nil error, want one`)
	}
}

func TestShapingSizes(t *testing.T) {
	tests := []struct {
		s            shaping
		burst, limit uint32
	}{
		{shaping{rate: 2e9}, 1e6, 1e6 + 12_500_000},               // 250 MB/s: a 4 ms tick is 1 MB
		{shaping{rate: 10e6}, minBurst, minBurst + 62_500},        // slow: one TSO packet's worth
		{shaping{rate: 100e6, queue: 300_000}, minBurst, 300_000}, // a declared queue wins
	}
	for _, tt := range tests {
		if got := tt.s.burst(); got != tt.burst {
			t.Errorf("%+v burst = %d, want %d", tt.s, got, tt.burst)
		}
		if got := tt.s.limit(); got != tt.limit {
			t.Errorf("%+v limit = %d, want %d", tt.s, got, tt.limit)
		}
	}
}

func TestOffloadsFromActiveFeatures(t *testing.T) {
	got := Offloads(map[string]bool{"tx-tcp-segmentation": true, "tx-checksum-ip-generic": true, "tx-tcp-accecn-segmentation": true, "rx-gro": false})
	want := map[config.Offload]bool{config.TSO: true, config.TxCsum: true, config.GSO: false, config.GRO: false, config.LRO: false, config.SG: false, config.RxCsum: false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Offloads (-want +got):\n%s", diff)
	}
}

// FeatureGroup is offload o's feature group for the external tests that
// check it against a real device: members, the names among a device's
// feature names that the group sets, sorted; show, the ones it reads.
func FeatureGroup(names map[string]bool, o config.Offload) (members, show []string) {
	f := Features{}
	for n := range names {
		f[n] = ethtool.FeatureState{Available: true}
	}
	return f.members(o), featureGroups[o].show
}
