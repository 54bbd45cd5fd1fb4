package calibrate

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine/sim"
	"github.com/tsolab/tsolab/hcl"
)

// TestExamplesCalibrationIsTheFit is tsolab calibrate -check on every
// example with calibrate blocks: each committed file holds what the fit
// of the lab's figures gives, so no example runs on a hand-edited or
// stale calibration. examples/neterion-2005 is left to
// cmd/tsolab's TestHeldOutFiguresDoNotMoveTheModel, which compares its
// files byte for byte with a fit.
func TestExamplesCalibrationIsTheFit(t *testing.T) {
	if testing.Short() {
		t.Skip("fits every calibrated example (about a minute): not with -short")
	}
	dirs, err := filepath.Glob("../../../examples/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		lab, diags := hcl.Load(dir, hcl.Options{})
		if diags.HasErrors() {
			t.Fatalf("%s: %v", dir, diags)
		}
		if len(lab.Calibrations) == 0 || filepath.Base(dir) == "neterion-2005" {
			continue
		}
		n++
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			_, err := FitAll(context.Background(), lab, func(c *config.Calibration, got *sim.CalibrationFile) {
				path := sim.CalibrationPath(lab, c)
				old, err := sim.ReadCalibration(path)
				if err != nil {
					t.Errorf("%s: %v", path, err)
					return
				}
				for name, v := range got.Params {
					if old.Params[name] != v {
						t.Errorf("%s: %s = %g, the fit gives %g: run tsolab calibrate %s", path, name, old.Params[name], v, dir)
					}
				}
				if len(old.Params) != len(got.Params) {
					t.Errorf("%s frees %d parameters, the lab %d: run tsolab calibrate %s", path, len(old.Params), len(got.Params), dir)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	if n == 0 {
		t.Fatal("no example has a calibrate block")
	}
}
