package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/tsolab/tsolab/hcl"
)

// man prints tsolab's manual page (roff, section 1), made from the same
// help text the commands print for -h, so it never drifts from them:
//
//	tsolab man | man -l -
//	tsolab man > docs/tsolab.1   (the copy in the repository; a test keeps it current)
func (c *cli) man(args []string) int {
	fs := newFlagSet("man", c.stderr, "man")
	pos, err := c.parse(fs, args)
	if err != nil {
		return exitError
	}
	if len(pos) > 0 {
		c.errorf("man takes no arguments, got %q: it prints the whole manual (tsolab man | man -l -)", pos)
		return exitError
	}
	writeMan(c.stdout, c.commandHelps())
	return exitOK
}

// cmdHelp is one command as its help (-h) describes it: what the manual
// and the shell completions are made from.
type cmdHelp struct {
	name, summary, usage string
	flags                []flagHelp
}

// flagHelp is one option: its name, the placeholder of its value ("" for
// a boolean) and its help.
type flagHelp struct {
	name, value, usage string
}

var (
	flagLine  = regexp.MustCompile(`^  -([A-Za-z0-9][A-Za-z0-9_-]*)(?: (\S+))?$`)
	usageLine = regexp.MustCompile(`^Usage: tsolab (.*)$`)
)

// commandHelps asks every command for its -h and reads its usage line
// and options from it, in the order of the command names.
func (c *cli) commandHelps() []cmdHelp {
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []cmdHelp
	for _, n := range names {
		var help bytes.Buffer
		quiet := &cli{stdin: strings.NewReader(""), stdout: &help, stderr: io.Discard, env: c.env}
		cmds[n].run(quiet, []string{"-h"})
		mc := cmdHelp{name: n, summary: cmds[n].summary, usage: n}
		sc := bufio.NewScanner(&help)
		for sc.Scan() {
			line := sc.Text()
			if m := usageLine.FindStringSubmatch(line); m != nil {
				mc.usage = m[1]
				continue
			}
			if m := flagLine.FindStringSubmatch(line); m != nil {
				mc.flags = append(mc.flags, flagHelp{name: m[1], value: m[2]})
				continue
			}
			if text := strings.TrimSpace(line); strings.HasPrefix(line, "    \t") && len(mc.flags) > 0 {
				f := &mc.flags[len(mc.flags)-1]
				f.usage = strings.TrimSpace(f.usage + " " + text)
			}
		}
		out = append(out, mc)
	}
	return out
}

// writeMan writes the manual page.
func writeMan(w io.Writer, cmds []cmdHelp) {
	fmt.Fprintf(w, ".\\\" Made by tsolab man from the commands' help: do not edit; run tsolab man > docs/tsolab.1\n")
	fmt.Fprintf(w, ".TH TSOLAB 1 \"\" \"tsolab %s\" \"User Commands\"\n", roff(version))
	fmt.Fprintln(w, ".SH NAME\ntsolab \\- declarative lab provisioner for TCP segmentation-offload experiments")
	fmt.Fprintln(w, ".SH SYNOPSIS\n.B tsolab\n.I COMMAND\n[options] [DIR]\n.br\n.B tsolab help\n[COMMAND]\n.br\n.B tsolab \\-version")
	fmt.Fprintln(w, ".SH DESCRIPTION")
	fmt.Fprintln(w, roff("A lab is a directory of *.tsolab.hcl files that declares hosts, NICs with their offload flags (TSO, GSO, GRO, SG, checksum offload), MTUs, link shaping, workloads and the outcomes expected. Like Terraform, plan shows the difference between the lab and what exists, apply builds it in Linux network namespaces, test runs every scenario of the lab's matrix and judges the measurements against the lab's expect blocks, and destroy removes everything tsolab made, and nothing else."))
	fmt.Fprintln(w, ".PP")
	fmt.Fprintln(w, roff("Flags may come before or after the lab directory; DIR defaults to the current directory. apply and destroy ask for confirmation unless given -auto-approve."))
	fmt.Fprintln(w, ".SH COMMANDS")
	for _, c := range cmds {
		fmt.Fprintf(w, ".SS %s\n", roff(c.name))
		fmt.Fprintf(w, "%s.\n.PP\n.B tsolab %s\n", roff(sentence(c.summary)), roff(c.usage))
		for _, f := range c.flags {
			if f.value == "" {
				fmt.Fprintf(w, ".TP\n.B \\-%s\n", roff(f.name))
			} else {
				fmt.Fprintf(w, ".TP\n.BI \\-%s \" %s\"\n", roff(f.name), roff(f.value))
			}
			fmt.Fprintf(w, "%s\n", roff(f.usage))
		}
	}
	fmt.Fprintln(w, ".SH EXIT STATUS")
	for _, e := range []struct{ code, what string }{
		{"0", "success; for test and run, every expectation holds"},
		{"1", "an error: a mistake in the lab or the flags, a failed apply, an expectation that could not be judged"},
		{"2", "plan -detailed-exitcode: there are changes"},
		{"3", "test and run: an expectation failed, or, with -strict or strict = true in the lab, was inconclusive (fmt -check: a file is not canonical; calibrate -check: a calibration file is not what the fit gives)"},
	} {
		fmt.Fprintf(w, ".TP\n.B %s\n%s\n", e.code, roff(e.what))
	}
	fmt.Fprintln(w, ".SH ENVIRONMENT")
	for _, e := range []struct{ name, what string }{
		{hcl.EnvPrefix + "name", "sets the lab's variable name, spelt as declared (TSOLAB_VAR_mtu=9000 sets var.mtu); -var-file and -var win over it"},
		{"SSH_AUTH_SOCK", "the SSH agent whose keys log in to a machine block without identity_file"},
		{cpuProfileEnv, "write a CPU profile (pprof) of the command to this file"},
		{traceEnv, "write an execution trace (runtime/trace) of the command to this file"},
		{memProfileEnv, "write a profile of the command's allocations (pprof's allocs, a sample per 64 KiB) to this file"},
		{"GOGC", "the Go garbage collector's percent (Go's 100 when unset)"},
	} {
		fmt.Fprintf(w, ".TP\n.B %s\n%s\n", roff(e.name), roff(e.what))
	}
	fmt.Fprintln(w, ".SH FILES")
	fmt.Fprintf(w, ".TP\n.I DIR/*.tsolab.hcl\n%s\n", roff("the lab (docs/language.md)"))
	fmt.Fprintf(w, ".TP\n.I DIR/.tsolab/state.json\n%s\n", roff("what apply made, which destroy removes; apply keeps the one it replaces as state.json.backup"))
	fmt.Fprintf(w, ".TP\n.I /run/netns/tsl.LAB.HOST\n%s\n", roff("the namespace of each host, and tsl.LAB.switch.SW of each switch; LAB is the lab block's name, or -name"))
	fmt.Fprintln(w, ".SH SEE ALSO")
	fmt.Fprintln(w, roff("README.md and docs/ in tsolab's repository: language.md (the lab language), engine.md (the TSO model), report.md (the HTML report and -capture), json-format.md (the -json formats), ci.md (a lab as a CI gate)."))
}

// sentence starts s with a capital letter.
func sentence(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// roff escapes text for a roff line: backslashes, a leading dot or
// quote, and the hyphens of options (so they stay ASCII hyphens).
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
