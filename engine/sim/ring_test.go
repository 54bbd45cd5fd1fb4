package sim

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
)

// ringRun runs p with the receiver's CPU profile's receive ring set to
// ring frames (0 = unbounded), checking the model's invariants.
func ringRun(t *testing.T, p pair, ring int) ([]byte, int) {
	t.Helper()
	profiles := builtinCPUProfiles()
	for i := range profiles {
		if profiles[i].Name == p.rxCPU {
			profiles[i].RxRing = ring
		}
	}
	e := New(Options{CPUProfiles: profiles})
	e.checks = true
	sc := p.scenario()
	res, _ := runJSON(t, e, engine.RunRequest{Scenario: sc, Workload: sc.Workloads[0]})
	res.Provenance = nil // its hash names the ring
	js, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if errs := e.lastCheck.errs; len(errs) > 0 {
		t.Errorf("ring %d: invariants: %v", ring, errs)
	}
	missed := 0
	for _, n := range res.Notes {
		if strings.Contains(n, "rx_missed") {
			missed++
		}
	}
	return js, missed
}

// TestRxRing: a receive ring of RxRing descriptors drops the frames that
// find it full (rx_missed) and TCP repairs the loss; a ring larger than
// any backlog changes nothing; and a frame counts against the ring only
// once it has arrived, not while it is on the wire.
func TestRxRing(t *testing.T) {
	tso := offloads(map[config.Offload]bool{config.TSO: true, config.SG: true, config.TxCsum: true})
	// A slow receiver behind a 10 Gb/s wire: its interrupt core binds
	// and frames queue in front of it.
	slow := pair{stack: "linux-2.6.13", cpu: "xeon-2008", rxCPU: "opteron-2005-rx", mtu: 1500, rate: 10e9,
		delay: 20 * time.Microsecond, offTx: tso, wl: config.Workload{Bytes: 20 << 20, WriteSize: 65536, RcvBuf: 4 << 20}}
	unbounded, _ := ringRun(t, slow, 0)
	if big, missed := ringRun(t, slow, 1<<20); missed != 0 || !bytes.Equal(big, unbounded) {
		t.Errorf("a ring larger than any backlog changed the run (rx_missed notes: %d)", missed)
	}
	small, missed := ringRun(t, slow, 64)
	if missed == 0 || bytes.Equal(small, unbounded) {
		t.Errorf("a 64-frame ring in front of a receiver that binds dropped nothing")
	}
	// A fast receiver at the end of a long wire: thousands of frames are
	// on the wire at once, a handful in the ring.
	long := pair{stack: "linux-6", cpu: "modern", rxCPU: "modern", mtu: 1500, rate: 1e9,
		delay: 5 * time.Millisecond, offTx: tso, wl: config.Workload{Bytes: 20 << 20, WriteSize: 65536}}
	free, _ := ringRun(t, long, 0)
	if ringed, missed := ringRun(t, long, 32); missed != 0 || !bytes.Equal(ringed, free) {
		t.Errorf("frames on the wire counted against a 32-frame ring (rx_missed notes: %d)", missed)
	}
}
