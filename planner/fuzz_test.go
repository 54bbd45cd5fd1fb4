package planner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/providertest"
)

// echoProviders are providers whose objects are what the state says: a
// read returns the recorded attributes (or Gone, for a resource whose
// name starts with "gone"), and every change succeeds as asked.
func echoProviders() map[provider.Kind]provider.Interface {
	f := &providertest.Fake{
		ReadFn: func(r provider.ReadRequest) provider.ReadResponse {
			if strings.HasPrefix(r.Addr.Name, "gone") {
				return provider.ReadResponse{Gone: true}
			}
			return provider.ReadResponse{Actual: r.Recorded.Clone()}
		},
		CreateFn: func(r provider.CreateRequest) provider.CreateResponse {
			return provider.CreateResponse{New: r.Desired.Clone()}
		},
		UpdateFn: func(r provider.UpdateRequest) provider.UpdateResponse {
			return provider.UpdateResponse{New: r.Desired.Clone()}
		},
	}
	return map[provider.Kind]provider.Interface{provider.KindHost: f, provider.KindSwitch: f, provider.KindNIC: f}
}

// FuzzPlanState plans from arbitrary state files, past the reader
// (FuzzReadState): a state ReadState accepts is planned against a
// scenario and applied, after which a plan has no changes; then destroy
// is planned and applied, after which the state records nothing. Never a
// panic, never an error but the plan's own diagnostics.
// go test -fuzz FuzzPlanState ./planner (bench/fuzz/run.sh)
func FuzzPlanState(f *testing.F) {
	for _, s := range stateSeeds(f) {
		f.Add(s)
	}
	f.Add([]byte(`{"format_version": 1, "lab": "t", "lineage": "l", "resources": [` +
		`{"addr": "host.tx", "status": "ready", "attrs": {"kind": "netns", "netns": "tsl.t.tx"}},` +
		`{"addr": "host.gone", "status": "creating", "attrs": {"kind": "netns", "netns": "tsl.t.gone"}},` +
		`{"addr": "nic.tx0", "status": "ready", "attrs": {"host": "tx", "netns": "tsl.t.tx", "mtu": "9000"}, "depends_on": ["host.tx", "switch.sw"]},` +
		`{"addr": "switch.sw", "status": "ready", "attrs": {"netns": "tsl.t.switch.sw", "bridge": "br0"}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		// A hang is a failure too (see bench/fuzz/run.sh): seeds take
		// milliseconds.
		const hangAfter = 20 * time.Second
		watchdog := time.AfterFunc(hangAfter, func() { panic(fmt.Sprintf("FuzzPlanState: one input still planning after %v: a hang", hangAfter)) })
		defer watchdog.Stop()
		dir := t.TempDir()
		writeFile(t, planner.StatePath(dir), string(b))
		st, err := planner.ReadState(dir)
		if err != nil || st == nil {
			return
		}
		// The lab of the state, as the CLI plans it (whose lab files
		// always name it).
		lab := st.Lab
		if lab == "" {
			lab = labName
		}
		ctx := context.Background()
		p := planner.New(planner.Options{Dir: dir, Lab: lab, Providers: echoProviders()})
		sc := twoReceivers(true)
		want := provider.Desired(sc, provider.NewNaming(lab))
		plan, err := p.Plan(ctx, sc.Name, want)
		if err != nil {
			t.Fatalf("plan of a state ReadState accepted: %v", err)
		}
		if !plan.Diagnostics.HasErrors() {
			res, err := p.Apply(ctx, plan)
			if err != nil || res.Diagnostics.HasErrors() {
				t.Fatalf("apply: %v %v", err, res.Diagnostics)
			}
			again, err := p.Plan(ctx, sc.Name, want)
			if err != nil {
				t.Fatalf("plan after apply: %v", err)
			}
			if again.Diagnostics.HasErrors() || again.HasChanges() {
				t.Fatalf("plan after apply: %v %s", again.Diagnostics, again.Summary())
			}
		}
		dplan, err := p.PlanDestroy(ctx)
		if err != nil {
			t.Fatalf("destroy plan of a state ReadState accepted: %v", err)
		}
		if dplan.Diagnostics.HasErrors() {
			return
		}
		res, err := p.Apply(ctx, dplan)
		if err != nil || res.Diagnostics.HasErrors() {
			t.Fatalf("destroy: %v %v", err, res.Diagnostics)
		}
		if st, err := planner.ReadState(dir); err != nil || st != nil && len(st.Resources) > 0 {
			t.Fatalf("state after destroy: %v %+v", err, st)
		}
	})
}
