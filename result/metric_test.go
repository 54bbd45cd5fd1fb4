package result

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestDocListsTheTable checks the metric list of docs/json-format.md
// against the table: the doc's table is docTable's text, between its
// markers.
func TestDocListsTheTable(t *testing.T) {
	b, err := os.ReadFile("../docs/json-format.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- metrics: from result.Metrics() -->\n", "<!-- end of metrics -->\n"
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/json-format.md has no %q ... %q section", begin, end)
	}
	if got, want := doc[i+len(begin):j], docTable(); got != want {
		t.Errorf("docs/json-format.md's metric list differs from the table; put this between the markers:\n%s", want)
	}
}

// docTable is the metric table as a markdown table.
func docTable() string {
	var b strings.Builder
	b.WriteString("| metric | unit | workloads | engines | meaning |\n| --- | --- | --- | --- | --- |\n")
	for _, m := range Metrics() {
		kinds := strings.Join(m.Kinds, ", ")
		if slices.Equal(m.Kinds, allKinds) {
			kinds = "all"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", m.Name, m.Unit, kinds, strings.Join(m.Engines, ", "), m.Description)
	}
	return b.String()
}

// TestTable checks the table's rows: one per name, each with a unit, a
// scale, kinds, engines and a meaning, the chart places distinct, and the
// lists derived from it.
func TestTable(t *testing.T) {
	seen := map[string]bool{}
	charts := map[int]string{}
	for _, m := range Metrics() {
		if seen[m.Name] {
			t.Errorf("%s: two rows", m.Name)
		}
		seen[m.Name] = true
		if m.Unit == "" || m.Scale == 0 || len(m.Kinds) == 0 || len(m.Engines) == 0 || m.Description == "" {
			t.Errorf("%s: a field is empty: %+v", m.Name, m)
		}
		if m.Chart > 0 {
			if o, dup := charts[m.Chart]; dup {
				t.Errorf("%s and %s share chart place %d", o, m.Name, m.Chart)
			}
			charts[m.Chart] = m.Name
		}
	}
	for _, k := range AckKinds {
		if m, ok := Lookup(MetricAcks(k)); !ok || !slices.Equal(m.Engines, []string{EngineSim}) {
			t.Errorf("acks_%s: %+v, %v; want a row of the sim engine", k, m, ok)
		}
	}
	shared := Names()
	if want := EngineNames(EngineKernel); !slices.Equal(shared, want) {
		t.Errorf("Names() = %v, want the kernel engine's %v", shared, want)
	}
	if sim := EngineNames(EngineSim); !slices.Equal(sim[:len(shared)], shared) || len(sim) != len(shared)+len(AckKinds)+1 {
		t.Errorf("EngineNames(sim) = %v, want %v then its acks_* and cwnd_mean_segments", sim, shared)
	}
	if got := Charted([]string{MetricDurationS, MetricAcks("quick"), MetricCPUTxPct, MetricThroughputBps}); !slices.Equal(got, []string{MetricThroughputBps, MetricCPUTxPct, MetricDurationS}) {
		t.Errorf("Charted = %v, want throughput, sender CPU, duration", got)
	}
	if d := Describe("newer_metric"); d.Label != "newer_metric" || d.Scale != 1 || !d.Means(KindRR) {
		t.Errorf("Describe of a name not in the table = %+v, want it shown by its name, unscaled, for every kind", d)
	}
	have := map[string]bool{MetricAcks("quick"): true, MetricAcks("dup"): true, MetricBytes: true, MetricThroughputBps: true}
	if got := Order(have); !slices.Equal(got, []string{MetricThroughputBps, MetricBytes, "acks_dup", "acks_quick"}) {
		t.Errorf("Order = %v, want the shared metrics in table order, then the others sorted", got)
	}
}

// TestDocListsStopReasons checks docs/engine.md's list of the model's stop
// reasons against StopReasons.
func TestDocListsStopReasons(t *testing.T) {
	b, err := os.ReadFile("../docs/engine.md")
	if err != nil {
		t.Fatal(err)
	}
	list := strings.Join(StopReasons[:], ", ")
	if !strings.Contains(strings.Join(strings.Fields(string(b)), " "), "stopped: "+list+")") {
		t.Errorf("docs/engine.md does not list the stop reasons as %q", "stopped: "+list+")")
	}
}
