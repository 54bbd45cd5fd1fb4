package config

import "testing"

func TestOffloadsConflict(t *testing.T) {
	decl := func(kv map[Offload]bool) Offloads {
		var o Offloads
		for f, on := range kv {
			o.Set(f, on)
		}
		return o
	}
	for _, tt := range []struct {
		name string
		in   map[Offload]bool
		want string // the broken rule, "" for none
	}{
		{"tso without sg", map[Offload]bool{TSO: true, SG: false}, "tso requires sg (scatter-gather): the kernel turns TSO off without it"},
		{"tso without sg and tx_csum: sg first", map[Offload]bool{TSO: true, SG: false, TxCsum: false}, "tso requires sg (scatter-gather): the kernel turns TSO off without it"},
		{"tso without tx_csum", map[Offload]bool{TSO: true, TxCsum: false}, "tso requires tx_csum (a tx checksum offload): the kernel turns TSO off without it"},
		{"gso without sg", map[Offload]bool{GSO: true, SG: false}, "gso requires sg (scatter-gather): the kernel turns GSO off without it"},
		{"sg undeclared stays as it is", map[Offload]bool{TSO: true}, ""},
		{"tso off needs nothing", map[Offload]bool{TSO: false, SG: false}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := decl(tt.in).Conflict()
			got := ""
			if ok {
				got = r.String()
			}
			if got != tt.want {
				t.Errorf("Conflict() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOffloadSetFix(t *testing.T) {
	all := OffloadSet(0)
	for _, o := range AllOffloads() {
		all = all.With(o)
	}
	for _, tt := range []struct {
		in, want OffloadSet
	}{
		{all, all},
		{all.Without(SG), all.Without(SG).Without(TSO).Without(GSO)},
		{all.Without(TxCsum), all.Without(TxCsum).Without(TSO)},
		{OffloadSet(0).With(TSO).With(GSO), 0},
	} {
		if got := tt.in.Fix(); got != tt.want {
			t.Errorf("%v.Fix() = %v, want %v", tt.in, got, tt.want)
		}
	}
	if got := len(Requirements(TSO)); got != 2 {
		t.Errorf("Requirements(tso) has %d rules, want 2 (sg, tx_csum)", got)
	}
}
