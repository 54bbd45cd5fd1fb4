package nic

import (
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/provider"
)

func TestDiagnosticsPointAtTheAttribute(t *testing.T) {
	block := hcl.Range{Filename: "lab.tsolab.hcl", Start: hcl.Pos{Line: 4, Column: 1}}
	delay := hcl.Range{Filename: "lab.tsolab.hcl", Start: hcl.Pos{Line: 7, Column: 3}}
	d := newDiags(provider.Addr{Kind: provider.KindNIC, Name: "a0"})
	d.rng, d.attrs = block, map[string]hcl.Range{"delay": delay}
	d.fixAt("delay", "delay needs netem", "")
	d.fixAt("rate", "rate too low", "")
	d.fix("something else", "")
	tests := []struct {
		summary string
		want    hcl.Range
	}{
		{"nic.a0: delay needs netem", delay},
		{"nic.a0: rate too low", block}, // where rate was written is unknown
		{"nic.a0: something else", block},
	}
	if len(d.diags) != len(tests) {
		t.Fatalf("got %d diagnostics, want %d", len(d.diags), len(tests))
	}
	for i, tt := range tests {
		got := d.diags[i]
		if got.Summary != tt.summary || got.Subject == nil || *got.Subject != tt.want {
			t.Errorf("diagnostic %d = %q at %v, want %q at %v", i, got.Summary, got.Subject, tt.summary, tt.want)
		}
	}
}
