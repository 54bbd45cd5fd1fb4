package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/view"
)

// stateCommands are the subcommands of `tsolab state`, for reading and
// repairing the state by hand (Terraform's state list, show and rm).
var stateCommands = []struct{ name, args, summary string }{
	{"list", "[DIR]", "list the addresses the state records"},
	{"show", "ADDR [DIR]", "print what the state records of one resource"},
	{"rm", "ADDR... [DIR]", "forget resources: the state no longer records them, and they stay as they are"},
}

// state is `tsolab state SUBCOMMAND`.
func (c *cli) state(args []string) int {
	if len(args) == 0 {
		c.stateUsage(c.stderr)
		return exitError
	}
	switch args[0] {
	case "-h", "-help", "--help":
		c.stateUsage(c.stdout)
		c.helped = true
		return exitOK
	case "list":
		return c.stateList(args[1:])
	case "show":
		return c.stateShow(args[1:])
	case "rm":
		return c.stateRm(args[1:])
	}
	fmt.Fprintf(c.stderr, "tsolab state: unknown subcommand %q\n\n", args[0])
	c.stateUsage(c.stderr)
	return exitError
}

func (c *cli) stateUsage(w io.Writer) {
	fmt.Fprint(w, "Usage: tsolab state SUBCOMMAND [options] [DIR]\n\n"+
		"Read and repair the state by hand: what tsolab recorded it made for the\n"+
		"lab in DIR (.tsolab/state.json). ADDR is a resource address: host.NAME,\n"+
		"switch.NAME or nic.NAME.\n\nSubcommands:\n")
	for _, s := range stateCommands {
		fmt.Fprintf(w, "  %-18s %s\n", s.name+" "+s.args, s.summary)
	}
	fmt.Fprint(w, "\nOptions (every subcommand):\n  -json\n    \tprint one JSON object per line instead of text\n"+
		"\nRun tsolab state SUBCOMMAND -h for one subcommand.\n")
}

// parseState parses a subcommand's flags and arguments: addresses (as
// many as want says: 0, 1, or -1 for one or more), then DIR, "." when the
// last argument is an address; false after printing the problem.
func (c *cli) parseState(name, usage string, want int, args []string) (dir string, addrs []provider.Addr, o outputFlags, ok bool) {
	fs := newFlagSet("state "+name, c.stderr, "state "+name+" "+usage)
	fs.BoolVar(&o.json, "json", false, "print one JSON object per line instead of text")
	pos, err := c.parse(fs, args)
	if err != nil {
		return "", nil, o, false
	}
	if o.json {
		c.useJSON()
	}
	dir = "."
	if n := len(pos); n > 0 {
		_, notAddr := provider.ParseAddr(pos[n-1])
		if want == 0 || want == 1 && n > 1 || want < 0 && n > 1 && notAddr != nil {
			dir, pos = pos[n-1], pos[:n-1]
		}
	}
	for _, p := range pos {
		a, err := provider.ParseAddr(p)
		if err != nil {
			c.errorf("%v\n\nUsage: tsolab state %s %s", err, name, usage)
			return "", nil, o, false
		}
		addrs = append(addrs, a)
	}
	switch {
	case want == 0 && len(addrs) > 0, want == 1 && len(addrs) != 1, want < 0 && len(addrs) == 0:
		c.errorf("tsolab state %s takes %s, got %d address(es)\n\nUsage: tsolab state %s %s", name, usage, len(addrs), name, usage)
		return "", nil, o, false
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		c.errorf("%s is not a lab directory\n\nUsage: tsolab state %s %s", dir, name, usage)
		return "", nil, o, false
	}
	return dir, addrs, o, true
}

// readStateOf reads the state for a state subcommand: nil after printing
// the problem (an unreadable file), an empty state when none was written.
func (c *cli) readStateOf(dir string) *planner.State {
	st, err := planner.ReadState(dir)
	if err != nil {
		c.fail(err)
		return nil
	}
	if st == nil {
		st = &planner.State{}
	}
	return st
}

func (c *cli) stateList(args []string) int {
	dir, _, o, ok := c.parseState("list", "[options] [DIR]", 0, args)
	if !ok {
		return exitError
	}
	st := c.readStateOf(dir)
	if st == nil {
		return exitError
	}
	for _, r := range st.Resources {
		if o.json {
			c.json.Resource(r)
		} else {
			fmt.Fprintln(c.stdout, r.Addr)
		}
	}
	if o.json && len(st.Resources) == 0 {
		c.json.State(nil) // the version line, and a word that the state is empty
	}
	return exitOK
}

func (c *cli) stateShow(args []string) int {
	dir, addrs, o, ok := c.parseState("show", "[options] ADDR [DIR]", 1, args)
	if !ok {
		return exitError
	}
	st := c.readStateOf(dir)
	if st == nil {
		return exitError
	}
	r := st.Resource(addrs[0])
	if r == nil {
		c.fail(&planner.NotRecordedError{Dir: dir, Addrs: addrs})
		return exitError
	}
	if o.json {
		c.json.Resource(*r)
	} else {
		view.NewHuman(c.stdout, view.HumanOptions{Color: isTerminal(c.stdout)}).Resource(*r)
	}
	return exitOK
}

func (c *cli) stateRm(args []string) int {
	dir, addrs, o, ok := c.parseState("rm", "[options] ADDR... [DIR]", -1, args)
	if !ok {
		return exitError
	}
	if _, err := planner.Forget(dir, addrs); err != nil {
		c.fail(err)
		return exitError
	}
	for _, a := range addrs {
		if o.json {
			c.json.Removed(a)
		} else {
			fmt.Fprintf(c.stdout, "Removed %s\n", a)
		}
	}
	if !o.json {
		fmt.Fprintf(c.stdout, "Successfully removed %d resource instance(s).\n", len(addrs))
	}
	return exitOK
}

// stateName is -name on the commands that act on what apply made
// (destroy, show, inspect, exec). They take the lab's name from the state, so
// there -name is a check: the state must be the copy made under it.
type stateName string

func (n *stateName) register(fs *flag.FlagSet) {
	fs.StringVar((*string)(n), "name", "", "refuse unless the state in DIR is the copy made with -name `NAME` (the name comes from the state; this checks it)")
}

// checkStateName reports, and returns false, when -name was given and
// st, the state read from dir, records resources made under another name.
func (c *cli) checkStateName(dir string, st *planner.State, n stateName) bool {
	if n == "" || len(st.Resources) == 0 || st.Lab == string(n) {
		return true
	}
	c.errorf("the state in %s belongs to lab %q, not %q\n\n%s records what apply made under the name %q. "+
		"State is kept per lab directory: the copy made with -name %s has its own directory; run the command there, or give -name %s here.",
		dir, st.Lab, n, planner.StatePath(dir), st.Lab, n, st.Lab)
	return false
}
