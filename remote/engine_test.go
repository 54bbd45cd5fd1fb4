package remote

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/engine/kernel"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/result"
)

// loopbackLab is a scenario whose server host rx lives on machine m1 and
// whose client tx lives here, both in the process's own namespace (hosts
// of kind local, their NICs the loopback device): the kernel engine's
// Workers run without root, the server's in an Agent over a pipe.
func loopbackLab(kind config.WorkloadKind) (*config.Scenario, *config.Workload) {
	w := &config.Workload{Name: "w", Kind: kind, Client: "tx", Servers: []string{"rx0"}, Connections: 1,
		Duration: 1500 * time.Millisecond, RequestSize: 64, ResponseSize: 64}
	sc := &config.Scenario{
		Name: "s",
		Hosts: []*config.Host{
			{Name: "tx", Kind: config.HostLocal, DelayedAck: true},
			{Name: "rx", Kind: config.HostLocal, Machine: "m1", DelayedAck: true},
		},
		NICs: []*config.NIC{
			{Name: "tx0", Host: "tx", Device: "lo", Address: netip.MustParsePrefix("127.0.0.1/8")},
			{Name: "rx0", Host: "rx", Device: "lo", Address: netip.MustParsePrefix("127.0.0.2/8")},
		},
		Workloads: []*config.Workload{w},
	}
	return sc, w
}

// pipeEngine is a kernel engine whose machine m1 is an Agent over a pipe;
// the returned conn is the agent's end.
func pipeEngine(t *testing.T) (*kernel.Engine, *Client) {
	c, _ := pipeClient(t, &Agent{version: "1", hash: "h"})
	return kernel.New(kernel.Options{DisableCapture: true, Remote: func(ctx context.Context, m string, job kernel.Job, capture kernel.CaptureFunc) (kernel.Worker, error) {
		if m != "m1" {
			t.Fatalf("a Worker for machine %q, want m1", m)
		}
		return OpenWorker(ctx, c, job, capture)
	}}), c
}

// The kernel engine runs the server side in the agent (through the
// protocol's Worker calls) and the client here; the result names each
// side's machine, and counts the one kernel's softirq time once.
func TestKernelWorkerOverThePipe(t *testing.T) {
	for _, kind := range []config.WorkloadKind{config.Stream, config.RR} {
		t.Run(string(kind), func(t *testing.T) {
			eng, _ := pipeEngine(t)
			sc, w := loopbackLab(kind)
			res, err := eng.Run(context.Background(), engine.RunRequest{Scenario: sc, Workload: w, Naming: provider.NewNaming("pipe")})
			if err != nil {
				t.Fatal(err)
			}
			if res.Metrics[result.MetricBytes] <= 0 || res.Metrics[result.MetricThroughputBps] <= 0 {
				t.Errorf("metrics %v: want bytes and throughput from the agent's receiver", res.Metrics)
			}
			if kind == config.RR && res.Metrics[result.MetricTransactionsPerS] <= 0 {
				t.Errorf("transactions_per_s = %v, want the client's transactions", res.Metrics[result.MetricTransactionsPerS])
			}
			if d := res.Metrics[result.MetricDurationS]; d < 1.4 || d > 3 {
				t.Errorf("duration_s = %v, want about 1.5", d)
			}
			want := []result.Side{{Side: "client", Host: "tx", Kernel: res.Kernel}, {Side: "server", Host: "rx", Machine: "m1", Kernel: res.Kernel}}
			if len(res.Sides) != 2 || res.Sides[0] != want[0] || res.Sides[1] != want[1] {
				t.Errorf("sides %+v, want %+v", res.Sides, want)
			}
			if res.Metrics[result.MetricCPURxPct] <= 0 || res.Metrics[result.MetricCPURxPct] > 250 {
				t.Errorf("cpu_rx_pct = %v: the agent's receiver threads, and the machine's softirq once", res.Metrics[result.MetricCPURxPct])
			}
			if _, ok := res.Offloads["rx0"]; !ok {
				t.Errorf("offloads %v: want rx0's, read back on machine m1", res.Offloads)
			}
			if res.Provenance == nil || res.Provenance.Sysctls["rx"] == nil {
				t.Errorf("provenance %+v: want rx's sysctls, read on machine m1", res.Provenance)
			}
		})
	}
}

// A workload whose client and server both live on machine m1 runs
// wholly in its agent: one Worker there holds both ends.
func TestKernelWorkerBothSidesRemote(t *testing.T) {
	eng, _ := pipeEngine(t)
	sc, w := loopbackLab(config.RR)
	sc.Hosts[0].Machine = "m1"
	res, err := eng.Run(context.Background(), engine.RunRequest{Scenario: sc, Workload: w, Naming: provider.NewNaming("pipe")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics[result.MetricTransactionsPerS] <= 0 {
		t.Errorf("transactions_per_s = %v, want the agent's client's transactions", res.Metrics[result.MetricTransactionsPerS])
	}
	for _, s := range res.Sides {
		if s.Machine != "m1" {
			t.Errorf("side %+v: want machine m1", s)
		}
	}
}

// A connection to the agent lost mid-run fails the run with an error
// naming the machine; the local side's workers end.
func TestKernelWorkerLostMidRun(t *testing.T) {
	eng, c := pipeEngine(t)
	sc, w := loopbackLab(config.Stream)
	w.Duration = 30 * time.Second
	done := make(chan error, 1)
	go func() {
		_, err := eng.Run(context.Background(), engine.RunRequest{Scenario: sc, Workload: w, Naming: provider.NewNaming("pipe"),
			Progress: func(engine.Progress) { c.rpc.Close() }})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "machine m1") || !strings.Contains(err.Error(), "lost the connection to the agent") {
			t.Fatalf("run with the connection lost: %v, want an error naming machine m1 and the lost connection", err)
		}
		t.Log(err)
	case <-time.After(20 * time.Second):
		t.Fatal("the run did not end within 20 s of losing its machine (the workload lasts 30 s)")
	}
}
