package kernel_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/engine/kernel"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
)

// A path that breaks during a run (here the receiver's link goes down, as
// when a namespace or link vanishes) ends the run with an error once
// nothing has arrived for StallTimeout, instead of the receivers waiting
// on their reads forever.
func TestStalledRunEnds(t *testing.T) {
	p := newPair(t, 1500)
	w := &config.Workload{
		Name: "bulk", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"},
		Connections: 2, WriteSize: 65536, Bytes: 1 << 40,
	}
	p.Scenario.Workloads = []*config.Workload{w}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	_, err := kernel.New(kernel.Options{StallTimeout: 2 * time.Second}).Run(ctx, engine.RunRequest{
		Scenario: p.Scenario, Workload: w, Naming: p.Naming, Progress: breakPath(t, p),
	})
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "nothing received for") {
		t.Fatalf("Run after the path broke: err = %v, want one saying nothing was received", err)
	}
	if ctx.Err() != nil || took > 20*time.Second {
		t.Errorf("the run took %v to end (context %v), want about 1 s + StallTimeout", took, ctx.Err())
	}
	t.Logf("ended after %v: %v", took.Round(100*time.Millisecond), err)
}

// breakPath returns a Progress callback that cuts the path at the first
// report, one second into the run: the receiver's link goes down, as when
// a namespace or link vanishes.
func breakPath(t *testing.T, p *pair) func(engine.Progress) {
	var once bool
	return func(engine.Progress) {
		if once {
			return
		}
		once = true
		err := netnsfs.Do(p.Naming.HostNS("rx"), func() error {
			l, err := netlink.LinkByName("rx0")
			if err != nil {
				return err
			}
			return netlink.LinkSetDown(l)
		})
		if err != nil {
			t.Errorf("set rx0 down: %v", err)
		}
	}
}
