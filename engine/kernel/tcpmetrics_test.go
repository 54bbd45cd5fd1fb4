package kernel_test

import (
	"net/netip"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine/kernel"
)

// cachedMetrics lists the destination addresses the kernel caches TCP
// metrics of in namespace ns (ip tcp_metrics show).
func cachedMetrics(t *testing.T, ns string) []string {
	t.Helper()
	out, err := exec.Command("ip", "-n", ns, "tcp_metrics", "show").CombinedOutput()
	if err != nil {
		t.Fatalf("ip -n %s tcp_metrics show: %v: %s", ns, err, out)
	}
	var addrs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			addrs = append(addrs, f[0])
		}
	}
	return addrs
}

// waitCached returns once ns caches metrics of addr: the kernel stores
// them as a connection to addr closes (tcp_update_metrics), which may
// finish in softirq after the run returned.
func waitCached(t *testing.T, ns, addr string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if slices.Contains(cachedMetrics(t, ns), addr) {
			return
		}
	}
	t.Fatalf("namespace %s: no cached TCP metrics of %s after a connection to it closed; cached: %v", ns, addr, cachedMetrics(t, ns))
}

// A run deletes the TCP metrics an earlier connection to the lab's server
// left cached in the client's namespace (and of the client's address in
// the server's), and leaves those of an address the lab does not declare.
func TestRunForgetsCachedTCPMetrics(t *testing.T) {
	p := newPair(t, 1500)
	txNS, rxNS := p.Naming.HostNS("tx"), p.Naming.HostNS("rx")
	// 10.201.0.9 is not the lab's: added by hand beside rx0's address.
	const other = "10.201.0.9"
	if out, err := exec.Command("ip", "-n", rxNS, "addr", "add", other+"/24", "dev", "rx0").CombinedOutput(); err != nil {
		t.Fatalf("ip addr add: %v: %s", err, out)
	}
	w := &config.Workload{
		Name: "short", Kind: config.Stream, Client: "tx", Servers: []string{"rx0"},
		Connections: 1, WriteSize: 65536, ReadSize: 65536, Bytes: 1 << 20,
	}
	// A connection to the address the lab does not declare: the same
	// workload against a copy of the scenario whose rx0 has it.
	o := *p.Scenario
	o.NICs = slices.Clone(p.Scenario.NICs)
	rx := *o.NICs[1]
	rx.Address = netip.MustParsePrefix(other + "/24")
	o.NICs[1] = &rx
	runWorkload(t, &pair{Naming: p.Naming, Scenario: &o}, w, kernel.Options{})
	waitCached(t, txNS, other)

	first := runWorkload(t, p, w, kernel.Options{})
	if got := first.Provenance.TCPMetricsDeleted["tx"]; slices.Contains(got, other) {
		t.Errorf("first run: deleted metrics of %s, an address the lab does not declare (deleted %v)", other, got)
	}
	waitCached(t, txNS, "10.201.0.2")
	waitCached(t, rxNS, "10.201.0.1")

	// While the second run goes, its connections open (they store
	// metrics only as they close): the first run's entry must be gone.
	timed := *w
	timed.Bytes, timed.Duration = 0, 2500*time.Millisecond // Progress comes once a second: two, with room under load
	var looked int
	second := runWorkloadWatching(t, p, &timed, kernel.Options{}, func() {
		looked++
		if got := cachedMetrics(t, txNS); slices.Contains(got, "10.201.0.2") {
			t.Errorf("during the second run host tx caches metrics of %v, want the first run's entry of 10.201.0.2 deleted", got)
		}
	})
	if looked == 0 {
		t.Fatal("the second run reported no progress: the cache was not looked at while it ran")
	}
	del := second.Provenance.TCPMetricsDeleted
	if got, want := del["tx"], []string{"10.201.0.2"}; !slices.Equal(got, want) {
		t.Errorf("second run: host tx deleted cached metrics of %v, want %v (the first run's connection left them)", got, want)
	}
	if got, want := del["rx"], []string{"10.201.0.1"}; !slices.Equal(got, want) {
		t.Errorf("second run: host rx deleted cached metrics of %v, want %v", got, want)
	}
	if got := cachedMetrics(t, txNS); !slices.Contains(got, other) {
		t.Errorf("host tx caches metrics of %v after the runs, want %s's entry left alone", got, other)
	}
}
