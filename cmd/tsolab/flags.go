package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	hclv2 "github.com/hashicorp/hcl/v2"
)

// parseInterspersed parses flags that may come before or after positional
// arguments ("plan -detailed-exitcode lab/" and "plan lab/ -detailed-exitcode").
// A lone "--" ends flag parsing.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// varFlags are the variable-setting flags shared by every command that
// loads a lab.
type varFlags struct {
	vars     stringList // -var name=value
	varFiles stringList // -var-file FILE
	name     string     // -name NAME
}

func (v *varFlags) register(fs *flag.FlagSet) {
	fs.Var(&v.vars, "var", "set a variable: -var `name=value` (repeatable)")
	fs.Var(&v.varFiles, "var-file", "read variables from `FILE`, an HCL file of name = value lines (repeatable)")
}

// registerName adds -name, for the commands whose lab makes or names
// something (not report, which reads results).
func (v *varFlags) registerName(fs *flag.FlagSet) {
	fs.StringVar(&v.name, "name", "", "use `NAME` instead of the lab block's name, which names everything the lab creates (tsl.NAME.HOST): two copies of one lab on one machine, e.g. parallel CI jobs, each with its own -name")
}

// values returns the -var flags as a map, or an error naming the bad one.
func (v *varFlags) values() (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range v.vars {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("-var %q: write -var name=value", kv)
		}
		out[name] = value
	}
	return out, nil
}

// newFlagSet makes a flag set that reports errors instead of exiting.
// Parsed with c.parse, its help goes to stdout when asked for (-h) and
// to stderr after a mistake.
func newFlagSet(name string, stderr io.Writer, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: tsolab %s\n\nOptions:\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args with parseInterspersed. Asked for help (-h, -help),
// it prints the help on stdout and marks the command helped, so it exits
// 0; a mistake in the flags prints the error and the help on stderr.
func (c *cli) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var out bytes.Buffer
	fs.SetOutput(&out)
	pos, err := parseInterspersed(fs, args)
	fs.SetOutput(c.stderr)
	if errors.Is(err, flag.ErrHelp) {
		c.helped = true
		c.stdout.Write(out.Bytes())
	} else {
		c.stderr.Write(out.Bytes())
	}
	if hint := unknownFlagHint(fs, err); hint != "" {
		// Said again below the options, where the eye ends.
		err = errors.New(err.Error() + hint)
		fmt.Fprintf(c.stderr, "\nError: %s\n", err)
	}
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		c.jsonCommandLine(fs, args, err)
	}
	return pos, err
}

// jsonCommandLine writes err, a command line that does not parse, as a
// diagnostic on stdout when the command line asked for JSON there, so
// that a program reading stdout alone learns why the command exited 1.
func (c *cli) jsonCommandLine(fs *flag.FlagSet, args []string, err error) {
	if c.json != nil || !wantsJSON(fs, args) {
		return
	}
	c.useJSON()
	c.json.Diagnostics(hclv2.Diagnostics{{
		Severity: hclv2.DiagError,
		Summary:  "Invalid command line",
		Detail:   err.Error() + ": run tsolab help " + fs.Name() + " for the options.",
	}})
}

// unknownFlagHint suggests the option nearest to a mistyped one: err is
// the flag package's "flag provided but not defined: -NAME" (else "").
func unknownFlagHint(fs *flag.FlagSet, err error) string {
	if err == nil {
		return ""
	}
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, "-"+f.Name) })
	return didYouMean(name, names)
}

// wantsJSON reports whether args ask for JSON on stdout: -json where it
// is a switch (plan, apply, destroy, show, state), -json - where it
// names a file (run, test).
func wantsJSON(fs *flag.FlagSet, args []string) bool {
	f := fs.Lookup("json")
	if f == nil {
		return false
	}
	bf, isBool := f.Value.(interface{ IsBoolFlag() bool })
	for i, a := range args {
		a = strings.TrimPrefix(a, "-")
		switch {
		case isBool && bf.IsBoolFlag() && (a == "-json" || a == "json" || a == "json=true"):
			return true
		case (a == "json" || a == "-json") && i+1 < len(args) && args[i+1] == "-":
			return true
		case a == "json=-" || a == "-json=-":
			return true
		}
	}
	return false
}

// parseDir parses args (flags anywhere) and returns the one lab directory
// or plan file they name, "." when none; false after printing the problem.
func (c *cli) parseDir(fs *flag.FlagSet, args []string) (string, bool) {
	pos, err := c.parse(fs, args)
	if err != nil {
		return "", false
	}
	switch len(pos) {
	case 0:
		return ".", true
	case 1:
		return pos[0], true
	}
	err = fmt.Errorf("expected one lab directory, got %d arguments: %v", len(pos), pos)
	c.jsonCommandLine(fs, args, err)
	fmt.Fprintln(c.stderr, "Error:", err)
	return "", false
}

// parseOutput is parseDir for a command with o's -json switch: with it,
// every later message, failures included, is a JSON line on stdout.
func (c *cli) parseOutput(fs *flag.FlagSet, args []string, o *outputFlags) (string, bool) {
	dir, ok := c.parseDir(fs, args)
	if ok && o.json {
		c.useJSON()
	}
	return dir, ok
}
