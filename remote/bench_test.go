package remote_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
	"github.com/tsolab/tsolab/remote/remotetest"
)

// BenchmarkApplyDestroy applies and destroys a lab of 8 hosts in 4
// back-to-back veth pairs (MTU, addresses, an offload), on this machine
// and on a machine reached over SSH through its agent, in one run: the
// ratio of the two is what the agent's protocol costs the control path.
//
//	flock /work/.netns.lock go test -run '^$' -bench ApplyDestroy -count 5 ./remote/
func BenchmarkApplyDestroy(b *testing.B) {
	s := remotetest.Start(b)
	for _, where := range []string{"local", "remote"} {
		b.Run(where, func(b *testing.B) {
			labID := netnstest.LabID(b)
			machine := ""
			if where == "remote" {
				machine = "  machine = machine.r1\n"
			}
			var src strings.Builder
			fmt.Fprintf(&src, "lab %q {}\nmachine \"r1\" { address = %q }\n", labID, s.Addr)
			for i := range 4 {
				fmt.Fprintf(&src, "host \"a%d\" {\n%s}\nhost \"b%d\" {\n%s}\n", i, machine, i, machine)
				fmt.Fprintf(&src, "nic \"a%d0\" {\n  host = host.a%d\n  peer = nic.b%d0\n  address = \"10.9.%d.1/24\"\n  mtu = 9000\n  offload = { tso = false }\n}\n", i, i, i, i)
				fmt.Fprintf(&src, "nic \"b%d0\" {\n  host = host.b%d\n  address = \"10.9.%d.2/24\"\n  mtu = 9000\n}\n", i, i, i)
			}
			l := writeLab(b, src.String())
			m, p := l.planner(s)
			defer m.Close()
			ctx := context.Background()
			step := func(plan *planner.Plan, err error) {
				if err != nil {
					b.Fatal(err)
				}
				res, err := p.Apply(ctx, plan)
				if err != nil || res.Diagnostics.HasErrors() {
					b.Fatalf("apply: %v %v", err, res.Diagnostics)
				}
			}
			if where == "remote" {
				if _, err := m.Client(ctx, "r1"); err != nil { // connect and install outside the timing
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				step(p.Plan(ctx, l.sc.Name, l.desired))
				step(p.PlanDestroy(ctx))
			}
		})
	}
}
