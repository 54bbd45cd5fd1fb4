package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/inspect"
)

// inspectCmd is `tsolab inspect [-json] [DIR]`: the applied lab's hosts
// and switches with their interfaces as they are now, observed, not as
// recorded (containerlab's inspect).
func (c *cli) inspectCmd(args []string) int {
	fs := newFlagSet("inspect", c.stderr, "inspect [options] [DIR]")
	asJSON := fs.Bool("json", false, "print the observation as one JSON document: namespaces, each with its interfaces")
	dir, ok := c.parseDir(fs, args)
	if !ok {
		return exitError
	}
	st, err := planner.ReadState(dir)
	if err != nil {
		c.fail(err)
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
	seen := inspect.Observe(recorded)
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
