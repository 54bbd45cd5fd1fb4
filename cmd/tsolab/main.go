package main

import (
	"fmt"
	"io"
	"os"
	"sort"
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
	// stream, while run or test has -json -, is the one JSON-lines view
	// every message of the command goes to.
	stream *runStream
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
		"graph":      {"print the lab's dependency graph as DOT", (*cli).graph},
		"run":        {"run the workloads of the applied scenario", (*cli).runCmd},
		"test":       {"plan, apply, run and judge every scenario, then destroy", (*cli).test},
		"version":    {"print the version", (*cli).version},
		"report":     {"render a results file as a self-contained HTML report", (*cli).reportCmd},
		"completion": {"print a shell completion script (bash, zsh or fish)", (*cli).completion},
	}
}

func main() {
	c := &cli{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, env: os.Environ()}
	os.Exit(c.main(os.Args[1:]))
}

func (c *cli) main(args []string) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		c.usage(cmds)
		if len(args) == 0 {
			return exitError
		}
		return exitOK
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(c.stderr, "tsolab: unknown command %q\n\n", args[0])
		c.usage(cmds)
		return exitError
	}
	return cmd.run(c, args[1:])
}

func (c *cli) usage(cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(c.stderr, "Usage: tsolab COMMAND [options] [DIR]")
	fmt.Fprintln(c.stderr, "\nCommands:")
	for _, n := range names {
		fmt.Fprintf(c.stderr, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(c.stderr, "\nRun tsolab COMMAND -h for a command's options.")
}

const version = "0.1.0-dev"

func (c *cli) version(args []string) int {
	fmt.Fprintln(c.stdout, "tsolab", version)
	return exitOK
}
