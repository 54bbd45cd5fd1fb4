package nic_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host"
	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
	"github.com/tsolab/tsolab/provider/nic"
)

// BenchmarkLab100 applies and destroys a 100-host lab (100 namespaces,
// each with a veth to one switch) through the providers, with a pool of
// workers walking the dependencies as a planner does: the switch first,
// then each host followed by its NIC; on destroy each NIC followed by its
// host, then the switch. It reports apply-s and destroy-s per lab (the
// target is under 2 s each), and refresh-s, the Read of every host and
// NIC that plan and destroy start with.
func BenchmarkLab100(b *testing.B) {
	for _, workers := range []int{8, 16} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			benchLab(b, 100, workers)
		})
	}
}

func benchLab(b *testing.B, hosts, workers int) {
	netnstest.Require(b)
	ctx := context.Background()
	hp, sp, np := host.New(), nic.NewSwitch(), nic.New()
	var apply, refresh, destroy time.Duration
	for b.Loop() {
		n := netnstest.Naming(b)
		swAddr := provider.Addr{Kind: provider.KindSwitch, Name: "sw"}
		swAttrs := provider.Attrs{provider.AttrNetNS: n.SwitchNS("sw"), provider.AttrBridge: provider.BridgeName}
		type pair struct {
			hostAddr, nicAddr   provider.Addr
			hostAttrs, nicAttrs provider.Attrs
		}
		pairs := make([]pair, hosts)
		for i := range pairs {
			h := fmt.Sprintf("h%d", i)
			nm := fmt.Sprintf("n%d", i)
			pairs[i] = pair{
				hostAddr:  provider.Addr{Kind: provider.KindHost, Name: h},
				nicAddr:   provider.Addr{Kind: provider.KindNIC, Name: nm},
				hostAttrs: provider.Attrs{provider.AttrHostKind: "netns", provider.AttrNetNS: n.HostNS(h)},
				nicAttrs: provider.Attrs{
					provider.AttrHost: h, provider.AttrNetNS: n.HostNS(h), provider.AttrIfName: nm,
					provider.AttrLink: "switch:sw", provider.AttrPeerNetNS: n.SwitchNS("sw"), provider.AttrPeerIfName: provider.PortName(nm),
					provider.AttrAddress: fmt.Sprintf("10.%d.%d.%d/16", 100, i/250, i%250+1),
					provider.AttrMTU:     "1500",
					"offload.tso":        "true",
					"offload.gso":        "true",
				},
			}
		}
		check := func(what string, diags interface{ HasErrors() bool }) {
			if diags.HasErrors() {
				b.Errorf("%s: %v", what, diags)
			}
		}

		start := time.Now()
		check("create switch", sp.Create(ctx, provider.CreateRequest{Naming: n, Addr: swAddr, Desired: swAttrs}).Diagnostics)
		pool(workers, hosts, func(i int) {
			p := pairs[i]
			r := hp.Create(ctx, provider.CreateRequest{Naming: n, Addr: p.hostAddr, Desired: p.hostAttrs})
			check("create "+p.hostAddr.String(), r.Diagnostics)
			if !r.Diagnostics.HasErrors() {
				check("create "+p.nicAddr.String(), np.Create(ctx, provider.CreateRequest{Naming: n, Addr: p.nicAddr, Desired: p.nicAttrs}).Diagnostics)
			}
		})
		apply += time.Since(start)

		start = time.Now()
		pool(workers, hosts, func(i int) {
			p := pairs[i]
			hr := hp.Read(ctx, provider.ReadRequest{Naming: n, Addr: p.hostAddr, Recorded: p.hostAttrs})
			nr := np.Read(ctx, provider.ReadRequest{Naming: n, Addr: p.nicAddr, Recorded: p.nicAttrs})
			if hr.Gone || nr.Gone || !nr.Actual.Equal(p.nicAttrs) {
				b.Errorf("refresh %s: gone=%v/%v actual %v, want %v", p.nicAddr, hr.Gone, nr.Gone, nr.Actual, p.nicAttrs)
			}
		})
		refresh += time.Since(start)

		start = time.Now()
		pool(workers, hosts, func(i int) {
			p := pairs[i]
			check("delete "+p.nicAddr.String(), np.Delete(ctx, provider.DeleteRequest{Naming: n, Addr: p.nicAddr, Recorded: p.nicAttrs}).Diagnostics)
			check("delete "+p.hostAddr.String(), hp.Delete(ctx, provider.DeleteRequest{Naming: n, Addr: p.hostAddr, Recorded: p.hostAttrs}).Diagnostics)
		})
		check("delete switch", sp.Delete(ctx, provider.DeleteRequest{Naming: n, Addr: swAddr, Recorded: swAttrs}).Diagnostics)
		destroy += time.Since(start)
	}
	b.ReportMetric(apply.Seconds()/float64(b.N), "apply-s")
	b.ReportMetric(refresh.Seconds()/float64(b.N), "refresh-s")
	b.ReportMetric(destroy.Seconds()/float64(b.N), "destroy-s")
}

// pool runs fn(0..n-1) on workers goroutines.
func pool(workers, n int, fn func(int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
