package config

import "github.com/hashicorp/hcl/v2"

// Observed is a set of figures measured elsewhere (a seed's table, an
// earlier kernel run), kept in the lab as data: a calibration fits the
// model to some of them, and the model predicts the others.
type Observed struct {
	Name string
	// Source says where the figures come from ("seed 001, the 2.6.12-rc4
	// row").
	Source string
	// Scenario is the name of the scenario the figures belong to.
	Scenario string
	Workload string
	// Values maps metric names to the observed values, in the metrics'
	// units (result/metric.go).
	Values map[string]float64
	// RelativeTo, when set, names the scenario the values are relative
	// to: each value is the metric in Scenario over the metric in
	// RelativeTo (a seed that gives only a ratio, or figures in units
	// the model's workload does not share).
	RelativeTo string
	// Results is the results file (what -json FILE writes, from a run of
	// this lab on the kernel engine) the values were read from, as the
	// lab names it; "" when the lab gives the values.
	Results string
	Range   hcl.Range
}

// Calibration frees named cost parameters of one CPU profile of the
// model and fits them to observed figures: `tsolab calibrate` writes the
// fitted values to File, and the model uses them from then on.
type Calibration struct {
	// CPU is the CPU profile whose parameters are fitted.
	CPU string
	// Free names the parameters the fit may change (sim.ParamNames).
	Free []string
	// Fit names the observed blocks fitted to; every other observed
	// figure is a prediction.
	Fit []string
	// File is where the fit is written, relative to the lab directory.
	File  string
	Range hcl.Range
}

// Fitted reports whether the observed block named obs is fitted to by
// any of the lab's calibrations.
func (l *Lab) Fitted(obs string) bool {
	for _, c := range l.Calibrations {
		for _, f := range c.Fit {
			if f == obs {
				return true
			}
		}
	}
	return false
}
