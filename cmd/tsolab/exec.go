package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agext/levenshtein"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/remote"
)

// execCmd is `tsolab exec [DIR] HOST -- COMMAND [ARGS...]`: it runs the
// user's command inside the namespace of an applied host, or of a switch
// named switch.NAME (containerlab's exec), with tsolab's stdin, stdout and stderr, and exits with the
// command's exit status (128+N when signal N ended it).
func (c *cli) execCmd(args []string) int {
	fs := newFlagSet("exec", c.stderr, "exec [DIR] HOST -- COMMAND [ARGS...]\n\nHOST is a host of the applied lab (tx), or switch.NAME for a switch's namespace.\nAs with ip netns exec, /sys is the namespace's and the files in /etc/netns/NAMESPACE\nreplace their namesakes in /etc for the command.")
	var name stateName
	name.register(fs)
	var before, command []string
	if i := slices.Index(args, "--"); i >= 0 {
		before, command = args[:i], args[i+1:]
	} else {
		before = args
	}
	pos, err := c.parse(fs, before)
	if err != nil {
		return exitError
	}
	dir, hostName := ".", ""
	switch len(pos) {
	case 1:
		hostName = pos[0]
	case 2:
		dir, hostName = pos[0], pos[1]
	default:
		c.errorf("name the host, and the lab directory before it unless it is the current one: tsolab exec [DIR] HOST -- COMMAND")
		return exitError
	}
	if len(command) == 0 {
		c.errorf("give the command after --: tsolab exec %s -- ip -br addr", strings.Join(pos, " "))
		return exitError
	}
	ns, machine, ok := c.hostNamespace(dir, hostName, name)
	if !ok {
		return exitError
	}
	if machine != "" {
		return c.execOn(dir, machine, hostName, ns, command)
	}
	return c.execIn(hostName, ns, command)
}

// execIn runs command in the namespace ns of this machine ("" = its
// own), and returns its exit status (128+N when signal N ended it).
func (c *cli) execIn(hostName, ns string, command []string) int {
	ir := c.watchInterrupts(false)
	defer ir.stop()
	code, err := remote.RunIn(ir.work, ns, command, c.stdin, c.stdout, c.stderr, c.env)
	if err != nil {
		c.errorf("host %s: %v", hostName, err)
		return exitError
	}
	return code
}

// execOn runs command in the namespace ns of another machine, through
// its agent (tsolab agent exec), reached as the lab or its state says.
func (c *cli) execOn(dir, machine, hostName, ns string, command []string) int {
	ctx, cancel := c.signalContext()
	defer cancel()
	client, err := c.machinesOf(dir).Client(ctx, machine)
	if err != nil {
		c.errorf("host %s lives on machine %s: %v", hostName, machine, err)
		return exitError
	}
	code, err := client.Exec(ctx, ns, command, c.stdin, c.stdout, c.stderr)
	if err != nil {
		c.errorf("host %s: %v", hostName, err)
		return exitError
	}
	return code
}

// hostNamespace returns the namespace the state of dir records for host
// name, or for the host or switch it names by address (host.tx,
// switch.sw), "" for a local host, and the machine it lives on ("" =
// this one); false after printing why there is none, or when copyName
// is given and the state is another copy's.
func (c *cli) hostNamespace(dir, name string, copyName stateName) (ns, machine string, ok bool) {
	st, err := planner.ReadState(dir)
	if err != nil {
		c.fail(err)
		return "", "", false
	}
	if !c.checkStateName(dir, st, copyName) {
		return "", "", false
	}
	var hosts []string
	if st != nil {
		for _, r := range st.Resources {
			if r.Addr.Kind == provider.KindHost {
				hosts = append(hosts, r.Addr.Name)
			}
		}
	}
	if len(hosts) == 0 {
		c.errorf("the lab in %s is not applied: nothing to run in. Run tsolab apply %s first.", dir, dir)
		return "", "", false
	}
	addr := provider.Addr{Kind: provider.KindHost, Name: name}
	if a, err := provider.ParseAddr(name); err == nil && a.Kind != provider.KindNIC {
		addr = a // host.tx, or switch.sw: the bridge's namespace
	}
	rec := st.Resource(addr)
	if rec == nil {
		sort.Strings(hosts)
		c.errorf("the lab in %s has no applied host %q%s; its hosts are %s.", dir, name, didYouMean(name, hosts), strings.Join(hosts, ", "))
		return "", "", false
	}
	return rec.Attrs[provider.AttrNetNS], rec.Attrs[provider.AttrMachine], true
}

// didYouMean suggests the name of names (a host, a command) nearest to
// name, if one is close: " (did you mean NAME?)", or "".
func didYouMean(name string, names []string) string {
	best, bestDist := "", 3
	for _, h := range names {
		if d := levenshtein.Distance(name, h, nil); d < bestDist {
			best, bestDist = h, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}
