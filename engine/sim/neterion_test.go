package sim

import (
	"fmt"
	"testing"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/result"
)

// neterionScenario is seed 001's lab: a 4-way sender, two receivers
// behind a switch, 8 streams to each, on linux-2.6.12.
func neterionScenario(tso bool, mtu int, stack string) *config.Scenario {
	write := 65535
	if mtu == 9000 {
		write = 300000
	}
	off := offloads(map[config.Offload]bool{config.TSO: tso})
	sc := &config.Scenario{
		Name: fmt.Sprintf("tso=%v,mtu=%d", tso, mtu),
		Hosts: []*config.Host{
			{Name: "tx", Stack: stack, CPU: "opteron-2005", Cores: 4, Bus: 7.5e9, DelayedAck: true},
			{Name: "rx1", Stack: stack, CPU: "opteron-2005-rx", Cores: 2, DelayedAck: true},
			{Name: "rx2", Stack: stack, CPU: "opteron-2005-rx", Cores: 2, DelayedAck: true},
		},
		Switches: []*config.Switch{{Name: "sw"}},
		NICs: []*config.NIC{
			{Name: "tx0", Host: "tx", Connect: "sw", MTU: mtu, Offload: off},
			{Name: "rx1", Host: "rx1", Connect: "sw", MTU: mtu},
			{Name: "rx2", Host: "rx2", Connect: "sw", MTU: mtu},
		},
		Workloads: []*config.Workload{{
			Name: "nttcp", Kind: config.Stream, Client: "tx", Servers: []string{"rx1", "rx2"},
			Connections: 8, WriteSize: write, Duration: 2e9,
		}},
	}
	return sc
}

// neterionSeed is seed 001's table for 2.6.12-rc4: Gb/s and sender CPU
// (% of the 4-CPU machine).
var neterionSeed = []struct {
	tso     bool
	mtu     int
	gbps    float64
	cpuPct  float64
	predict bool // a TSO-on row: not used for calibration
}{
	{false, 1500, 2.5, 55, false},
	{true, 1500, 4.0, 47, true},
	{false, 9000, 5.3, 40, false},
	{true, 9000, 6.1, 35, true},
}

func TestNeterion2005(t *testing.T) {
	// The example's calibration files: the sender fitted to the TSO-off
	// rows, the receivers to the TSO-on MTU 1500 row.
	profiles := builtinCPUProfiles()
	for _, f := range []string{"opteron-2005.calibration.json", "opteron-2005-rx.calibration.json"} {
		cal, err := ReadCalibration("../../examples/neterion-2005/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if err := cal.Apply(profiles); err != nil {
			t.Fatal(err)
		}
	}
	e := New(Options{CPUProfiles: profiles})
	for _, row := range neterionSeed {
		sc := neterionScenario(row.tso, row.mtu, "linux-2.6.12")
		res := runScenario(t, e, sc)
		gbps := res.Metrics[result.MetricThroughputBps] / 1e9
		cpu := res.Metrics[result.MetricCPUTxPct] / 4
		t.Logf("%-22s seed %.1f Gb/s @%2.0f%%  model %.2f Gb/s @%4.1f%%  err %+5.1f%% %+5.1f%%  rx %.0f%% units %.0f avg %.0f stops %v",
			sc.Name, row.gbps, row.cpuPct, gbps, cpu, (gbps/row.gbps-1)*100, (cpu/row.cpuPct-1)*100, res.Metrics[result.MetricCPURxPct], res.Metrics[result.MetricSendUnits], res.Metrics[result.MetricAvgSendBytes], res.StopReasons)
		if row.predict {
			if d := gbps/row.gbps - 1; d > 0.2 || d < -0.2 {
				t.Errorf("%s: throughput %.2f Gb/s, seed %.1f: off by %+.0f%% (> 20%%)", sc.Name, gbps, row.gbps, d*100)
			}
			if d := cpu/row.cpuPct - 1; d > 0.2 || d < -0.2 {
				t.Errorf("%s: cpu %.1f%%, seed %.0f%%: off by %+.0f%% (> 20%%)", sc.Name, cpu, row.cpuPct, d*100)
			}
		}
	}
}
