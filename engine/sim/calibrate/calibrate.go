package calibrate

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/engine/sim"
	"github.com/tsolab/tsolab/result"
)

// Options say what a fit computes beyond the fitted values.
type Options struct {
	// Valley scans how flat the cost is around the fit (the file's
	// valley; about 15 evaluations a parameter). A check that compares
	// only the fitted values leaves it out.
	Valley bool
}

// FitAll fits the lab's calibrations in the order the lab declares them,
// each on the built-in profiles with the fits before it applied: the
// result depends on the lab alone, never on files an earlier run left.
func FitAll(ctx context.Context, lab *config.Lab, opts Options, each func(*config.Calibration, *sim.CalibrationFile)) ([]*sim.CalibrationFile, error) {
	var done []*sim.CalibrationFile
	for _, c := range lab.Calibrations {
		f, err := Fit(ctx, lab, c, done, opts)
		if err != nil {
			return nil, err
		}
		if each != nil {
			each(c, f)
		}
		done = append(done, f)
	}
	return done, nil
}

// Fit fits calibration c of the lab: the free parameters of its CPU
// profile, to the figures of its fit blocks, starting from the built-in
// values with the fits in before applied.
func Fit(ctx context.Context, lab *config.Lab, c *config.Calibration, before []*sim.CalibrationFile, opts Options) (*sim.CalibrationFile, error) {
	base := sim.BuiltinCPUProfiles()
	for _, f := range before {
		if err := f.Apply(base); err != nil {
			return nil, err
		}
	}
	idx := slices.IndexFunc(base, func(p sim.CPUProfile) bool { return p.Name == c.CPU })
	if idx < 0 {
		return nil, fmt.Errorf("calibrate %q: no such cpu profile", c.CPU)
	}
	start := map[string]float64{}
	for _, name := range c.Free {
		v, err := base[idx].Get(name)
		if err != nil {
			return nil, fmt.Errorf("calibrate %q: %w", c.CPU, err)
		}
		if v <= 0 {
			return nil, fmt.Errorf("calibrate %q: %s starts at %g; a fit works on positive costs", c.CPU, name, v)
		}
		start[name] = v
	}
	figs, err := figures(lab, c)
	if err != nil {
		return nil, err
	}

	o := &objective{run: modelRun(ctx, lab, base, idx, c.Free, start, figs), free: c.Free, start: start, figs: figs, cache: map[string]float64{}}
	x, rounds, err := o.minimise(o.coarse(make([]float64, len(c.Free))))
	if err != nil {
		return nil, fmt.Errorf("calibrate %q: %w", c.CPU, err)
	}
	out := &sim.CalibrationFile{FormatVersion: sim.CalibrationFormatVersion, CPU: c.CPU, Params: map[string]float64{}, Start: start, FittedTo: c.Fit}
	for i, name := range c.Free {
		out.Params[name] = round(start[name] * math.Exp(x[i]))
	}
	// The figures with the rounded values, as every later run sees them.
	got, err := o.run(o.at(out.Params))
	if err != nil {
		return nil, err
	}
	for i := range figs {
		figs[i].Model = got[i]
		figs[i].Error = got[i]/figs[i].Value - 1
	}
	out.Figures = figs
	out.Cost = o.cost(o.at(out.Params))
	if opts.Valley {
		if out.Valley, err = o.valleys(o.at(out.Params)); err != nil {
			return nil, fmt.Errorf("calibrate %q: %w", c.CPU, err)
		}
	}
	out.Evaluations = o.evals
	out.Rounds = rounds
	for _, c := range o.roundCosts {
		out.RoundCosts = append(out.RoundCosts, roundTo(c, 4))
	}
	return out, nil
}

// round keeps four significant digits: a fit's last digits are noise of
// the optimiser, and a file that changes with them would churn in git.
func round(v float64) float64 { return roundTo(v, 4) }

// roundTo keeps digits significant digits, as the shortest decimal that
// has them (586.3, not 586.3000000000001).
func roundTo(v float64, digits int) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', digits, 64), 64)
	return r
}

// figures lists the values of the fit blocks, in a fixed order.
func figures(lab *config.Lab, c *config.Calibration) ([]sim.Figure, error) {
	var out []sim.Figure
	for _, name := range c.Fit {
		var obs *config.Observed
		for _, o := range lab.Observed {
			if o.Name == name {
				obs = o
			}
		}
		if obs == nil {
			return nil, fmt.Errorf("calibrate %q: no observed %q", c.CPU, name)
		}
		for _, m := range slices.Sorted(maps.Keys(obs.Values)) {
			out = append(out, sim.Figure{Observed: obs.Name, Scenario: obs.Scenario, RelativeTo: obs.RelativeTo, Workload: obs.Workload, Metric: m, Value: obs.Values[m]})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("calibrate %q: the fit blocks hold no values", c.CPU)
	}
	return out, nil
}

// model runs each cell the figures name once, on profiles, and returns
// the model's value of each figure: the metric of its cell, or its
// cell's over its RelativeTo cell's.
func model(ctx context.Context, lab *config.Lab, profiles []sim.CPUProfile, figs []sim.Figure) ([]float64, error) {
	eng := sim.New(sim.Options{CPUProfiles: profiles})
	runs := map[[2]string]*result.WorkloadResult{}
	metric := func(f sim.Figure, scenario string) (float64, error) {
		k := [2]string{scenario, f.Workload}
		res := runs[k]
		if res == nil {
			sc := lab.Scenario(scenario)
			if sc == nil {
				return 0, fmt.Errorf("observed %q: no scenario %s", f.Observed, scenario)
			}
			w := sc.Workload(f.Workload)
			if w == nil {
				return 0, fmt.Errorf("observed %q: no workload %s", f.Observed, f.Workload)
			}
			var err error
			if res, err = eng.Run(ctx, engine.RunRequest{Lab: lab, Scenario: sc, Workload: w}); err != nil {
				return 0, fmt.Errorf("observed %q: scenario %s, workload %s: %w", f.Observed, scenario, f.Workload, err)
			}
			runs[k] = res
		}
		v, ok := res.Metrics[f.Metric]
		if !ok {
			return 0, fmt.Errorf("observed %q: the model reports no %s", f.Observed, f.Metric)
		}
		return v, nil
	}
	out := make([]float64, len(figs))
	for i, f := range figs {
		v, err := metric(f, f.Scenario)
		if err != nil {
			return nil, err
		}
		if f.RelativeTo != "" {
			base, err := metric(f, f.RelativeTo)
			if err != nil {
				return nil, err
			}
			v /= base
		}
		out[i] = v
	}
	return out, nil
}
