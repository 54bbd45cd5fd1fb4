package calibrate

import (
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/optimize"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine/sim"
)

// The fit's budget and its restart rule.
const (
	// roundEvaluations bounds one Nelder-Mead run.
	roundEvaluations = 400
	// maxRounds bounds the restarts.
	maxRounds = 8
	// restartGain: a round that lowers the cost by less than this share
	// of it (or by less than minGain) ends the fit.
	restartGain = 1e-3
	minGain     = 1e-9
	// simplexSize is each round's fresh simplex, in log units: the
	// starting vertices are the point with one parameter 20% higher.
	simplexSize = 0.2
)

// objective is the fit's cost: the sum of the figures' squared relative
// errors, at the free parameters start·exp(x). The fit works on
// logarithms, so costs stay positive and a step means the same at every
// scale. It remembers every point it evaluated: the model is
// deterministic, so a point seen twice is not run again, and the points
// tell how flat the valley is (valleys).
type objective struct {
	// run gives the model's value of each figure at x (modelRun).
	run   func(x []float64) ([]float64, error)
	free  []string
	start map[string]float64
	figs  []sim.Figure

	evals int                // model runs
	cache map[string]float64 // cost by point
	seen  []point            // every distinct point, in the order evaluated
	err   error              // the first model error; the cost is then +Inf
	// roundCosts is the cost each round started from, then the last
	// round's result.
	roundCosts []float64
}

// point is one evaluated point of the fit.
type point struct {
	x    []float64
	cost float64
}

// modelRun is an objective's run on the model: the lab's cells of figs
// with profile idx of base given the free parameters start·exp(x).
func modelRun(ctx context.Context, lab *config.Lab, base []sim.CPUProfile, idx int, free []string, start map[string]float64, figs []sim.Figure) func([]float64) ([]float64, error) {
	return func(x []float64) ([]float64, error) {
		profiles := slices.Clone(base)
		for i, name := range free {
			if err := profiles[idx].Set(name, start[name]*math.Exp(x[i])); err != nil {
				return nil, err
			}
		}
		return model(ctx, lab, profiles, figs)
	}
}

// at is the point of the parameter values params.
func (o *objective) at(params map[string]float64) []float64 {
	x := make([]float64, len(o.free))
	for i, name := range o.free {
		x[i] = math.Log(params[name] / o.start[name])
	}
	return x
}

// cost is the cost at x, +Inf after a model error (kept in o.err).
func (o *objective) cost(x []float64) float64 {
	var key strings.Builder
	for _, v := range x {
		key.WriteString(strconv.FormatUint(math.Float64bits(v), 16))
		key.WriteByte(',')
	}
	k := key.String()
	if c, ok := o.cache[k]; ok {
		return c
	}
	o.evals++
	got, err := o.run(x)
	c := 0.0
	if err != nil {
		if o.err == nil {
			o.err = err
		}
		c = math.Inf(1)
	} else {
		for i, f := range o.figs {
			d := got[i]/f.Value - 1
			c += d * d
		}
	}
	o.cache[k] = c
	o.seen = append(o.seen, point{x: slices.Clone(x), cost: c})
	return c
}

// scanSteps are the multiples of a parameter's start the coarse scan
// tries: factors of √2 from a quarter to four times it.
var scanSteps = []float64{-4, -3, -2, -1, 1, 2, 3, 4}

// coarse scans the free parameters one at a time, in order, over their
// start times √2 to the power of scanSteps (each from the best point so
// far), and returns the best point: Nelder-Mead's first simplex, 20%
// steps, does not leave a plateau where no figure moves, and from the
// built-in 1200 ns examples/neterion-2005's receivers did not bind on the
// model, so its fit of `rx_per_frame` stopped at 957.5 ns with the
// throughput 34% off, where 3400 ns was within 2% of both figures.
func (o *objective) coarse(x0 []float64) []float64 {
	x := slices.Clone(x0)
	for i := range x {
		best, bestCost := x[i], o.cost(x)
		for _, k := range scanSteps {
			y := slices.Clone(x)
			y[i] = x0[i] + k*math.Ln2/2
			if c := o.cost(y); c < bestCost {
				best, bestCost = y[i], c
			}
		}
		x[i] = best
	}
	return x
}

// minimise runs Nelder-Mead from x0, then again from the best point with
// a fresh simplex while a round still lowers the cost by at least
// restartGain of it: one run stops early in a flat valley, when its
// simplex has shrunk, far from the valley's floor. It returns the best
// point and how many rounds it took; everything is deterministic.
func (o *objective) minimise(x0 []float64) ([]float64, int, error) {
	x, f := slices.Clone(x0), o.cost(x0)
	rounds := 0
	for rounds < maxRounds {
		rounds++
		o.roundCosts = append(o.roundCosts, f)
		res, err := optimize.Minimize(optimize.Problem{Func: o.cost}, x, &optimize.Settings{
			FuncEvaluations: roundEvaluations,
			Converger:       &optimize.FunctionConverge{Absolute: 1e-6, Relative: 1e-6, Iterations: 20},
		}, &optimize.NelderMead{SimplexSize: simplexSize})
		if o.err != nil {
			return nil, rounds, o.err
		}
		if res == nil {
			if err == nil {
				err = errors.New("the optimiser returned nothing")
			}
			return nil, rounds, err
		}
		if res.F >= f {
			break
		}
		gain := f - res.F
		x, f = slices.Clone(res.X), res.F
		if gain < restartGain*f || gain < minGain {
			break
		}
	}
	o.roundCosts = append(o.roundCosts, f)
	return x, rounds, nil
}
