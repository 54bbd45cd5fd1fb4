package calibrate

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/engine/sim"
	"github.com/tsolab/tsolab/hcl"
	"github.com/tsolab/tsolab/result"
)

// TestExamplesCalibrationIsTheFit is tsolab calibrate -check on every
// example with calibrate blocks: each committed file holds what the fit
// of the lab's figures gives, so no example runs on a hand-edited or
// stale calibration. examples/neterion-2005 is left to
// cmd/tsolab's TestHeldOutFiguresDoNotMoveTheModel, which compares its
// files byte for byte with a fit.
func TestExamplesCalibrationIsTheFit(t *testing.T) {
	if testing.Short() {
		t.Skip("fits every calibrated example with restarts (10 min at load 17-20): not with -short")
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
			_, err := FitAll(context.Background(), lab, Options{}, func(c *config.Calibration, got *sim.CalibrationFile) {
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

// TestKernelHeldOutCellsDoNotMoveTheFit: in a copy of
// examples/kernel-calibration whose kernel.json has one predicted cell's
// runs scaled tenfold, the fit is the committed one; scaling a fitted
// cell's runs moves it. The figures read from a kernel run are held out
// or fitted exactly as the lab says.
func TestKernelHeldOutCellsDoNotMoveTheFit(t *testing.T) {
	if testing.Short() {
		t.Skip("fits the model twice: not with -short")
	}
	src := "../../../examples/kernel-calibration"
	committed, err := sim.ReadCalibration(filepath.Join(src, "modern.calibration.json"))
	if err != nil {
		t.Fatal(err)
	}
	fit := func(scenario string) map[string]float64 {
		t.Helper()
		res, err := result.ReadFile(filepath.Join(src, "kernel.json"))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i := range res.Runs {
			if res.Runs[i].Scenario == scenario {
				for m := range res.Runs[i].Metrics {
					res.Runs[i].Metrics[m] *= 10
				}
				n++
			}
		}
		if n == 0 {
			t.Fatalf("kernel.json has no run of %s", scenario)
		}
		dir := t.TempDir()
		b, _ := json.Marshal(res)
		lab, _ := os.ReadFile(filepath.Join(src, "lab.tsolab.hcl"))
		if os.WriteFile(filepath.Join(dir, "kernel.json"), b, 0o644) != nil || os.WriteFile(filepath.Join(dir, "lab.tsolab.hcl"), lab, 0o644) != nil {
			t.Fatal("write the copy")
		}
		l, diags := hcl.Load(dir, hcl.Options{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		files, err := FitAll(context.Background(), l, Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return files[0].Params
	}
	if got := fit("tso=true,mtu=9000,rate=line"); !maps.Equal(got, committed.Params) {
		t.Errorf("a predicted cell scaled tenfold moved the fit: %v, committed %v", got, committed.Params)
	}
	if got := fit("tso=false,mtu=1500,rate=2gbit"); maps.Equal(got, committed.Params) {
		t.Errorf("a fitted cell scaled tenfold left the fit at %v: the fit does not read the kernel's figures", got)
	}
}
