package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsolab/tsolab/engine/kernel"
	"github.com/tsolab/tsolab/engine/kernel/capture"
)

func TestSafeName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"tso=false,mtu=9000", "tso=false,mtu=9000"},
		{"lo@tx", "lo@tx"},
		{"profile=linux 6/x", "profile=linux_6_x"},
		{"..", "_.."},
		{"", "_"},
		{"größe", "gr__e"},
	}
	for _, tt := range tests {
		if got := safeName(tt.in); got != tt.want {
			t.Errorf("safeName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCaptureFilesLayout(t *testing.T) {
	dir := t.TempDir()
	open := captureFiles(dir, 2)
	var got []string
	for _, ct := range []kernel.CaptureTarget{
		{Scenario: "tso=true", Workload: "bulk", Repetition: 0, NIC: "tx0", Direction: capture.Outgoing},
		{Scenario: "tso=true", Workload: "bulk", Repetition: 1, NIC: "rx0", Direction: capture.Incoming},
		{Scenario: "a/b", Workload: "w", NIC: "lo@tx"},
	} {
		w, name, err := open(ct)
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		rel, _ := filepath.Rel(dir, name)
		got = append(got, rel)
	}
	want := []string{"tso=true/bulk-r1/tx0.pcapng", "tso=true/bulk-r2/rx0.pcapng", "a_b/w-r1/lo@tx.pcapng"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("capture files (-want +got):\n%s", diff)
	}
	// Two names that become the same file are refused, not overwritten.
	if _, _, err := open(kernel.CaptureTarget{Scenario: "a_b", Workload: "w", NIC: "lo@tx"}); err == nil || !strings.Contains(err.Error(), "would hold both") {
		t.Errorf("colliding capture file: err = %v, want a refusal", err)
	}
}
