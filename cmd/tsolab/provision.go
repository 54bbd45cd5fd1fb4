package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine/kernel"
	"github.com/tsolab/tsolab/hcl"
	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/local"
	"github.com/tsolab/tsolab/remote"
	"github.com/tsolab/tsolab/view"
)

// providers wires the real providers, one per resource kind (with the
// test's kill hook when it is set: see killAfterOpsEnv).
func providers() map[provider.Kind]provider.Interface {
	return withFaults(local.Providers())
}

// providersFor wires the providers of a lab whose resources may live on
// other machines: calls for a resource on a machine go to its agent,
// through the command's one connection to the machine (c.remotePool). declared are the machines the lab's blocks declare,
// recorded the ones its state records: a machine block wins, and the
// state's record reaches a machine the lab no longer declares, so destroy
// and saved plans need no lab file.
func (c *cli) providersFor(declared, recorded map[string]config.Reach) map[provider.Kind]provider.Interface {
	all := maps.Clone(recorded)
	if all == nil {
		all = map[string]config.Reach{}
	}
	maps.Copy(all, declared)
	if len(all) == 0 {
		return providers()
	}
	m := c.remotePool().Machines(local.Providers(), remote.MachinesOf(all))
	return withFaults(m.Providers()) // a kill point counts remote calls too
}

// recordedMachines is how the state of the lab in dir says to reach its
// machines; nil without a state (one that cannot be read is the
// planner's to report).
func recordedMachines(dir string) map[string]config.Reach {
	if st, err := planner.ReadState(dir); err == nil && st != nil {
		return st.Machines
	}
	return nil
}

// declaredMachines reads the lab in dir quietly for its machine blocks:
// destroy takes a machine's address from the lab when it still declares
// the machine (it may have moved), and from the state otherwise.
func (c *cli) declaredMachines(dir string) map[string]config.Reach {
	if lab, diags := hcl.Load(dir, hcl.Options{Env: c.env}); !diags.HasErrors() && len(lab.Scenarios) > 0 {
		return lab.Scenarios[0].Reaches()
	}
	return nil
}

// onMachines reports whether a record of st lives on a machine block's
// machine: only then does destroy need the lab's files (declaredMachines;
// loading a 1000-host lab costs 70 ms) for the machines' addresses.
func onMachines(st *planner.State) bool {
	for _, r := range st.Resources {
		if r.Attrs[provider.AttrMachine] != "" {
			return true
		}
	}
	return false
}

// reaches is how to reach the machines of the lab in dir: its machine
// blocks, and the state's record of those it no longer declares.
func (c *cli) reaches(dir string) map[string]config.Reach {
	all := maps.Clone(recordedMachines(dir))
	if all == nil {
		all = map[string]config.Reach{}
	}
	maps.Copy(all, c.declaredMachines(dir))
	return all
}

// machinesOf reaches the machines of the lab in dir (see reaches)
// through the command's connections (c.remotePool).
func (c *cli) machinesOf(dir string) *remote.Machines {
	return c.remotePool().Machines(local.Providers(), remote.MachinesOf(c.reaches(dir)))
}

// remotePool is the command's connections to the lab's other machines,
// one per machine (and one agent there), made on first use and shared
// by every phase of the command (each plan and apply, the kernel
// engine's runs, destroy), closed when it ends (c.closeMachines). A phase
// that starts after a machine's connection was lost connects again.
func (c *cli) remotePool() *remote.Pool {
	if c.pool == nil {
		c.pool = remote.NewPool(remote.Options{Version: version})
	}
	return c.pool
}

// kernelWorkers is the kernel engine's way to the lab's other machines
// (its workers there run in their agents), through the command's
// connections (c.remotePool); nil when the lab declares none.
func (c *cli) kernelWorkers(lab *config.Lab) kernel.WorkerFactory {
	if len(lab.Scenarios) == 0 || len(lab.Scenarios[0].Machines) == 0 {
		return nil
	}
	return remote.KernelWorkers(c.remotePool().Machines(providers(), remote.MachinesOf(lab.Scenarios[0].Reaches())))
}

// closeMachines ends the connections to the machines the command reached.
func (c *cli) closeMachines() {
	if c.pool != nil {
		c.pool.Close()
		c.pool = nil
	}
}

// outputFlags are the rendering flags shared by the provisioning commands.
type outputFlags struct {
	json    bool
	noColor bool
	// brief (tsolab test without -verbose) shows plans and applies in
	// one line each, and in full only what goes wrong (briefView).
	brief bool
}

func (o *outputFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&o.json, "json", false, "print one JSON object per line instead of text")
	fs.BoolVar(&o.noColor, "no-color", false, "no ANSI colors")
}

func (c *cli) view(o outputFlags, sources map[string][]byte) view.View {
	if o.json && c.json != nil {
		return c.json // one stream, one version line
	}
	if o.json {
		c.useJSON()
		return c.json
	}
	human := view.NewHuman(c.stdout, view.HumanOptions{Color: !o.noColor && isTerminal(c.stdout), Sources: sources})
	if o.brief {
		return briefView{View: human, w: c.stdout}
	}
	return human
}

func isTerminal(w io.Writer) bool {
	if sw, ok := w.(*stdoutWatch); ok {
		w = sw.w
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// pickScenario returns the scenario named name, or the first one.
func (c *cli) pickScenario(lab *config.Lab, name string) *config.Scenario {
	if name == "" {
		return lab.Scenarios[0]
	}
	if sc := lab.Scenario(name); sc != nil {
		return sc
	}
	c.errorf("lab %q has no scenario %q.\n\nScenarios are named by their matrix values in declaration order: %s",
		lab.Name, name, strings.Join(scenarioNames(lab.Scenarios), ", "))
	return nil
}

// scenarioLine says which scenario a plan is for, and, when the lab has
// more than one, which others there are and how to pick one.
func scenarioLine(lab *config.Lab, sc *config.Scenario, picked bool) string {
	n := len(lab.Scenarios)
	switch {
	case n == 1:
		return fmt.Sprintf("Lab %q, scenario %s (its only one).\n", lab.Name, sc.Name)
	case picked:
		return fmt.Sprintf("Lab %q, scenario %s (-scenario; the lab has %d).\n", lab.Name, sc.Name, n)
	}
	names := scenarioNames(lab.Scenarios)
	list := strings.Join(names, ", ")
	if n > 6 {
		list = strings.Join(names[:6], ", ") + ", …"
	}
	return fmt.Sprintf("Lab %q, scenario %s: the first of %d (%s).\nPick another with -scenario NAME.\n", lab.Name, sc.Name, n, list)
}

// newPlanner wires a planner for scenario sc of lab (nil sc: its first
// scenario's machines, which are the same in every one, and no ranges).
func (c *cli) newPlanner(dir string, lab *config.Lab, sc *config.Scenario, v view.View) *planner.Planner {
	opts := planner.Options{Dir: dir, Lab: lab.Name, OnEvent: v.Event}
	if sc != nil {
		opts.Ranges, opts.AttrRanges = planner.Ranges(sc), planner.AttrRanges(sc)
		opts.Machines = sc.Reaches()
	} else if len(lab.Scenarios) > 0 {
		opts.Machines = lab.Scenarios[0].Reaches()
	}
	opts.Providers = c.providersFor(opts.Machines, recordedMachines(dir))
	return planner.New(opts)
}

// planLab loads, plans and renders for the command cmd (plan, apply); it
// returns nil after printing the reason when planning failed. Planning a
// host on this machine probes its kernel in a scratch namespace: a user
// the kernel refuses one is told so once, before any plan is shown.
func (c *cli) planLab(ctx context.Context, cmd, dir string, vf *varFlags, scenario string, targets targetFlags, o outputFlags) (*config.Lab, *planner.Plan, view.View) {
	lab := c.loadLab(dir, vf)
	if lab == nil {
		return nil, nil, nil
	}
	sc := c.pickScenario(lab, scenario)
	if sc == nil || !c.mayMakeNamespaces("tsolab "+cmd+" probes the kernel in a scratch network namespace", []*config.Scenario{sc}) {
		return nil, nil, nil
	}
	v := c.view(o, lab.Sources)
	p := c.newPlanner(dir, lab, sc, v)
	plan, err := p.Plan(ctx, sc.Name, provider.Desired(sc, provider.NewNaming(lab.Name)))
	if err != nil {
		c.fail(err)
		return nil, nil, nil
	}
	if !c.target(plan, targets) {
		return nil, nil, nil
	}
	if j, ok := v.(*view.JSON); ok {
		j.Message("info", "plan_scenario", strings.ReplaceAll(strings.TrimSpace(scenarioLine(lab, sc, scenario != "")), "\n", " "), map[string]any{
			"lab": lab.Name, "scenario": sc.Name, "picked": scenario != "", "scenarios": scenarioNames(lab.Scenarios),
		})
	} else {
		fmt.Fprintln(c.stdout, scenarioLine(lab, sc, scenario != ""))
	}
	v.Plan(plan)
	c.targetNote(plan, o)
	if len(plan.Diagnostics) > 0 {
		v.Diagnostics(plan.Diagnostics)
	}
	if plan.Diagnostics.HasErrors() {
		return nil, nil, nil
	}
	return lab, plan, v
}

func (c *cli) plan(args []string) int {
	fs := newFlagSet("plan", c.stderr, "plan [options] [DIR]")
	var vf varFlags
	var o outputFlags
	vf.register(fs)
	vf.registerName(fs)
	o.register(fs)
	detailed := fs.Bool("detailed-exitcode", false, "exit 0 when there are no changes, 1 on error, 2 when there are changes")
	out := fs.String("out", "", "save the plan to `FILE`, for a later tsolab apply FILE that makes exactly its changes")
	scenario := fs.String("scenario", "", "the matrix cell `NAME` to plan, e.g. tso=false (default: the first)")
	var targets targetFlags
	targets.register(fs, "plan")
	dir, ok := c.parseOutput(fs, args, &o)
	if !ok {
		return exitError
	}
	ctx, cancel := c.signalContext()
	defer cancel()
	lab, plan, _ := c.planLab(ctx, "plan", dir, &vf, *scenario, targets, o)
	if plan == nil {
		return exitError
	}
	if *out != "" {
		plan.LabHash = labFilesHash(dir, lab.Sources)
		if err := planner.WritePlanFile(*out, plan); err != nil {
			c.fail(err)
			return exitError
		}
		if !o.json {
			fmt.Fprintf(c.stdout, "\nSaved the plan to %s. To make exactly these changes, run:\n    tsolab apply %s\n", *out, *out)
		}
	}
	if *detailed && plan.HasChanges() {
		return exitChanges
	}
	return exitOK
}

// confirm asks the user to type "yes"; an interruption (ctx) while it
// waits is a no.
func (c *cli) confirm(ctx context.Context, question string) bool {
	fmt.Fprintf(c.stdout, "\n%s\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: ", question)
	answer := make(chan *string, 1) // nil: stdin ended unanswered
	go func() {
		line, err := bufio.NewReader(c.stdin).ReadString('\n')
		if err != nil && line == "" {
			answer <- nil
			return
		}
		answer <- &line
	}()
	select {
	case line := <-answer:
		if line == nil {
			fmt.Fprintln(c.stdout)
			return false
		}
		return strings.TrimSpace(*line) == "yes"
	case <-ctx.Done():
		fmt.Fprintf(c.stdout, "\n%v\n", context.Cause(ctx))
		return false
	}
}

func (c *cli) apply(args []string) int {
	fs := newFlagSet("apply", c.stderr, "apply [options] [DIR|PLANFILE]")
	var vf varFlags
	var o outputFlags
	vf.register(fs)
	vf.registerName(fs)
	o.register(fs)
	auto := fs.Bool("auto-approve", false, "do not ask for confirmation")
	scenario := fs.String("scenario", "", "the matrix cell `NAME` to apply, e.g. tso=false (default: the first)")
	var targets targetFlags
	targets.register(fs, "apply")
	target, ok := c.parseOutput(fs, args, &o)
	if !ok {
		return exitError
	}
	ctx, cancel := c.signalContext()
	defer cancel()

	if st, err := os.Stat(target); err == nil && !st.IsDir() {
		return c.applySaved(ctx, fs, target, o)
	}
	lab, plan, v := c.planLab(ctx, "apply", target, &vf, *scenario, targets, o)
	if plan == nil {
		return exitError
	}
	if !plan.HasChanges() {
		return exitOK
	}
	if !*auto && o.json {
		c.errorf("-json needs -auto-approve\n\ntsolab cannot ask for approval on a JSON stream: add -auto-approve, or apply a plan saved with tsolab plan -out FILE.")
		return exitError
	}
	if !*auto && !c.confirm(ctx, "Do you want to perform these actions?") {
		fmt.Fprintln(c.stdout, "Apply cancelled.")
		return exitError
	}
	res, err := c.newPlanner(target, lab, nil, v).Apply(ctx, plan)
	return c.finishApply(ctx, v, target, res, err)
}

// finishApply shows how the apply (or destroy) of the lab in dir ended;
// an interrupted one also says on stderr, where it is seen when stdout
// is gone, what the state records.
func (c *cli) finishApply(ctx context.Context, v view.View, dir string, res *planner.ApplyResult, err error) int {
	if err != nil {
		// Lock contention and stale saved plans explain themselves.
		c.fail(err)
		return exitError
	}
	v.Applied(res)
	if res.Interrupted {
		fmt.Fprintf(c.stderr, "tsolab: %v: %s\n", context.Cause(ctx), res.Summary())
		c.reportRecorded(dir, res.Mode != planner.ModeDestroy)
	}
	if len(res.Failed) > 0 || res.Diagnostics.HasErrors() {
		return exitError
	}
	return exitOK
}

func (c *cli) destroy(args []string) int {
	fs := newFlagSet("destroy", c.stderr, "destroy [options] [DIR]")
	var o outputFlags
	o.register(fs)
	auto := fs.Bool("auto-approve", false, "do not ask for confirmation")
	var targets targetFlags
	targets.register(fs, "destroy")
	var name stateName
	name.register(fs)
	dir, ok := c.parseOutput(fs, args, &o)
	if !ok {
		return exitError
	}
	// A broken stdout does not stop a destroy: only a signal does.
	ir := c.watchInterrupts(false)
	defer ir.stop()
	code, _ := c.destroyDir(ir.work, dir, name, o, targets, *auto)
	return code
}

// destroyDir destroys what the state of dir records. It needs no lab
// files: the state names everything (a lab whose files were deleted can
// still be destroyed). With name, the state must be that copy's.
func (c *cli) destroyDir(ctx context.Context, dir string, name stateName, o outputFlags, targets targetFlags, auto bool) (int, *planner.ApplyResult) {
	st, err := planner.ReadState(dir)
	if err != nil {
		c.fail(err)
		return exitError, nil
	}
	if !c.checkStateName(dir, st, name) {
		return exitError, nil
	}
	if st == nil || len(st.Resources) == 0 {
		if o.json {
			c.view(o, nil).Plan(&planner.Plan{Mode: planner.ModeDestroy})
		} else {
			fmt.Fprintln(c.stdout, "No changes. Nothing to destroy: the lab has no recorded resources.")
		}
		return exitOK, nil
	}
	v := c.view(o, nil)
	var declared map[string]config.Reach
	if onMachines(st) {
		declared = c.declaredMachines(dir)
	}
	p := planner.New(planner.Options{Dir: dir, Lab: st.Lab, Providers: c.providersFor(declared, st.Machines), OnEvent: v.Event})
	plan, err := p.PlanDestroy(ctx)
	if err != nil {
		c.fail(err)
		return exitError, nil
	}
	if !c.target(plan, targets) {
		return exitError, nil
	}
	v.Plan(plan)
	c.targetNote(plan, o)
	v.Diagnostics(plan.Diagnostics)
	if plan.Diagnostics.HasErrors() {
		return exitError, nil
	}
	if !plan.HasChanges() {
		// Nothing to delete, but records of what refresh found gone
		// (deleted outside tsolab, or made anew by another copy) go.
		if plan.Prior != nil && len(plan.Prior.Resources) < len(st.Resources) {
			if _, err := p.Apply(ctx, plan); err != nil {
				c.fail(err)
				return exitError, nil
			}
		}
		return exitOK, nil
	}
	if !auto && o.json {
		c.errorf("-json needs -auto-approve\n\ntsolab cannot ask for approval on a JSON stream: add -auto-approve.")
		return exitError, nil
	}
	question := "Do you really want to destroy all resources of the lab?"
	if len(targets) > 0 {
		question = "Do you really want to destroy these resources of the lab?"
	}
	if !auto && !c.confirm(ctx, question) {
		fmt.Fprintln(c.stdout, "Destroy cancelled.")
		return exitError, nil
	}
	res, err := p.Apply(ctx, plan)
	return c.finishApply(ctx, v, dir, res, err), res
}

func (c *cli) show(args []string) int {
	fs := newFlagSet("show", c.stderr, "show [options] [DIR]")
	var o outputFlags
	o.register(fs)
	var name stateName
	name.register(fs)
	dir, ok := c.parseOutput(fs, args, &o)
	if !ok {
		return exitError
	}
	st, err := planner.ReadState(dir)
	if err != nil {
		c.fail(err)
		return exitError
	}
	if !c.checkStateName(dir, st, name) {
		return exitError
	}
	c.view(o, nil).State(st)
	return exitOK
}

func (c *cli) graph(args []string) int {
	fs := newFlagSet("graph", c.stderr, "graph [options] [DIR]")
	var vf varFlags
	vf.register(fs)
	vf.registerName(fs)
	scenario := fs.String("scenario", "", "the matrix cell `NAME` to draw (default: the first)")
	_, lab := c.parseLab(fs, args, &vf)
	if lab == nil {
		return exitError
	}
	sc := c.pickScenario(lab, *scenario)
	if sc == nil {
		return exitError
	}
	c.stdout.Write(planner.DOT(provider.Desired(sc, provider.NewNaming(lab.Name)), sc.Reaches()))
	return exitOK
}
