package calibrate

import (
	"math"
	"slices"

	"github.com/tsolab/tsolab/engine/sim"
)

// The valley's tolerance and the scan's steps.
const (
	// valleyShare and valleyFloor: a point is in the valley when its
	// cost is within valleyShare of the best, or within valleyFloor
	// (a 0.1% error on one figure) of it for a fit that is nearly exact.
	valleyShare = 0.01
	valleyFloor = 1e-6
	// valleyFirstStep is the scan's first step, in log units (0.5%);
	// each next step doubles, up to valleyLimit (a factor of 10).
	valleyFirstStep = 0.005
	valleyLimit     = 2.302585092994046 // ln 10
	// valleyBisections refine the edge between the last step inside
	// and the first outside.
	valleyBisections = 5
)

// valleys scans each free parameter on its own from the fit at x, the
// others held, for the range whose cost stays within the tolerance, and
// adds the range of the parameter over every point the fit evaluated
// within it.
func (o *objective) valleys(x []float64) (map[string]sim.Valley, error) {
	best := o.cost(x)
	limit := best + max(valleyShare*best, valleyFloor)
	out := map[string]sim.Valley{}
	for i, name := range o.free {
		var v sim.Valley
		lo, loLimit := o.edge(x, i, -1, limit)
		hi, hiLimit := o.edge(x, i, +1, limit)
		if o.err != nil {
			return nil, o.err
		}
		v.Low, v.High = o.value(i, x[i]-lo), o.value(i, x[i]+hi)
		v.LowAtLimit, v.HighAtLimit = loLimit, hiLimit
		out[name] = v
	}
	for i, name := range o.free {
		v := out[name]
		v.SeenLow, v.SeenHigh = v.Low, v.High
		for _, p := range o.seen {
			if p.cost <= limit {
				v.SeenLow = min(v.SeenLow, o.value(i, p.x[i]))
				v.SeenHigh = max(v.SeenHigh, o.value(i, p.x[i]))
			}
		}
		out[name] = v
	}
	return out, nil
}

// edge is how far (in log units) parameter i can move from x in
// direction dir with the cost at most limit, and whether the scan
// reached valleyLimit without leaving.
func (o *objective) edge(x []float64, i int, dir float64, limit float64) (float64, bool) {
	at := func(d float64) float64 {
		y := slices.Clone(x)
		y[i] += dir * d
		return o.cost(y)
	}
	in, out := 0.0, 0.0
	for d := valleyFirstStep; ; d *= 2 {
		d = min(d, valleyLimit)
		if at(d) > limit {
			out = d
			break
		}
		in = d
		if d == valleyLimit || o.err != nil {
			return in, true
		}
	}
	for range valleyBisections {
		mid := (in + out) / 2
		if at(mid) > limit {
			out = mid
		} else {
			in = mid
		}
	}
	return in, false
}

// value is parameter i's value at log offset x, to four significant
// digits.
func (o *objective) value(i int, x float64) float64 {
	return round(o.start[o.free[i]] * math.Exp(x))
}
