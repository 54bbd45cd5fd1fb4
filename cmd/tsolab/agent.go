package main

import (
	"fmt"

	"github.com/tsolab/tsolab/provider/local"
	"github.com/tsolab/tsolab/remote"
)

// agent is `tsolab agent`: the other end of a lab's connection to a
// machine. The controller starts it over SSH (see package remote) and
// speaks the protocol on its standard input and output; it is not meant
// to be run by hand, so it is left out of the command list.
func (c *cli) agent(args []string) int {
	if len(args) >= 4 && args[0] == remote.ExecArg && args[2] == "--" {
		// tsolab agent exec NETNS -- COMMAND...: tsolab exec of a host
		// on this machine, asked by a controller (remote.Client.Exec).
		label := args[1]
		if label == "" {
			label = "(the machine's own namespace)"
		}
		return c.execIn(label, args[1], args[3:])
	}
	if len(args) > 0 {
		fmt.Fprintf(c.stderr, "tsolab agent: takes no arguments, got %q: it is started by tsolab itself over SSH for a lab's machine block\n", args)
		return exitError
	}
	if err := remote.ServeStdio(version, local.Providers()); err != nil {
		fmt.Fprintln(c.stderr, "tsolab agent:", err)
		return exitError
	}
	return exitOK
}
