package sim

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
)

func TestExploreFreeBSD(t *testing.T) {
	if os.Getenv("EXPLORE") == "" {
		t.Skip("set EXPLORE=1")
	}
	for _, lro := range []bool{false, true} {
		for _, st := range []string{"freebsd-10", "freebsd-11"} {
			cp := builtinCPUProfiles()
			for i := range cp {
				if ring := os.Getenv("RING"); ring != "" {
					fmt.Sscan(ring, &cp[i].RxRing)
				}
			}
			e := New(Options{CPUProfiles: cp})
			e.checks = true
			p := pair{stack: st, mtu: 1500, delay: 20 * time.Microsecond, cpu: os.Getenv("CPU"), rxCPU: os.Getenv("RXCPU"), rxCores: 1, cores: 1,
				offRx: offloads(map[config.Offload]bool{config.LRO: lro}),
				wl:    config.Workload{Bytes: 100e6, WriteSize: 131072, SndBuf: 1 << 20, RcvBuf: 2 << 20}}
			res := runScenario(t, e, p.scenario())
			m := res.Metrics
			t.Logf("lro=%v %s: thr %.2f Gb/s units %.0f single %.3f pkts %.0f avg %.0f cpu tx %.0f rx %.0f retr %.0f errs %v", lro, st,
				m["throughput_bps"]/1e9, m["send_units"], m["single_mss_fraction"], m["data_packets"], m["avg_send_bytes"], m["cpu_tx_pct"], m["cpu_rx_pct"], m["retransmits"], e.lastCheck.errs)
			t.Logf("  stops %v acks %v hist %v", res.StopReasons, res.Acks, res.SendUnitHistogram[:min(8, len(res.SendUnitHistogram))])
		}
	}
}
