package sim

import (
	"testing"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
)

// tbenchScenario is seed 004's shape: 8 concurrent request/response
// connections over one host's loopback, TSO/GSO on lo on or off.
func tbenchScenario(tso bool, opts map[string]string) *config.Scenario {
	off := offloads(map[config.Offload]bool{config.TSO: tso, config.GSO: tso})
	return &config.Scenario{
		Name:  "tbench",
		Hosts: []*config.Host{{Name: "tb", Stack: "linux-2.6.27", StackOptions: opts, CPU: "xeon-2008", DelayedAck: true}},
		NICs:  []*config.NIC{{Name: "lo", Host: "tb", Device: "lo", Offload: off}},
		Workloads: []*config.Workload{{
			Name: "tbench", Kind: config.RR, Client: "tb", Servers: []string{"tb"}, Loopback: true,
			Concurrency: 8, RequestSize: 256, ResponseSize: 4096, NoDelay: true, Duration: 1e9,
		}},
	}
}

// TestLoopbackTbench checks seed 004's directions with tbench-sized
// messages: TSO/GSO on loopback is slower than off on linux-2.6.27 (the
// xeon-2008 profile's Divide cost is calibrated on that ~2% gap), and
// dropping the size-goal modulo shrinks it.
func TestLoopbackTbench(t *testing.T) {
	e := New(Options{})
	rate := func(tso bool, opts map[string]string) float64 {
		res := runScenario(t, e, tbenchScenario(tso, opts))
		return res.Metrics[engine.MetricTransactionsPerS]
	}
	gap := func(opts map[string]string) float64 {
		on, off := rate(true, opts), rate(false, opts)
		t.Logf("%v: on %.0f/s off %.0f/s gap %.2f%%", opts, on, off, (1-on/off)*100)
		return 1 - on/off
	}
	base := gap(nil)
	noMod := gap(map[string]string{"size_goal_modulo": "false"})
	noDefer := gap(map[string]string{"tso_defer": "false"})
	if base <= 0 {
		t.Errorf("TSO/GSO on loopback is not slower than off: gap %.2f%%, seed 004 saw ~2%%", base*100)
	}
	if noMod >= base {
		t.Errorf("without the modulo the gap is %.2f%%, not below %.2f%%", noMod*100, base*100)
	}
	// Messages of one segment never reach tcp_tso_should_defer, so
	// switching it off can only leave the gap as it is.
	if noDefer > base {
		t.Errorf("without TSO deferral the gap is %.2f%%, above %.2f%%", noDefer*100, base*100)
	}
}
