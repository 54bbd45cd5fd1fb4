package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	hclv2 "github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/hcl"
)

// parseLab is parseDir, then loadLab with vf's variables: how every
// command that reads a lab begins. It returns nil after printing the
// problem.
func (c *cli) parseLab(fs *flag.FlagSet, args []string, vf *varFlags) (string, *config.Lab) {
	dir, ok := c.parseDir(fs, args)
	if !ok {
		return "", nil
	}
	return dir, c.loadLab(dir, vf)
}

// loadLab loads the lab in dir with the variables of vf, printing
// diagnostics; it returns nil when the lab has errors.
func (c *cli) loadLab(dir string, vf *varFlags) *config.Lab {
	vars, err := vf.values()
	if err != nil {
		c.fail(err)
		return nil
	}
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		c.errorf("%s does not exist: give a lab directory, one holding *.tsolab.hcl files", dir)
		return nil
	}
	if err == nil && strings.HasSuffix(dir, ".tsolab.hcl") {
		c.errorf("%s is a lab file: give its directory, %s (a lab is every *.tsolab.hcl file there)", dir, filepath.Dir(dir))
		return nil
	}
	if err != nil || !st.IsDir() {
		c.errorf("%s is not a lab directory: give a directory holding *.tsolab.hcl files", dir)
		return nil
	}
	lab, diags := hcl.Load(dir, hcl.Options{Vars: vars, VarFiles: vf.varFiles, Env: c.env, Name: vf.name})
	var sources map[string][]byte
	if lab != nil {
		sources = lab.Sources
	}
	c.writeDiags(sources, diags)
	if diags.HasErrors() {
		return nil
	}
	return lab
}

func (c *cli) writeDiags(sources map[string][]byte, diags hclv2.Diagnostics) {
	if len(diags) == 0 {
		return
	}
	if sources == nil {
		sources = map[string][]byte{}
	}
	for _, d := range diags {
		if d.Subject != nil {
			if _, ok := sources[d.Subject.Filename]; !ok {
				if b, err := os.ReadFile(d.Subject.Filename); err == nil {
					sources[d.Subject.Filename] = b
				}
			}
		}
	}
	if c.json != nil {
		c.json.Diagnostics(diags)
	}
	hcl.WriteDiagnostics(c.stderr, sources, diags, false)
}

func (c *cli) validate(args []string) int {
	fs := newFlagSet("validate", c.stderr, "validate [options] [DIR]")
	var vf varFlags
	vf.register(fs)
	vf.registerName(fs)
	_, lab := c.parseLab(fs, args, &vf)
	if lab == nil {
		return exitError
	}
	fmt.Fprintf(c.stdout, "Success! The lab %q is valid: %d scenario(s), %d host(s), %d switch(es), %d NIC(s), %d workload(s), %d expectation(s).\n",
		lab.Name, len(lab.Scenarios), len(lab.Scenarios[0].Hosts), len(lab.Scenarios[0].Switches),
		len(lab.Scenarios[0].NICs), len(lab.Scenarios[0].Workloads), len(lab.Expects))
	return exitOK
}

func (c *cli) fmt(args []string) int {
	fs := newFlagSet("fmt", c.stderr, "fmt [-check] [DIR]")
	check := fs.Bool("check", false, "do not rewrite; exit 3 when a file is not canonical")
	dir, ok := c.parseDir(fs, args)
	if !ok {
		return exitError
	}
	changed, diags := hcl.FormatDir(dir, !*check)
	c.writeDiags(nil, diags)
	if diags.HasErrors() {
		return exitError
	}
	for _, f := range changed {
		fmt.Fprintln(c.stdout, filepath.Clean(f))
	}
	if *check && len(changed) > 0 {
		return exitFailed
	}
	return exitOK
}
