package planner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tsolab/tsolab/sudouser"
)

// PlanFileFormatVersion is the format_version of saved plans.
const PlanFileFormatVersion = 1

type planFile struct {
	FormatVersion int   `json:"format_version"`
	Plan          *Plan `json:"plan"`
}

// WritePlanFile saves p for a later Apply (tsolab plan -out FILE). A plan
// with errors is refused (ErrPlanHasErrors): it could not be applied.
func WritePlanFile(path string, p *Plan) error {
	if p.Diagnostics.HasErrors() {
		return ErrPlanHasErrors
	}
	b, err := json.MarshalIndent(planFile{FormatVersion: PlanFileFormatVersion, Plan: p}, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tsolab-plan*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = sudouser.GiveFile(tmp.Name())
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// ErrNotPlanFile is wrapped by ReadPlanFile's error for a file that is not
// a saved plan (the CLI then treats the argument as a lab directory).
var ErrNotPlanFile = errors.New("not a tsolab plan file")

// ReadPlanFile loads a plan saved by WritePlanFile and checks that its
// desired resources still hash to what was recorded.
func ReadPlanFile(path string) (*Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f planFile
	if err := json.Unmarshal(b, &f); err != nil || f.Plan == nil {
		return nil, fmt.Errorf("%s: %w", path, ErrNotPlanFile)
	}
	if f.FormatVersion != PlanFileFormatVersion {
		return nil, fmt.Errorf("%s: plan format_version %d, this tsolab reads %d: run tsolab plan again", path, f.FormatVersion, PlanFileFormatVersion)
	}
	if f.Plan.Mode == ModeNormal && HashDesired(f.Plan.Desired) != f.Plan.DesiredHash {
		return nil, fmt.Errorf("%s: the plan's desired resources do not match its hash: the file was modified; run tsolab plan again", path)
	}
	f.Plan.File = path
	return f.Plan, nil
}
