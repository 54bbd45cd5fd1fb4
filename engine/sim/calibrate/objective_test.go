package calibrate

import (
	"math"
	"slices"
	"testing"

	"github.com/tsolab/tsolab/engine/sim"
)

// synthetic is an objective on a formula of the parameters p (start·exp(x))
// instead of the model: each figure's value is 1 and the formula gives
// the model's.
func synthetic(start []float64, f func(p []float64) []float64) *objective {
	o := &objective{start: map[string]float64{}, cache: map[string]float64{}}
	for i, v := range start {
		name := string(rune('a' + i))
		o.free = append(o.free, name)
		o.start[name] = v
	}
	for range f(start) {
		o.figs = append(o.figs, sim.Figure{Value: 1})
	}
	o.run = func(x []float64) ([]float64, error) {
		p := make([]float64, len(x))
		for i := range x {
			p[i] = start[i] * math.Exp(x[i])
		}
		return f(p), nil
	}
	return o
}

// rosenbrock is the cost 100(b-a²)² + (a-1)², a long curved valley with
// its floor at a = b = 1, where one Nelder-Mead run stops early.
func rosenbrock(p []float64) []float64 {
	return []float64{1 + 10*(p[1]-p[0]*p[0]), p[0]}
}

// TestRestartsReachTheFloor: from (0.3, 2), the restarts end at the
// valley's floor, after more than one round, and two fits are the same
// fit, evaluation for evaluation.
func TestRestartsReachTheFloor(t *testing.T) {
	fit := func() ([]float64, int, int, float64) {
		o := synthetic([]float64{0.3, 2}, rosenbrock)
		x, rounds, err := o.minimise(make([]float64, 2))
		if err != nil {
			t.Fatal(err)
		}
		return x, rounds, o.evals, o.cost(x)
	}
	x, rounds, evals, cost := fit()
	if cost > 1e-6 {
		t.Errorf("cost at the end %g, want <= 1e-6 (a = %g, b = %g)", cost, 0.3*math.Exp(x[0]), 2*math.Exp(x[1]))
	}
	if rounds < 2 {
		t.Errorf("%d rounds: the fit never restarted", rounds)
	}
	x2, rounds2, evals2, _ := fit()
	if !slices.Equal(x, x2) || rounds != rounds2 || evals != evals2 {
		t.Errorf("two fits differ: %v in %d rounds, %d evaluations; %v in %d, %d", x, rounds, evals, x2, rounds2, evals2)
	}
}

// TestValleyEdges: the valley's edges hold the cost within the tolerance
// and a step past them leaves it; a parameter no figure depends on has
// no edge within a factor of 10.
func TestValleyEdges(t *testing.T) {
	o := synthetic([]float64{2, 5}, func(p []float64) []float64 { return []float64{p[0] / 1.5} })
	x, _, err := o.minimise(make([]float64, 2))
	if err != nil {
		t.Fatal(err)
	}
	v, err := o.valleys(x)
	if err != nil {
		t.Fatal(err)
	}
	best := o.cost(x)
	limit := best + max(valleyShare*best, valleyFloor)
	a := v["a"]
	at := func(val float64) float64 {
		y := slices.Clone(x)
		y[0] = math.Log(val / 2)
		return o.cost(y)
	}
	if a.LowAtLimit || a.HighAtLimit {
		t.Fatalf("a: %+v, want both edges found", a)
	}
	// a's edges are within 0.1% of 1.5 (the floor: a cost of 1e-6).
	if c := at(a.Low * 1.0001); c > limit {
		t.Errorf("a just inside its low edge %g: cost %g, over the tolerance %g", a.Low, c, limit)
	}
	if c := at(a.Low * 0.998); c <= limit {
		t.Errorf("a past its low edge %g: cost %g, within the tolerance %g", a.Low, c, limit)
	}
	if c := at(a.High * 1.002); c <= limit {
		t.Errorf("a past its high edge %g: cost %g, within the tolerance %g", a.High, c, limit)
	}
	if a.Low > 1.5 || a.High < 1.5 || a.SeenLow > a.Low || a.SeenHigh < a.High {
		t.Errorf("a: %+v, want Low <= 1.5 <= High inside SeenLow-SeenHigh", a)
	}
	if b := v["b"]; !b.LowAtLimit || !b.HighAtLimit {
		t.Errorf("b, on which no figure depends: %+v, want both edges at the limit", b)
	}
}

// plateau is a figure that does not move while p stays below 2 (a cell
// bound elsewhere), then falls to its value at p = 3.4.
func plateau(p []float64) []float64 { return []float64{1.5 - max(0, p[0]-2)/2.8} }

// TestCoarseScanLeavesAPlateau: from p = 1, on the plateau, Nelder-Mead
// alone ends where it began; the coarse scan finds the slope, and the
// fit reaches the figure.
func TestCoarseScanLeavesAPlateau(t *testing.T) {
	alone := synthetic([]float64{1}, plateau)
	x, _, err := alone.minimise([]float64{0})
	if err != nil {
		t.Fatal(err)
	}
	if c := alone.cost(x); c < 0.2 {
		t.Errorf("Nelder-Mead alone: cost %g at p = %g; the plateau should hold it (cost 0.25)", c, math.Exp(x[0]))
	}
	o := synthetic([]float64{1}, plateau)
	x, _, err = o.minimise(o.coarse([]float64{0}))
	if err != nil {
		t.Fatal(err)
	}
	if c, p := o.cost(x), math.Exp(x[0]); c > 1e-6 || math.Abs(p-3.4) > 0.01 {
		t.Errorf("coarse scan, then Nelder-Mead: cost %g at p = %g, want the figure met at p = 3.4", c, p)
	}
}
