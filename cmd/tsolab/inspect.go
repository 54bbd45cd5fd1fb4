package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/inspect"
	"github.com/tsolab/tsolab/remote"
)

// inspectCmd is `tsolab inspect [-json] [DIR]`: the applied lab's hosts
// and switches with their interfaces as they are now, observed, not as
// recorded (containerlab's inspect).
func (c *cli) inspectCmd(args []string) int {
	fs := newFlagSet("inspect", c.stderr, "inspect [options] [DIR]")
	asJSON := fs.Bool("json", false, "print the observation as one JSON document: namespaces, each with its interfaces")
	var name stateName
	name.register(fs)
	dir, ok := c.parseDir(fs, args)
	if !ok {
		return exitError
	}
	st, err := planner.ReadState(dir)
	if err != nil {
		c.fail(err)
		return exitError
	}
	if !c.checkStateName(dir, st, name) {
		return exitError
	}
	var recorded []provider.Resource
	if st != nil {
		for _, r := range st.Resources {
			recorded = append(recorded, provider.Resource{Addr: r.Addr, Attrs: r.Attrs})
		}
	}
	if len(recorded) == 0 {
		c.errorf("the lab in %s is not applied: nothing to inspect. Run tsolab apply %s first.", dir, dir)
		return exitError
	}
	seen, ok := c.observe(dir, recorded)
	if !ok {
		return exitError
	}
	if *asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"lab": st.Lab, "scenario": st.Scenario, "namespaces": seen}); err != nil {
			c.fail(err)
			return exitError
		}
		return exitOK
	}
	fmt.Fprintf(c.stdout, "Lab %q, scenario %s applied; as observed now:\n\n", st.Lab, st.Scenario)
	tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RESOURCE\tNAMESPACE\tINTERFACE\tNIC\tSTATE\tMTU\tADDRESSES\tOFFLOADS ON")
	for _, ns := range seen {
		netns := ns.NetNS
		if netns == "" {
			netns = "(the machine's)"
		}
		if ns.Machine != "" {
			netns += " on " + ns.Machine
		}
		if ns.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t%s\t\t\t\n", ns.Resource, netns, ns.Error)
			continue
		}
		for _, ifc := range ns.Interfaces {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", ns.Resource, netns, ifc.Name, dash(ifc.NIC),
				linkState(ifc), ifc.MTU, dash(strings.Join(ifc.Addresses, " ")), offloadsOn(ifc))
		}
	}
	tw.Flush()
	return exitOK
}

// observe reads the namespaces of recorded where each lives: on this
// machine, or through the agent of its machine (the machines read in
// parallel), in recorded's order. It returns false after printing why a
// machine could not be reached.
func (c *cli) observe(dir string, recorded []provider.Resource) ([]inspect.Namespace, bool) {
	byMachine := map[string][]provider.Resource{}
	for _, r := range recorded {
		m := r.Attrs[provider.AttrMachine]
		byMachine[m] = append(byMachine[m], r)
	}
	seen := map[string][]inspect.Namespace{"": inspect.Observe(byMachine[""])}
	delete(byMachine, "")
	if len(byMachine) > 0 {
		ctx, cancel := c.signalContext()
		defer cancel()
		machines := c.machinesOf(dir)
		var mu sync.Mutex
		var wg sync.WaitGroup
		var errs []error
		for m, rs := range byMachine {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ns, err := observeOn(ctx, machines, m, rs)
				mu.Lock()
				defer mu.Unlock()
				seen[m] = ns
				if err != nil {
					errs = append(errs, err)
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			c.fail(err)
			return nil, false
		}
	}
	// recorded's order: each machine's answer is in its own order.
	var out []inspect.Namespace
	next := map[string]int{}
	for _, r := range recorded {
		if r.Addr.Kind != provider.KindHost && r.Addr.Kind != provider.KindSwitch {
			continue
		}
		m := r.Attrs[provider.AttrMachine]
		out = append(out, seen[m][next[m]])
		next[m]++
	}
	return out, true
}

// observeOn reads the namespaces of recorded on machine m, through its
// agent.
func observeOn(ctx context.Context, machines *remote.Machines, m string, recorded []provider.Resource) ([]inspect.Namespace, error) {
	client, err := machines.Client(ctx, m)
	if err != nil {
		return nil, err
	}
	ns, err := client.Observe(ctx, recorded)
	for i := range ns {
		ns[i].Machine = m
	}
	return ns, err
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// linkState is "up", "down", or "up (oper down)" when the device is up
// but carries nothing (a veth whose peer is down); a bridge port says
// whose it is.
func linkState(ifc inspect.Interface) string {
	s := "down"
	if ifc.Up {
		s = "up"
		if ifc.Oper == "down" || ifc.Oper == "lowerlayerdown" {
			s += " (no carrier)"
		}
	}
	if ifc.Master != "" {
		s += ", port of " + ifc.Master
	}
	return s
}

// offloadsOn lists the offloads that are on, in the language's order.
func offloadsOn(ifc inspect.Interface) string {
	if ifc.Error != "" && ifc.Offloads == nil {
		return ifc.Error
	}
	var on []string
	for _, o := range config.AllOffloads() {
		if ifc.Offloads[o.String()] {
			on = append(on, o.String())
		}
	}
	if len(on) == 0 {
		return "none"
	}
	return strings.Join(on, " ")
}
