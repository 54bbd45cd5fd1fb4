package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	hclv2 "github.com/hashicorp/hcl/v2"

	"github.com/tsolab/tsolab/hcl"
	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provenance"
	"github.com/tsolab/tsolab/provider"
)

// applySaved is tsolab apply FILE: it applies exactly the plan saved in
// file, no question asked (it was reviewed). Flags that a plan fixes when
// it is made are refused: it cannot change them. A -name or -scenario
// that says what the plan already has changes nothing and is taken.
func (c *cli) applySaved(ctx context.Context, fs *flag.FlagSet, file string, o outputFlags) int {
	plan, err := planner.ReadPlanFile(file)
	var fixed []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "name", "scenario":
			if plan != nil && f.Value.String() == map[string]string{"name": plan.Lab, "scenario": plan.Scenario}[f.Name] {
				return
			}
		case "var", "var-file", "target":
		default:
			return
		}
		fixed = append(fixed, "-"+f.Name)
	})
	if len(fixed) > 0 {
		made := ""
		if plan != nil {
			made = fmt.Sprintf(" (lab %s, scenario %s)", plan.Lab, plan.Scenario)
		}
		c.errorf("%s cannot change a saved plan: %s fixed its scenario, variables, name and targets when it was made%s. To apply it as made, leave out %s: tsolab apply %s. For other ones, run tsolab plan with %s and -out FILE, then apply that file.",
			strings.Join(fixed, ", "), file, made, strings.Join(fixed, ", "), file, strings.Join(fixed, ", "))
		return exitError
	}
	if err != nil {
		c.fail(err)
		return exitError
	}
	c.warnLabChanged(file, plan)
	v := c.view(o, nil)
	providers := c.providersFor(plan.Machines, plan.Prior.Reaches())
	res, err := planner.New(planner.Options{Dir: plan.Dir, Lab: plan.Lab, Providers: providers, OnEvent: v.Event}).Apply(ctx, plan)
	code := c.finishApply(ctx, v, plan.Dir, res, err)
	if code == exitOK && !res.Interrupted {
		c.warnUnchangedGone(ctx, file, plan, res.State, providers)
	}
	return code
}

// warnUnchangedGone warns when resources the saved plan had no changes
// for are gone now (deleted after the plan was made, by hand or by
// another tsolab): the apply did not touch them, so it is complete but
// the lab is not, until a new plan makes them again.
func (c *cli) warnUnchangedGone(ctx context.Context, file string, plan *planner.Plan, st *planner.State, providers map[provider.Kind]provider.Interface) {
	if st == nil {
		return
	}
	unchanged := map[provider.Addr]bool{}
	for _, ch := range plan.Changes {
		if ch.Action == planner.NoOp {
			unchanged[ch.Addr] = true
		}
	}
	check := *st
	check.Resources = nil
	for _, r := range st.Resources {
		if unchanged[r.Addr] {
			check.Resources = append(check.Resources, r)
		}
	}
	if len(check.Resources) == 0 {
		return
	}
	var gone []string
	for addr, o := range planner.Refresh(ctx, &check, providers, 4).Resources {
		if o.Gone {
			gone = append(gone, addr.String())
		}
	}
	if len(gone) == 0 {
		return
	}
	slices.Sort(gone)
	dirArg := " " + plan.Dir
	if filepath.Clean(plan.Dir) == "." {
		dirArg = ""
	}
	c.diagnose(&hclv2.Diagnostic{Severity: hclv2.DiagWarning,
		Summary: fmt.Sprintf("%s had no changes for %s, which are gone now", file, strings.Join(gone, ", ")),
		Detail: fmt.Sprintf("They were deleted after the plan was made (by hand, or by another tsolab), so the lab is not complete. "+
			"Plan again and apply that plan to make them: tsolab plan -out %s%s (with the -scenario, -var, -name and -target the saved plan was made with), then tsolab apply %s.",
			file, dirArg, file)})
}

// labFilesHash identifies the lab files of dir among sources (a lab's
// Sources, or hcl.LabFiles'): provenance's hash of them named as in dir,
// so that a copy of the lab hashes alike. Variable files are not the
// lab's and are left out.
func labFilesHash(dir string, sources map[string][]byte) string {
	files := map[string][]byte{}
	for name, b := range sources {
		if filepath.Dir(name) == filepath.Clean(dir) && strings.HasSuffix(name, hcl.FileSuffix) {
			files[filepath.Base(name)] = b
		}
	}
	return provenance.NewLab("", "", files, nil).Hash
}

// warnLabChanged warns when the lab files of plan's directory differ from
// those it was made from (Plan.LabHash): a saved plan applies as saved,
// as Terraform's does, and the edit waits for the next plan. A plan file
// without the hash (from an older tsolab) says nothing.
func (c *cli) warnLabChanged(file string, plan *planner.Plan) {
	if plan.LabHash == "" {
		return
	}
	files, diags := hcl.LabFiles(plan.Dir)
	if !diags.HasErrors() && labFilesHash(plan.Dir, files) == plan.LabHash {
		return
	}
	where, dirArg := "in "+plan.Dir, " "+plan.Dir
	if filepath.Clean(plan.Dir) == "." {
		where, dirArg = "in the current directory", ""
	}
	detail := ""
	if diags.HasErrors() {
		detail = fmt.Sprintf("They cannot be read now: %s %s\n\n", diags[0].Summary, diags[0].Detail)
	}
	detail += fmt.Sprintf("tsolab apply %s applies the plan as saved (lab %s, scenario %s), without the changes; the next plan shows them. To apply the lab as its files are now, plan it again and apply that plan: tsolab plan -out %s%s (with the -scenario, -var, -name and -target the saved plan was made with), then tsolab apply %s.",
		file, plan.Lab, plan.Scenario, file, dirArg, file)
	c.diagnose(&hclv2.Diagnostic{Severity: hclv2.DiagWarning,
		Summary: fmt.Sprintf("The lab's files %s changed after %s was planned", where, file),
		Detail:  detail})
}
