package hcl

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

func TestConditionMetrics(t *testing.T) {
	tests := []struct {
		expr string
		want []string
	}{
		{"result.throughput_bps >= 1e9", []string{"throughput_bps"}},
		{"result.cpu_tx_per_gbit < scenario({ tso = false }).cpu_tx_per_gbit", []string{"cpu_tx_per_gbit"}},
		{"result.avg_send_bytes >= 4 * baseline.send_units", []string{"avg_send_bytes", "send_units"}},
		{"scenario({ tso = false }).send_units > result[\"cpu_tx_pct\"]", []string{"send_units", "cpu_tx_pct"}},
		{"abs(result.send_units / 35729 - 1) <= 0.2", []string{"send_units"}},
		{"var.floor > 1 && \"result.nope\" != \"\"", nil},
	}
	for _, tt := range tests {
		expr, diags := hclsyntax.ParseExpression([]byte(tt.expr), "t.hcl", hclv2.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("%s: %v", tt.expr, diags)
		}
		if diff := cmp.Diff(tt.want, ConditionMetrics(expr)); diff != "" {
			t.Errorf("ConditionMetrics(%q) (-want +got):\n%s", tt.expr, diff)
		}
	}
}
