package sim

import (
	"slices"
	"testing"

	"github.com/tsolab/tsolab/result"
)

// TestStopReasonNames checks the model's stop reasons against the names
// package result documents for WorkloadResult.StopReasons.
func TestStopReasonNames(t *testing.T) {
	var got []string
	for r := stopCwnd; r < numStopReasons; r++ {
		got = append(got, r.String())
	}
	if want := result.StopReasons[:]; !slices.Equal(got, want) {
		t.Errorf("the model's stop reasons are %v, package result names %v", got, want)
	}
}
