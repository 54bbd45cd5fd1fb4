package sim

import (
	"context"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/result"
)

// pair is a two-host lab built in Go: host tx with nic tx0 back to back
// with host rx's nic rx0, and one workload from tx to rx0.
type pair struct {
	stack, rxStack string
	cpu, rxCPU     string
	cores, rxCores int
	mtu            int
	rate           config.Rate
	delay          time.Duration
	offTx, offRx   config.Offloads
	bus            config.Rate
	wl             config.Workload
	stackOptions   map[string]string
	scheduler      string // both hosts' (config.Host.Scheduler)
}

func (p pair) scenario() *config.Scenario {
	rxStack := p.rxStack
	if rxStack == "" {
		rxStack = p.stack
	}
	rxCPU := p.rxCPU
	if rxCPU == "" {
		rxCPU = p.cpu
	}
	wl := p.wl
	wl.Name = "w"
	wl.Client = "tx"
	if len(wl.Servers) == 0 {
		wl.Servers = []string{"rx0"}
	}
	if wl.Kind == "" {
		wl.Kind = config.Stream
	}
	return &config.Scenario{
		Name: "default",
		Hosts: []*config.Host{
			{Name: "tx", Stack: p.stack, StackOptions: p.stackOptions, CPU: p.cpu, Cores: p.cores, Bus: p.bus, DelayedAck: true, Scheduler: p.scheduler},
			{Name: "rx", Stack: rxStack, CPU: rxCPU, Cores: p.rxCores, DelayedAck: true, Scheduler: p.scheduler},
		},
		NICs: []*config.NIC{
			{Name: "tx0", Host: "tx", Peer: "rx0", MTU: p.mtu, Rate: p.rate, Delay: p.delay, Offload: p.offTx},
			{Name: "rx0", Host: "rx", MTU: p.mtu, Rate: p.rate, Delay: p.delay, Offload: p.offRx},
		},
		Workloads: []*config.Workload{&wl},
	}
}

func runScenario(t testing.TB, e *Engine, sc *config.Scenario) *result.WorkloadResult {
	t.Helper()
	res, err := e.Run(context.Background(), engine.RunRequest{Scenario: sc, Workload: sc.Workloads[0]})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func offloads(kv map[config.Offload]bool) config.Offloads {
	var o config.Offloads
	for _, f := range config.AllOffloads() {
		if on, ok := kv[f]; ok {
			o.Set(f, on)
		}
	}
	return o
}

func TestSmoke(t *testing.T) {
	e := New(Options{})
	e.checks = true
	p := pair{stack: "linux-6", mtu: 1500, delay: 20 * time.Microsecond, wl: config.Workload{Bytes: 100e6, WriteSize: 65536}}
	res := runScenario(t, e, p.scenario())
	if errs := e.lastCheck.errs; len(errs) > 0 {
		t.Errorf("invariants: %v", errs)
	}
	t.Logf("%+v", res.Metrics)
	t.Logf("stops %v acks %v hist %v notes %v", res.StopReasons, res.Acks, res.SendUnitHistogram, res.Notes)
}
