package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine/sim"
	"github.com/tsolab/tsolab/engine/sim/calibrate"
)

// calibrate fits every calibrate block of a lab and writes its file: the
// free cost parameters of a CPU profile of the model, fitted to the
// observed blocks it names. -check fits without writing and exits 3 when
// a file differs from what the fit gives (CI: the committed calibration
// is the one the lab's figures give).
func (c *cli) calibrate(args []string) int {
	fs := newFlagSet("calibrate", c.stderr, "calibrate [-check] [DIR]")
	check := fs.Bool("check", false, "do not write; exit 3 when a calibration file differs from what the fit gives")
	var vf varFlags
	vf.register(fs)
	dir, lab := c.parseLab(fs, args, &vf)
	if lab == nil {
		return exitError
	}
	if len(lab.Calibrations) == 0 {
		c.errorf("lab %q has no calibrate block: add one naming the CPU profile, its free parameters and the observed blocks to fit (docs/engine.md, Calibration)", lab.Name)
		return exitError
	}
	if diags := sim.New(sim.Options{}).CheckLab(lab); diags.HasErrors() {
		c.writeDiags(lab.Sources, diags)
		return exitError
	}
	ctx, cancel := c.signalContext()
	defer cancel()
	code := exitOK
	// -check compares the fitted values only: it leaves out the valley.
	_, err := calibrate.FitAll(ctx, lab, calibrate.Options{Valley: !*check}, func(cal *config.Calibration, f *sim.CalibrationFile) {
		fmt.Fprintf(c.stdout, "Calibrating cpu profile %q: %s free, fitted to %s.\n", cal.CPU, strings.Join(cal.Free, ", "), strings.Join(cal.Fit, ", "))
		c.writeFit(f)
		path := sim.CalibrationPath(lab, cal)
		if *check {
			if old, err := sim.ReadCalibration(path); err != nil || !sameFit(old, f) {
				fmt.Fprintf(c.stdout, "%s is not what the fit gives: run tsolab calibrate %s\n\n", path, dir)
				code = exitFailed
			}
			return
		}
		if err := f.Write(path); err != nil {
			c.fail(err)
			code = exitError
			return
		}
		fmt.Fprintf(c.stdout, "Wrote %s.\n\n", path)
	})
	if err != nil {
		c.fail(err)
		return exitError
	}
	return code
}

// writeFit prints the fitted parameters and the fitted figures.
func (c *cli) writeFit(f *sim.CalibrationFile) {
	c.writeParams(f)
	tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nOBSERVED\tSCENARIO\tMETRIC\tVALUE\tMODEL\tERROR")
	for _, g := range f.Figures {
		scenario := g.Scenario
		if g.RelativeTo != "" {
			scenario += " / " + g.RelativeTo
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.4g\t%.4g\t%+.1f%%\n", g.Observed, scenario, g.Metric, g.Value, g.Model, 100*g.Error)
	}
	tw.Flush()
	fmt.Fprintf(c.stdout, "(cost %.3g, the sum of squared relative errors; %d evaluations, %d rounds of Nelder-Mead)\n", f.Cost, f.Evaluations, f.Rounds)
}

// writeParams prints the fitted parameters, with how flat the valley is
// around each when the fit scanned it.
func (c *cli) writeParams(f *sim.CalibrationFile) {
	tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	if f.Valley == nil {
		fmt.Fprintln(tw, "\nPARAMETER\tSTART\tFITTED")
	} else {
		fmt.Fprintln(tw, "\nPARAMETER\tSTART\tFITTED\tFLAT, ALONE\tFLAT, SEEN")
	}
	for _, name := range sim.ParamNames() {
		v, ok := f.Params[name]
		switch {
		case !ok:
		case f.Valley == nil:
			fmt.Fprintf(tw, "%s\t%.4g\t%.4g\n", name, f.Start[name], v)
		default:
			fmt.Fprintf(tw, "%s\t%.4g\t%.4g\t%s\t%s\n", name, f.Start[name], v, flat(f.Valley[name], v, false), flat(f.Valley[name], v, true))
		}
	}
	tw.Flush()
	if f.Valley != nil {
		fmt.Fprintln(c.stdout, "(FLAT: the values whose cost is within 1% of the fit's, or 1e-6; ALONE: the others held at the fit; SEEN: every point the fit tried)")
	}
}

// flat prints a valley's range and its width around the fitted value v:
// "540-620 (-7.9%..+5.8%)"; an edge the scan did not find (beyond a factor
// of 10) is marked with < or >.
func flat(r sim.Valley, v float64, seen bool) string {
	lo, hi, loMark, hiMark := r.Low, r.High, "", ""
	if seen {
		lo, hi = r.SeenLow, r.SeenHigh
	} else {
		if r.LowAtLimit {
			loMark = "<"
		}
		if r.HighAtLimit {
			hiMark = ">"
		}
	}
	return fmt.Sprintf("%s%.4g-%s%.4g (%+.1f%%..%+.1f%%)", loMark, lo, hiMark, hi, 100*(lo/v-1), 100*(hi/v-1))
}

func sameFit(a, b *sim.CalibrationFile) bool {
	if len(a.Params) != len(b.Params) {
		return false
	}
	for k, v := range b.Params {
		if a.Params[k] != v {
			return false
		}
	}
	return true
}
