package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/sudouser"
)

// CalibrationFormatVersion is the format_version of calibration files.
const CalibrationFormatVersion = 1

// CalibrationFile is what `tsolab calibrate` writes for one calibrate
// block (package calibrate fits it): the fitted values of a CPU
// profile's free parameters, what they were fitted to, and how well.
type CalibrationFile struct {
	FormatVersion int    `json:"format_version"`
	CPU           string `json:"cpu"`
	// Params are the fitted values of the free parameters, by name.
	Params map[string]float64 `json:"params"`
	// Start are the built-in values the fit started from.
	Start map[string]float64 `json:"start"`
	// FittedTo names the observed blocks fitted to.
	FittedTo []string `json:"fitted_to"`
	// Figures are the fitted figures with the model's value after the
	// fit and the relative error.
	Figures []Figure `json:"figures"`
	// Evaluations is how many times the fit ran the fitted cells.
	Evaluations int `json:"evaluations"`
	// Rounds is how many Nelder-Mead runs the fit took: the first from
	// the start values, each later one from the best point so far with
	// a fresh simplex, until a round lowered the cost by less than the
	// restart tolerance (package calibrate).
	Rounds int `json:"rounds"`
	// RoundCosts is the cost each round started from (the first at the
	// start values), then the cost the last round ended at.
	RoundCosts []float64 `json:"round_costs"`
	// Cost is the fit's cost at Params: the sum of the figures' squared
	// relative errors.
	Cost float64 `json:"cost"`
	// Valley says, per free parameter, how flat the cost is around the
	// fit: how sure the fit is of that parameter.
	Valley map[string]Valley `json:"valley"`
}

// Valley is the range of one fitted parameter over which the fit's cost
// stays within its tolerance of the best (package calibrate: 1% of the
// cost, and at least 1e-6, a 0.1% error on one figure).
type Valley struct {
	// Low and High bound the values with the other parameters held at
	// the fit (a scan along the parameter alone).
	Low  float64 `json:"low"`
	High float64 `json:"high"`
	// AtLimit is set when the scan reached its limit (a factor of 10
	// either way) on that side with the cost still within the
	// tolerance: the figures do not pin the parameter there.
	LowAtLimit  bool `json:"low_at_limit,omitempty"`
	HighAtLimit bool `json:"high_at_limit,omitempty"`
	// SeenLow and SeenHigh are the least and greatest value of the
	// parameter among every point the fit evaluated whose cost is within
	// the tolerance, the other parameters wherever the fit had them: a
	// valley along which parameters trade for each other shows here
	// wider than Low-High.
	SeenLow  float64 `json:"seen_low"`
	SeenHigh float64 `json:"seen_high"`
}

// Figure is one observed value beside the model's.
type Figure struct {
	Observed string `json:"observed"`
	Scenario string `json:"scenario"`
	// RelativeTo is the scenario Value and Model are relative to (the
	// metric in Scenario over the metric in RelativeTo), or "".
	RelativeTo string  `json:"relative_to,omitempty"`
	Workload   string  `json:"workload"`
	Metric     string  `json:"metric"`
	Value      float64 `json:"value"`
	Model      float64 `json:"model"`
	Error      float64 `json:"error"` // model/value - 1
}

// CalibrationPath is where a calibrate block's file lives.
func CalibrationPath(lab *config.Lab, c *config.Calibration) string {
	if filepath.IsAbs(c.File) {
		return c.File
	}
	return filepath.Join(lab.Dir, c.File)
}

// ProfilesFor returns the built-in CPU profiles with every calibration
// file of the lab applied, and the files it read: what the lab's runs on
// the model use. A calibration whose file does not exist yet is an error
// that says to run tsolab calibrate.
func ProfilesFor(lab *config.Lab) ([]CPUProfile, []string, error) {
	profiles := builtinCPUProfiles()
	var read []string
	for _, c := range lab.Calibrations {
		path := CalibrationPath(lab, c)
		f, err := ReadCalibration(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("calibrate %q: %s does not exist yet: run tsolab calibrate %s", c.CPU, path, lab.Dir)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("calibrate %q: %w", c.CPU, err)
		}
		if err := f.Apply(profiles); err != nil {
			return nil, nil, fmt.Errorf("calibrate %q: %s: %w", c.CPU, path, err)
		}
		read = append(read, path)
	}
	return profiles, read, nil
}

// ReadCalibration reads a calibration file.
func ReadCalibration(path string) (*CalibrationFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f CalibrationFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: not a calibration file (%v): run tsolab calibrate again", path, err)
	}
	if f.FormatVersion != CalibrationFormatVersion {
		return nil, fmt.Errorf("%s: format_version %d, this tsolab reads %d: run tsolab calibrate again", path, f.FormatVersion, CalibrationFormatVersion)
	}
	return &f, nil
}

// Write writes a calibration file, indented; under sudo it is the
// invoking user's where they own its directory (sudouser).
func (f *CalibrationFile) Write(path string) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return sudouser.GiveFile(path)
}

// Apply sets the fitted parameters on the profile the file calibrates.
func (f *CalibrationFile) Apply(profiles []CPUProfile) error {
	for i := range profiles {
		if profiles[i].Name != f.CPU {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(f.Params)) {
			if err := profiles[i].Set(name, f.Params[name]); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("no cpu profile %q to calibrate", f.CPU)
}
