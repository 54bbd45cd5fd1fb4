package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
)

// targetFlags is -target ADDR, repeatable, on plan, apply and destroy.
type targetFlags []provider.Addr

func (t *targetFlags) String() string {
	var out []string
	for _, a := range *t {
		out = append(out, a.String())
	}
	return strings.Join(out, ",")
}

func (t *targetFlags) Set(v string) error {
	a, err := provider.ParseAddr(v)
	if err != nil {
		return err
	}
	*t = append(*t, a)
	return nil
}

func (t *targetFlags) register(fs *flag.FlagSet, cmd string) {
	what := "and what it depends on"
	if cmd == "destroy" {
		what = "and what depends on it"
	}
	fs.Var(t, "target", fmt.Sprintf("%s only the resource `ADDR` (nic.tx0, host.tx, switch.sw) %s, leaving the rest as it is (repeatable)", cmd, what))
}

// target narrows plan to targets; false after printing why it cannot.
func (c *cli) target(plan *planner.Plan, targets targetFlags) bool {
	if err := plan.Target(targets); err != nil {
		c.fail(err)
		return false
	}
	return true
}

// targetNote says, as Terraform does, that a targeted plan is not the
// whole lab.
func (c *cli) targetNote(plan *planner.Plan, o outputFlags) {
	if len(plan.Targets) == 0 || o.json {
		return
	}
	what := "what they depend on"
	switch {
	case plan.Mode == planner.ModeDestroy && len(plan.Targets) == 1:
		what = "what depends on it"
	case plan.Mode == planner.ModeDestroy:
		what = "what depends on them"
	case len(plan.Targets) == 1:
		what = "what it depends on"
	}
	fmt.Fprintf(c.stdout, "\nNote: -target narrowed this plan to %s and %s. The rest of the lab is left as it is: run without -target to bring all of it in line.\n",
		(*targetFlags)(&plan.Targets).String(), what)
}
