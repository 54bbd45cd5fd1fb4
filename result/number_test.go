package result

import (
	"math"
	"testing"
)

func TestFormatNumber(t *testing.T) {
	for _, tt := range []struct {
		f       float64
		sig     int
		expFrom float64
		want    string
	}{
		{0, 4, 1e6, "0"},
		{27.6166, 4, 1e6, "27.62"},
		{1517123, 4, 1e6, "1.517e6"},
		{1517123, 4, 1e12, "1517123"},
		{2.7616e10, 4, 1e12, "27616000000"},
		{-2.5e12, 4, 1e12, "-2.5e12"},
		{0.0005, 4, 1e12, "5e-4"},
		{1.0 / 3, 2, 1e6, "0.33"},
		{0.26, 2, 1e6, "0.26"},
		{math.Inf(-1), 4, 1e6, "-Inf"},
	} {
		if got := FormatNumber(tt.f, tt.sig, tt.expFrom); got != tt.want {
			t.Errorf("FormatNumber(%v, %d, %g) = %q, want %q", tt.f, tt.sig, tt.expFrom, got, tt.want)
		}
	}
}
