package main

import (
	"strings"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/outcome"
)

// judgeCommand is the command that judges the verdicts this run or test
// could not (outcome.Verdict.NotRun): the same command line with one
// -scenario for every scenario that ran and every one they compare with,
// as a test (run measures only the applied scenario on the kernel engine;
// with -keep, a lab that run found applied stays applied). "" when every
// verdict was judged.
func judgeCommand(cmd string, args []string, lab *config.Lab, kind config.EngineKind, ran []string, verdicts []outcome.Verdict) string {
	want := map[string]bool{}
	missing := false
	for _, v := range verdicts {
		if v.NotRun != "" {
			want[v.NotRun], missing = true, true
		}
	}
	if !missing {
		return ""
	}
	for _, s := range ran {
		want[s] = true
	}
	line := []string{"tsolab", "test"}
	if cmd == "run" && kind == config.EngineKernel {
		line = append(line, "-keep")
	}
	for _, sc := range lab.Scenarios {
		if want[sc.Name] {
			line = append(line, "-scenario", sc.Name)
		}
	}
	line = append(line, withoutFlag(args, "scenario")...)
	for i, a := range line {
		line[i] = shellQuote(a)
	}
	return strings.Join(line, " ")
}

// flagName returns the name of the flag arg is ("-scenario=x" and
// "--scenario" are "scenario"), and whether its value is in it.
func flagName(arg string) (name string, inline bool) {
	if !strings.HasPrefix(arg, "-") || arg == "-" || arg == "--" {
		return "", false
	}
	name = strings.TrimLeft(arg, "-")
	name, _, inline = strings.Cut(name, "=")
	return name, inline
}

// withoutFlag returns args without every occurrence of the valued flag
// name and its value.
func withoutFlag(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		n, inline := flagName(args[i])
		if n == name {
			if !inline {
				i++ // its value
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_=,.:/+@%.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=,.:/+@%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
