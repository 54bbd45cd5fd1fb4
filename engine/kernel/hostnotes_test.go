package kernel

import (
	"strings"
	"testing"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
)

// TestHostNotesNameSimOnlyAttributes checks that host attributes only the
// model applies are named in the results, never silently dropped.
func TestHostNotesNameSimOnlyAttributes(t *testing.T) {
	tests := []struct {
		host config.Host
		want string // "" = no note
	}{
		{config.Host{Name: "plain", DelayedAck: true}, ""},
		{config.Host{Name: "old", Stack: "linux-2.6.12", Cores: 4, DelayedAck: true}, "host.old: cores, stack describe the sim engine's model"},
		{config.Host{Name: "quick", DelayedAck: false}, "host.quick: delayed_ack describe the sim engine's model"},
		{config.Host{Name: "rx", CoresOf: "tx", DelayedAck: true}, "host.rx: cores_of describe the sim engine's model"},
	}
	for _, tt := range tests {
		h := tt.host
		notes := hostNotes(engine.RunRequest{Scenario: &config.Scenario{Hosts: []*config.Host{&h}}}, nil)
		switch {
		case tt.want == "" && len(notes) != 0:
			t.Errorf("host %s: got notes %q, want none", h.Name, notes)
		case tt.want != "" && (len(notes) != 1 || !strings.HasPrefix(notes[0], tt.want)):
			t.Errorf("host %s: got notes %q, want one starting %q", h.Name, notes, tt.want)
		}
	}
}
