package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/engine/kernel"
	"github.com/tsolab/tsolab/engine/sim"
	"github.com/tsolab/tsolab/outcome"
	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/provider/nic"
	"github.com/tsolab/tsolab/result"
	"github.com/tsolab/tsolab/sudouser"
	"golang.org/x/sys/unix"
)

func (c *cli) runCmd(args []string) int { return c.runOrTest(args, false) }
func (c *cli) test(args []string) int   { return c.runOrTest(args, true) }

// runFlags are the flags of run and test.
type runFlags struct {
	vars      varFlags
	out       outputFlags
	engine    string
	scenarios stringList
	repeat    int
	// confidence > 0 repeats each workload until the 95% confidence
	// interval of its main metric is at most that percentage of the
	// median wide (netperf -I 95,PCT), with repeat as the most runs.
	confidence float64
	jsonFile   string
	junitFile  string
	report     string
	summary    string
	baseline   string
	keep       bool
	verbose    bool // test: show every plan and apply in full
	strict     bool
	noCapture  bool
	capture    string
	captureMax string
	// bothEngines: this is the model's half of -engine kernel,sim, whose
	// repetitions are the kernel's to make.
	bothEngines bool
	seed        *uint64 // -seed: the model's random source; nil = not given (sim.Options.Seed 0)
	// set holds the flags given on the command line: they win over the
	// lab's and workloads' repeat, confidence and strict.
	set map[string]bool
	// maxRepeat and isStrict are settled by resolve once the lab is
	// loaded: the most runs of any workload, and whether inconclusive
	// comparisons fail.
	maxRepeat int
	isStrict  bool
	// view, chosen once the flags are parsed, is where run and test
	// write what happens: text, or JSON lines with -json -.
	view testView
}

func (f *runFlags) register(fs *flag.FlagSet, test bool) {
	f.vars.register(fs)
	f.vars.registerName(fs)
	fs.BoolVar(&f.out.noColor, "no-color", false, "no ANSI colors")
	fs.StringVar(&f.engine, "engine", "", "`ENGINE`: \"kernel\" (real namespaces and sockets) or \"sim\" (the model); test: \"kernel,sim\" runs both and shows, per expectation, the metrics it reads on each and whether their verdicts agree; default: the lab's engine")
	fs.Var(&f.scenarios, "scenario", "run only the matrix cell `NAME`, e.g. tso=false (repeatable; default: all for test, the applied one for run)")
	fs.IntVar(&f.repeat, "repeat", 1, "`N` runs per scenario and workload; with 2 or more, metrics carry a median and a 95% confidence interval (sim engine: repetitions differ only by the draws of hosts that run a scheduler, and where no host runs one, N > 1 is refused: the runs would be copies)")
	fs.Float64Var(&f.confidence, "confidence", 0, "repeat each workload until the 95% confidence interval of its throughput (transactions/s for rr) is at most `PCT`% of the median wide, like netperf -I 95,PCT: at least 6 runs, at most -repeat (default 30)")
	fs.StringVar(&f.jsonFile, "json", "", "write every run's results to `FILE` as JSON; - streams JSON lines to stdout instead (docs/json-format.md)")
	fs.StringVar(&f.junitFile, "junit", "", "write one JUnit test case per expectation and scenario to `FILE`")
	fs.StringVar(&f.report, "report", "", "write a self-contained HTML report of the results and verdicts to `FILE` (see tsolab report)")
	fs.StringVar(&f.summary, "summary", "", "write a Markdown summary (provenance, results and verdicts tables) to `FILE`, e.g. $GITHUB_STEP_SUMMARY; it is appended to when FILE exists")
	fs.StringVar(&f.baseline, "baseline", "", "an earlier -json `FILE`; expectations read it as baseline (baseline.throughput_bps)")
	fs.BoolVar(&f.strict, "strict", false, "count inconclusive comparisons (no significant difference) as failures")
	fs.BoolVar(&f.noCapture, "no-capture", false, "kernel engine: do not capture packets (send-unit metrics are then 0)")
	fs.StringVar(&f.capture, "capture", "", "kernel engine: write the captured TCP headers of every run to pcapng files `DIR`/SCENARIO/WORKLOAD[-rN]/NIC.pcapng (docs/report.md)")
	fs.Func("seed", "sim engine: seed `N` of the model's random source, which draws the wake-up latencies of hosts that run a scheduler (the host attribute scheduler; default 0); the results' provenance reports it", func(v string) error {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a whole number from 0 to %d", v, uint64(math.MaxUint64))
		}
		f.seed = &n
		return nil
	})
	fs.StringVar(&f.captureMax, "capture-max", "", "with -capture: stop writing a capture file's packets once it holds `SIZE` (\"500MB\"); the counts stay whole and the file says how many it left out")
	if test {
		fs.BoolVar(&f.keep, "keep", false, "keep the lab applied after the test instead of destroying it")
		fs.BoolVar(&f.verbose, "verbose", false, "show each scenario's plan and apply in full, not one line each (\"=== scenario tso=false: Plan: 0 to add, 1 to change, 0 to destroy.\")")
	}
}

func (c *cli) runOrTest(args []string, test bool) int {
	name := "run"
	if test {
		name = "test"
	}
	f, dir, ok := c.parseRunFlags(name, args, test)
	if !ok {
		return exitError
	}
	engines := strings.Split(f.engine, ",")
	lab := c.loadLab(dir, &f.vars)
	if lab == nil {
		return exitError
	}
	f.resolve(lab)
	if len(engines) > 1 {
		return c.testEngines(lab, dir, name, args, f)
	}
	_, _, code := c.runEngine(lab, dir, name, args, f, test)
	return code
}

// runEngine runs the lab's scenarios on the engine f names (or the
// lab's), shows the results and verdicts and writes the files the flags
// ask for. It returns the results and verdicts (nil when the run failed)
// and the exit code.
func (c *cli) runEngine(lab *config.Lab, dir, name string, args []string, f *runFlags, test bool) (*result.Results, []outcome.Verdict, int) {
	kind, eng := c.newEngine(lab, f)
	if eng == nil {
		return nil, nil, exitError
	}
	var baseline *result.Results
	if f.baseline != "" {
		var err error
		if baseline, err = readResults(f.baseline); err != nil {
			c.fail(err)
			return nil, nil, exitError
		}
	}

	scenarios, code := c.selectScenarios(lab, dir, f.scenarios, kind, test)
	if scenarios == nil {
		return nil, nil, code
	}
	if kind == config.EngineSim && !f.bothEngines && !c.checkModelRepeat(lab, scenarios, f) {
		return nil, nil, exitError
	}
	if kind == config.EngineKernel && !c.mayMakeNamespaces("tsolab "+name+" on the kernel engine makes network namespaces", scenarios) {
		return nil, nil, exitError
	}

	ir := c.watchInterrupts(true)
	defer ir.stop()
	ctx := ir.work
	results := &result.Results{FormatVersion: 1, Lab: lab.Name, Engine: string(kind), Provenance: labProvenance(lab, dir)}
	runErr := interrupted(ctx, c.runScenarios(ctx, lab, dir, scenarios, eng, kind, f, test, results))
	results.Observations = outcome.Observe(lab, results)

	if test && kind == config.EngineKernel {
		c.cleanUpTest(ir, dir, stateName(lab.Name), f, &runErr)
	}
	f.view.results(results)
	if f.jsonFile != "" && f.jsonFile != "-" {
		if err := writeJSONFile(f.jsonFile, results); err != nil {
			c.fail(err)
			return nil, nil, exitError
		}
	}
	if runErr != nil {
		f.view.errored(runErr) // the stream's word for it: no diagnostic too
		fmt.Fprintln(c.stderr, "Error:", runErr)
		return nil, nil, exitError
	}

	verdicts, diags := outcome.Evaluate(lab, results, baseline)
	if kind == config.EngineKernel {
		diags = append(diags, outcome.UnnamedCongestion(lab, results)...)
	} else {
		diags = append(diags, observedCongestion(lab, dir, results)...)
	}
	j := judgement{lab: lab, results: results, verdicts: verdicts, diags: diags,
		hint: judgeCommand(name, args, lab, kind, scenarioNames(scenarios), verdicts)}
	if err := f.view.judged(j); err != nil {
		c.fail(err)
		return nil, nil, exitError
	}
	if err := f.writeFiles(lab, results, baseline, verdicts); err != nil {
		c.fail(err)
		return nil, nil, exitError
	}
	code = outcome.ExitCode(verdicts, f.isStrict)
	f.view.summary(verdicts, f.isStrict, code)
	return results, verdicts, code
}

// cleanUpTest destroys the lab test applied, unless -keep, under the
// cleanup context (a second interrupt stops it, nothing else), and
// after an interruption says on stderr what is left. A destroy that
// fails becomes runErr when the runs had none. It destroys only a state
// of the lab's name (name): a state another -name applied in dir was
// refused by the plan, and is not test's to remove.
func (c *cli) cleanUpTest(ir *interrupts, dir string, name stateName, f *runFlags, runErr *error) {
	cause := context.Cause(ir.work)
	if !f.keep {
		if cause != nil {
			fmt.Fprintf(c.stderr, "tsolab: %v: destroying the lab before exiting (interrupt again to stop; what is left stays recorded)\n", cause)
		}
		f.view.destroying()
		o := outputFlags{json: f.out.json, noColor: f.out.noColor, brief: !f.verbose}
		code, res := c.destroyDir(ir.cleanup, dir, name, o, nil, true)
		if code != exitOK && *runErr == nil {
			*runErr = fmt.Errorf("destroy failed: run tsolab destroy %s", dir)
		}
		if res != nil && res.Interrupted {
			return // the destroy said what is left
		}
		if cause == nil {
			if cause = context.Cause(ir.work); cause != nil {
				fmt.Fprintf(c.stderr, "tsolab: %v while destroying the lab after its runs: the destroy ran to its end\n", cause)
			}
		}
	}
	if cause != nil {
		c.reportRecorded(dir, false)
	}
}

// mayMakeNamespaces tells, before anything is planned or shown, that
// the command needs root when a host of scenarios lives on this machine
// and the kernel refuses this process a network namespace; false after
// saying so. need is what the command needs the namespace for, e.g.
// "tsolab test on the kernel engine makes network namespaces".
func (c *cli) mayMakeNamespaces(need string, scenarios []*config.Scenario) bool {
	local := false
	for _, sc := range scenarios {
		for _, h := range sc.Hosts {
			local = local || h.Machine == ""
		}
	}
	if !local {
		return true
	}
	err := netnsfs.Scratch(func() error { return nil })
	if !errors.Is(err, unix.EPERM) {
		return true // anything else is the plan's to report, with its place in the lab
	}
	c.errorf("%s on this machine, which the kernel refuses this user (%v)\n\n%s", need, unix.EPERM, nic.NeedsRoot)
	return false
}

// parseRunFlags parses the flags of run or test, chooses the view and
// checks the flags against each other; false after printing the problem.
func (c *cli) parseRunFlags(name string, args []string, test bool) (*runFlags, string, bool) {
	fs := newFlagSet(name, c.stderr, name+" [options] [DIR]")
	f := &runFlags{}
	f.register(fs, test)
	dir, ok := c.parseDir(fs, args)
	if !ok {
		return nil, "", false
	}
	if engines := strings.Split(f.engine, ","); len(engines) > 1 && !c.checkEngines(engines, f, test) {
		return nil, "", false
	}
	// -json - : every message, the plan and apply views' and the
	// failures' too, is a JSON line on stdout.
	f.view = c.newTestView(f.jsonFile)
	f.out.json = f.jsonFile == "-"
	if f.jsonFile == "-" && (f.junitFile == "-" || f.report == "-") {
		c.errorf("-json - streams to stdout: write -junit and -report to files")
		return nil, "", false
	}
	if f.repeat < 1 {
		c.errorf("-repeat %d: give at least 1 run", f.repeat)
		return nil, "", false
	}
	f.set = visited(fs)
	if !c.checkConfidence(f) {
		return nil, "", false
	}
	return f, dir, true
}

// writeFiles writes what -junit, -report and -summary ask for.
func (f *runFlags) writeFiles(lab *config.Lab, results, baseline *result.Results, verdicts []outcome.Verdict) error {
	if f.junitFile != "" {
		err := writeFile(f.junitFile, func(w io.Writer) error { return outcome.WriteJUnit(w, lab.Name, verdicts, results) })
		if err != nil {
			return err
		}
	}
	if f.report != "" {
		if err := writeReport(f.report, reportInput(lab, results, baseline, verdicts, f.isStrict)); err != nil {
			return err
		}
	}
	if f.summary != "" {
		return appendFile(f.summary, func(w io.Writer) error {
			return outcome.WriteMarkdown(w, lab, results, verdicts, f.isStrict)
		})
	}
	return nil
}

func scenarioNames(scenarios []*config.Scenario) []string {
	out := make([]string, len(scenarios))
	for i, sc := range scenarios {
		out[i] = sc.Name
	}
	return out
}

// newEngine picks the engine (-engine, else the lab's) and builds it with
// the flags that apply to it; flags that do not apply are errors, never
// silently ignored. It returns nil after printing why.
func (c *cli) newEngine(lab *config.Lab, f *runFlags) (config.EngineKind, engine.Engine) {
	kind := lab.Engine
	if f.engine != "" {
		kind = config.EngineKind(f.engine)
	}
	switch kind {
	case config.EngineSim:
		if f.noCapture {
			c.errorf("-no-capture applies to the kernel engine only; the sim engine captures nothing")
			return kind, nil
		}
		if f.capture != "" || f.captureMax != "" {
			c.errorf("-capture applies to the kernel engine only: the sim engine models packets and sends none to capture (use -engine kernel)")
			return kind, nil
		}
		opts := sim.Options{}
		if f.seed != nil {
			opts.Seed = *f.seed
		}
		if len(lab.Calibrations) > 0 {
			profiles, files, err := sim.ProfilesFor(lab)
			if err != nil {
				c.fail(err)
				return kind, nil
			}
			opts.CPUProfiles, opts.ProfileFiles = profiles, files
		}
		e := sim.New(opts)
		if diags := e.CheckLab(lab); diags.HasErrors() {
			c.writeDiags(lab.Sources, diags)
			return kind, nil
		}
		return kind, e
	case config.EngineKernel, "":
		if f.seed != nil {
			c.errorf("-seed applies to the sim engine only: the kernel engine draws nothing (use -engine sim)")
			return kind, nil
		}
		opts := kernel.Options{DisableCapture: f.noCapture, Remote: c.kernelWorkers(lab)}
		if f.capture != "" {
			if f.noCapture {
				c.errorf("-capture writes what the capture sees and -no-capture turns it off: drop one of them")
				return kind, nil
			}
			opts.Capture = captureFiles(f.capture, f.maxRepeat)
		}
		if f.captureMax != "" {
			max, err := config.ParseSize(f.captureMax)
			switch {
			case f.capture == "":
				c.errorf("-capture-max caps the files of -capture DIR: give -capture too")
				return kind, nil
			case err != nil || max <= 0:
				c.errorf("-capture-max %q is not a size like 500MB or 2GiB", f.captureMax)
				return kind, nil
			}
			opts.CaptureMaxBytes = max
		}
		return config.EngineKernel, kernel.New(opts)
	}
	c.errorf("-engine %q: choose \"kernel\" or \"sim\"", f.engine)
	return kind, nil
}

// selectScenarios picks what to run: -scenario names, or for test every
// scenario, for run the applied one (kernel) or the first (sim).
func (c *cli) selectScenarios(lab *config.Lab, dir string, names []string, kind config.EngineKind, test bool) ([]*config.Scenario, int) {
	var out []*config.Scenario
	for _, n := range names {
		sc := c.pickScenario(lab, n)
		if sc == nil {
			return nil, exitError
		}
		out = append(out, sc)
	}
	switch {
	case len(out) > 0:
	case test:
		out = lab.Scenarios
	case kind == config.EngineKernel:
		st, err := planner.ReadState(dir)
		if err != nil {
			c.fail(err)
			return nil, exitError
		}
		if st == nil || st.Scenario == "" {
			c.errorf("the lab in %s is not applied: run tsolab apply %s first, or tsolab test %s to apply, run and destroy every scenario", dir, dir, dir)
			return nil, exitError
		}
		sc := c.pickScenario(lab, st.Scenario)
		if sc == nil {
			return nil, exitError
		}
		out = []*config.Scenario{sc}
	default:
		out = lab.Scenarios[:1]
	}
	return out, exitOK
}

func (c *cli) runScenarios(ctx context.Context, lab *config.Lab, dir string, scenarios []*config.Scenario, eng engine.Engine, kind config.EngineKind, f *runFlags, test bool, results *result.Results) error {
	naming := provider.NewNaming(lab.Name)
	// Repeated runs go in rounds: every scenario once, then again, so a
	// disturbance of the machine for a while (a cron job, another tenant)
	// lands on runs of every scenario rather than on all runs of one,
	// where the comparison between scenarios would take it for their
	// difference. On the kernel engine each switch is an in-place update.
	type cell struct {
		m      config.Measure // how this workload is measured
		values []float64      // the confidence metric of each run so far
		done   bool           // Repeat runs made, or Confidence reached
	}
	cells := map[[2]string]*cell{}
	for rep := range f.maxRepeat {
		ahead := c.startRound(ctx, eng, kind, scenarios, func(sc *config.Scenario, w *config.Workload) engine.RunRequest {
			return engine.RunRequest{Lab: lab, Scenario: sc, Workload: w, Naming: naming, Repetition: rep}
		}, func(sc *config.Scenario, w *config.Workload) bool {
			cl := cells[[2]string{sc.Name, w.Name}]
			return cl == nil || !cl.done
		})
		defer ahead.stop()
		ran := false
		for _, sc := range scenarios {
			var todo []*config.Workload
			for _, w := range sc.Workloads {
				k := [2]string{sc.Name, w.Name}
				if cells[k] == nil {
					cells[k] = &cell{m: f.measureOf(lab, w)}
				}
				if !cells[k].done {
					todo = append(todo, w)
				}
			}
			if len(todo) == 0 {
				continue
			}
			ran = true
			f.view.scenarioStart(sc.Name, kind)
			if kind == config.EngineKernel {
				switch {
				case test:
					if err := c.applyScenario(ctx, dir, lab, sc, f, rep); err != nil {
						return err
					}
				case rep == 0:
					if err := c.checkApplied(ctx, dir, lab, sc, f.out); err != nil {
						return err
					}
				}
			}
			for _, w := range todo {
				if err := ctx.Err(); err != nil {
					return fmt.Errorf("scenario %s, workload %s did not start: %w", sc.Name, w.Name, err)
				}
				cl := cells[[2]string{sc.Name, w.Name}]
				pr := f.view.workload(jsonRun{Scenario: sc.Name, Workload: w.Name, Repetition: rep, Repeat: cl.m.Repeat, AtMost: cl.m.Confidence > 0})
				res, wall, err := ahead.run(ctx, eng, engine.RunRequest{
					Lab: lab, Scenario: sc, Workload: w, Naming: naming,
					Repetition: rep, Progress: pr.update,
				})
				pr.done(res, wall)
				if err != nil {
					return fmt.Errorf("scenario %s, workload %s: %w", sc.Name, w.Name, err)
				}
				results.Runs = append(results.Runs, *res)
				cl.values = append(cl.values, res.Metrics[mainMetric(w)])
				cl.done = len(cl.values) >= cl.m.Repeat ||
					cl.m.Confidence > 0 && len(cl.values) >= outcome.MinRunsForCI && outcome.Summarize(cl.values).RelativeWidth() <= cl.m.Confidence
			}
		}
		if !ran {
			break
		}
	}
	for _, sc := range scenarios {
		for _, w := range sc.Workloads {
			if cl := cells[[2]string{sc.Name, w.Name}]; cl != nil && cl.m.Confidence > 0 {
				reportConfidence(f.view, lastRun(results, sc.Name, w.Name), sc.Name, w.Name, mainMetric(w), cl.values, cl.m.Confidence)
			}
		}
	}
	return nil
}

// applyScenario makes the lab match sc (an in-place update when only
// offloads change between scenarios), showing the plan's summary in one
// line: the plan and apply in full with -verbose in the first round, and
// whatever goes wrong.
func (c *cli) applyScenario(ctx context.Context, dir string, lab *config.Lab, sc *config.Scenario, f *runFlags, rep int) error {
	v, brief := f.view.applyView(c.view(f.out, lab.Sources), sc, rep, f.maxRepeat, f.verbose)
	p := c.newPlanner(dir, lab, sc, v)
	plan, err := p.Plan(ctx, sc.Name, provider.Desired(sc, provider.NewNaming(lab.Name)))
	if err != nil {
		return err
	}
	switch {
	case plan.Diagnostics.HasErrors():
		if b, ok := v.(briefView); ok {
			b.View.Plan(plan)
		} else {
			v.Plan(plan)
		}
	case !brief:
		v.Plan(plan)
	}
	v.Diagnostics(plan.Diagnostics)
	if plan.Diagnostics.HasErrors() {
		return fmt.Errorf("scenario %s cannot be applied (see above)", sc.Name)
	}
	if !plan.HasChanges() {
		return nil
	}
	res, err := p.Apply(ctx, plan)
	if err != nil {
		return err
	}
	if !brief || len(res.Failed) > 0 || res.Diagnostics.HasErrors() {
		v.Applied(res)
	}
	if len(res.Failed) == 0 && res.Interrupted {
		return fmt.Errorf("scenario %s: %s", sc.Name, res.Summary())
	}
	if len(res.Failed) > 0 || res.Diagnostics.HasErrors() {
		return fmt.Errorf("scenario %s: apply failed (see above)", sc.Name)
	}
	return nil
}

// checkApplied refuses to run when the lab differs from sc: run measures
// what is applied, and a measurement on a drifted lab would lie.
func (c *cli) checkApplied(ctx context.Context, dir string, lab *config.Lab, sc *config.Scenario, o outputFlags) error {
	v := c.view(outputFlags{json: o.json, noColor: true}, lab.Sources)
	plan, err := c.newPlanner(dir, lab, sc, v).Plan(ctx, sc.Name, provider.Desired(sc, provider.NewNaming(lab.Name)))
	if err != nil {
		return err
	}
	if plan.Diagnostics.HasErrors() {
		// The state or the system stops the plan (another lab name,
		// another copy's namespace): the errors say what to do, and
		// the changes listed around them would only mislead.
		v.Diagnostics(plan.Diagnostics)
		return fmt.Errorf("cannot run scenario %s (see above)", sc.Name)
	}
	if plan.HasChanges() {
		v.Plan(plan)
		v.Diagnostics(plan.Diagnostics)
		return fmt.Errorf("the lab does not match scenario %s: run tsolab apply -scenario %s %s first", sc.Name, sc.Name, dir)
	}
	return nil
}

// captureFiles lays out -capture DIR: DIR/SCENARIO/WORKLOAD/NIC.pcapng,
// WORKLOAD-rN (N from 1) with -repeat 2 or more, every name made safe
// for a file system. A later run over the same DIR overwrites its files;
// two captures of one invocation that would share a file are refused.
// Under sudo, the directories and files it makes are the invoking user's
// where that user owns the directory they are made in (sudouser).
func captureFiles(dir string, repeat int) func(kernel.CaptureTarget) (io.WriteCloser, string, error) {
	used := map[string]kernel.CaptureTarget{}
	return func(t kernel.CaptureTarget) (io.WriteCloser, string, error) {
		wl := safeName(t.Workload)
		if repeat > 1 {
			wl += fmt.Sprintf("-r%d", t.Repetition+1)
		}
		path := filepath.Join(dir, safeName(t.Scenario), wl, safeName(t.NIC)+".pcapng")
		if prev, ok := used[path]; ok {
			return nil, "", fmt.Errorf("-capture: %s would hold both %s/%s NIC %s and %s/%s NIC %s: rename one so their safe names differ",
				path, prev.Scenario, prev.Workload, prev.NIC, t.Scenario, t.Workload, t.NIC)
		}
		used[path] = t
		if err := sudouser.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, "", fmt.Errorf("-capture: %w", err)
		}
		f, err := os.Create(path)
		if err == nil {
			err = sudouser.GiveFile(path)
		}
		if err != nil {
			return nil, "", fmt.Errorf("-capture: %w", err)
		}
		return captureFile{f}, path, nil
	}
}

// captureFile is a -capture file the kernel engine can take back
// (kernel.CaptureDiscarder) when a failed run never wrote it.
type captureFile struct{ *os.File }

var _ kernel.CaptureDiscarder = captureFile{}

func (f captureFile) Discard() error {
	f.Close()
	return os.Remove(f.Name())
}

// safeName keeps letters, digits and . _ - = , + @ of a name and turns
// everything else (path separators, spaces, quotes) into _; a name that
// is empty or starts with a dot gets a leading _.
func safeName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("._-=,+@", r):
			return r
		}
		return '_'
	}, s)
	if s == "" || s[0] == '.' {
		s = "_" + s
	}
	return s
}

// readResults reads a results file (result.ReadFile).
func readResults(path string) (*result.Results, error) { return result.ReadFile(path) }

func writeJSONFile(path string, r *result.Results) error {
	return writeFile(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	})
}

// writeFile writes path atomically; "-" writes to stdout. The file is
// readable by all (0644, as appendFile's and a shell redirection's with
// the usual umask), not CreateTemp's 0600: a report or results file made
// under sudo is opened by the user in a browser, or uploaded by CI; it is
// the invoking user's where they own its directory (sudouser).
func writeFile(path string, write func(io.Writer) error) error {
	if path == "-" {
		return write(os.Stdout)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tsolab-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := sudouser.GiveFile(tmp.Name()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// appendFile renders write in memory, then appends it to path in one
// write, creating the file when it does not exist: a CI summary file
// ($GITHUB_STEP_SUMMARY) collects what every step appends. A file it
// creates under sudo is the invoking user's where they own its directory
// (sudouser); one that existed keeps its owner.
func appendFile(path string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		err = sudouser.GiveFile(path)
	} else if errors.Is(err, fs.ErrExist) {
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
