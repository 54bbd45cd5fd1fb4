package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/tsolab/tsolab/provenance"
	"github.com/tsolab/tsolab/remote"
	"github.com/tsolab/tsolab/view"
)

// Exit codes.
const (
	exitOK      = 0
	exitError   = 1
	exitChanges = 2 // plan -detailed-exitcode: there are changes
	exitFailed  = 3 // test/run: an expectation failed
)

// cli carries the process's streams so tests can run commands in-process.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	env            []string
	// helped is set when the command's flags asked for its help (-h):
	// the help went to stdout and the command exits 0.
	helped bool
	// json, while a command runs with -json, is the JSON-lines view every
	// message of the command goes to, its failures included (useJSON).
	json *view.JSON
	// workers, when not 0, is how many of the model's runs go at once
	// (simWorkers).
	workers int
	// pool holds the command's connections to the lab's other machines
	// (remotePool), closed when it ends.
	pool *remote.Pool
	// signals, while a command that acts on interruptions runs, takes
	// the interrupt signals from its start to its end (signalWatch).
	signals *signalWatch
}

type command struct {
	summary string
	run     func(c *cli, args []string) int
}

func commands() map[string]command {
	return map[string]command{
		"validate":   {"check a lab without touching the system", (*cli).validate},
		"fmt":        {"rewrite lab files in the canonical format", (*cli).fmt},
		"plan":       {"show what apply would change", (*cli).plan},
		"apply":      {"create or update the lab", (*cli).apply},
		"destroy":    {"remove everything the lab created", (*cli).destroy},
		"show":       {"print the recorded state", (*cli).show},
		"state":      {"list, show or forget (rm) what the state records, to repair it by hand", (*cli).state},
		"graph":      {"print the lab's dependency graph as DOT", (*cli).graph},
		"run":        {"run the workloads of the applied scenario", (*cli).runCmd},
		"test":       {"plan, apply, run and judge every scenario, then destroy", (*cli).test},
		"version":    {"print the version", (*cli).version},
		"calibrate":  {"fit the model's cost parameters to a lab's observed figures", (*cli).calibrate},
		"report":     {"render a results file as a self-contained HTML report", (*cli).reportCmd},
		"exec":       {"run a command inside a host's namespace: tsolab exec [DIR] HOST -- COMMAND", (*cli).execCmd},
		"inspect":    {"list the applied lab's hosts, interfaces, addresses and offloads as they are", (*cli).inspectCmd},
		"man":        {"print this manual page (roff): tsolab man | man -l -", (*cli).man},
		"completion": {"print a shell completion script (bash, zsh or fish)", (*cli).completion},
	}
}

// main leaves the garbage collector at Go's GOGC of 100 unless the
// environment sets one. Session 8 set 400 for a 1000-host plan on an
// Intel guest (CPU 0.33-0.35 s against 0.37-0.40, peak RSS 82 against
// 58 MB); on session 15's AMD EPYC guest, where a page fault costs more
// (a paravirtual guest: pvm), the heap that 400 lets grow costs more
// than the collections it saves: a plan of bench/provision-1000's lab,
// 4 rounds alternating at load ~10, CPU 0.61-0.70 s and 9.8-11.0 k page
// faults with 100 against 0.70-0.98 s and 17.6-18.6 k with 400 (200:
// 0.60-0.74 s, 11.8-12.5 k).
func main() {
	stop := startProfile()
	code := processCLI().main(os.Args[1:])
	stop()
	os.Exit(code)
}

func (c *cli) main(args []string) int {
	cmds := commands()
	if len(args) == 0 {
		c.usage(c.stdout, cmds)
		return exitOK
	}
	switch args[0] {
	case "-h", "-help", "--help":
		c.usage(c.stdout, cmds)
		return exitOK
	case "help":
		return c.help(cmds, args[1:])
	case "-version", "--version":
		return c.version(args[1:])
	case "agent": // started over SSH by tsolab itself (package remote)
		return c.agent(args[1:])
	}
	if err := setFaults(c.env); err != nil {
		fmt.Fprintln(c.stderr, "tsolab:", err)
		return exitError
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(c.stderr, "tsolab: unknown command %q%s\n\n", args[0], didYouMean(args[0], commandNames(cmds)))
		c.usage(c.stderr, cmds)
		return exitError
	}
	code := c.runCommand(args[0], cmd, args[1:])
	if c.helped {
		return exitOK
	}
	return code
}

// help is `tsolab help [COMMAND]`: the command list, or a command's
// options (what COMMAND -h prints).
func (c *cli) help(cmds map[string]command, args []string) int {
	if len(args) == 0 {
		c.usage(c.stdout, cmds)
		return exitOK
	}
	cmd, ok := cmds[args[0]]
	if len(args) > 1 || !ok {
		fmt.Fprintf(c.stderr, "tsolab: no help for %q%s: give one command\n\n", strings.Join(args, " "), didYouMean(args[0], commandNames(cmds)))
		c.usage(c.stderr, cmds)
		return exitError
	}
	cmd.run(c, []string{"-h"})
	return exitOK
}

// commandNames is the names of cmds, sorted.
func commandNames(cmds map[string]command) []string {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (c *cli) usage(w io.Writer, cmds map[string]command) {
	names := commandNames(cmds)
	fmt.Fprintln(w, "Usage: tsolab COMMAND [options] [DIR]")
	fmt.Fprintln(w, "\nCommands:")
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun tsolab help COMMAND (or tsolab COMMAND -h) for a command's options;")
	fmt.Fprintln(w, "tsolab -version prints the version.")
}

const version = provenance.Version

func (c *cli) version(args []string) int {
	fs := newFlagSet("version", c.stderr, "version")
	pos, err := c.parse(fs, args)
	if err != nil {
		return exitError
	}
	if len(pos) > 0 {
		fmt.Fprintf(c.stderr, "Error: version takes no arguments, got %q\n", pos)
		return exitError
	}
	fmt.Fprintln(c.stdout, "tsolab", version)
	return exitOK
}
