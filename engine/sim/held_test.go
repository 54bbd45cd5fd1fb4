package sim

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/hcl"
)

// TestHeldTurnsChangeNothing runs every example lab with application
// turns held out of the queue (holdTurn) and without, and wants the same
// results and progress reports byte for byte, and fewer events where
// turns were held.
func TestHeldTurnsChangeNothing(t *testing.T) {
	dirs, err := filepath.Glob("../../examples/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no example labs: %v", err)
	}
	fewer := 0
	for _, dir := range dirs {
		lab, diags := hcl.Load(dir, hcl.Options{})
		if diags.HasErrors() {
			t.Fatalf("hcl.Load(%s): %v", dir, diags)
		}
		profiles, files, err := ProfilesFor(lab)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range lab.Scenarios {
			for _, wl := range sc.Workloads {
				var js, prog [2][]byte
				var events [2]int64
				for i, noHold := range []bool{false, true} {
					var progress []engine.Progress
					req := engine.RunRequest{Lab: lab, Scenario: sc, Workload: wl,
						Progress: func(p engine.Progress) { progress = append(progress, p) }}
					e := New(Options{CPUProfiles: profiles, ProfileFiles: files})
					e.noHold = noHold
					w := runWorld(t, e, req)
					events[i] = w.stats.events
					if js[i], err = json.Marshal(w.result(req, w.finishAt)); err != nil {
						t.Fatal(err)
					}
					if prog[i], err = json.Marshal(progress); err != nil {
						t.Fatal(err)
					}
				}
				name := filepath.Base(dir) + "/" + sc.Name + "/" + wl.Name
				if string(js[0]) != string(js[1]) {
					t.Errorf("%s: the results with held turns differ from those without", name)
				}
				if string(prog[0]) != string(prog[1]) {
					t.Errorf("%s: the progress reports with held turns differ from those without:\n%s\n%s", name, prog[0], prog[1])
				}
				if events[0] > events[1] {
					t.Errorf("%s: %d events with held turns, %d without", name, events[0], events[1])
				}
				if events[0] < events[1] {
					fewer++
				}
			}
		}
	}
	if fewer == 0 {
		t.Error("no example ran fewer events with held turns")
	}
	t.Logf("%d cells ran fewer events with held turns", fewer)
}
