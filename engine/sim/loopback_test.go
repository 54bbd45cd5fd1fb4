package sim

import (
	"testing"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

// tbenchScenario is seed 004's shape: 8 concurrent request/response
// connections over one host's loopback, TSO/GSO on lo on or off.
func tbenchScenario(tso bool, opts map[string]string, response int) *config.Scenario {
	off := offloads(map[config.Offload]bool{config.TSO: tso, config.GSO: tso})
	return &config.Scenario{
		Name:  "tbench",
		Hosts: []*config.Host{{Name: "tb", Stack: "linux-2.6.27", StackOptions: opts, CPU: "xeon-2008", DelayedAck: true}},
		NICs:  []*config.NIC{{Name: "lo", Host: "tb", Device: "lo", Offload: off}},
		Workloads: []*config.Workload{{
			Name: "tbench", Kind: config.RR, Client: "tb", Servers: []string{"tb"}, Loopback: true,
			Concurrency: 8, RequestSize: 55, ResponseSize: response, NoDelay: true, Duration: 1e9,
		}},
	}
}

// TestLoopbackTbench checks seed 004's directions on linux-2.6.27 with two
// of tbench's replies (dbench sockio.c: a ReadX of size bytes is a 55-byte
// request and a size+4-byte reply). With a 4096-byte reply, one loopback
// segment, TSO/GSO on is slower by the divides of the size goal alone
// (examples/loopback-tbench fits xeon-2008's Divide to the seed's gaps on
// such replies; this test runs the built-in value), and dropping the
// modulo shrinks it. With the largest reply, 65539 bytes, the seed's two
// causes act together: the modulo makes the size goal 3 x 16384, the reply
// a 49152-byte buffer and a two-segment tail, and tcp_tso_should_defer
// holds the tail; short-circuiting either removes the loss, as each of the
// seed's two experiments reduced it.
func TestLoopbackTbench(t *testing.T) {
	e := New(Options{})
	rate := func(tso bool, opts map[string]string, response int) float64 {
		res := runScenario(t, e, tbenchScenario(tso, opts, response))
		return res.Metrics[result.MetricTransactionsPerS]
	}
	gap := func(opts map[string]string, response int) float64 {
		on, off := rate(true, opts, response), rate(false, opts, response)
		t.Logf("%d B, %v: on %.0f/s off %.0f/s gap %.2f%%", response, opts, on, off, (1-on/off)*100)
		return 1 - on/off
	}
	noModulo := map[string]string{"size_goal_modulo": "false"}
	noDefer := map[string]string{"tso_defer": "false"}
	for _, response := range []int{4096, 65539} {
		base := gap(nil, response)
		noMod := gap(noModulo, response)
		noDef := gap(noDefer, response)
		if base <= 0 {
			t.Errorf("%d B replies: TSO/GSO on loopback is not slower than off: gap %.2f%%, seed 004 saw ~2%%", response, base*100)
		}
		if noMod >= base {
			t.Errorf("%d B replies: without the modulo the gap is %.2f%%, not below %.2f%%", response, noMod*100, base*100)
		}
		// A reply of one segment never reaches tcp_tso_should_defer, so
		// switching it off can only leave the gap as it is; with the
		// two-segment tail it must shrink the gap.
		if response == 4096 && noDef > base {
			t.Errorf("%d B replies: without TSO deferral the gap is %.2f%%, above %.2f%%", response, noDef*100, base*100)
		}
		if response == 65539 && noDef >= base {
			t.Errorf("%d B replies: without TSO deferral the gap is %.2f%%, not below %.2f%%", response, noDef*100, base*100)
		}
	}
}
