package result

import (
	"math"
	"strconv"
	"strings"
)

// FormatNumber writes a measured value the one way tables, verdicts and
// the report write it: sig significant digits with every digit of the
// integer part and no trailing zeros ("27.62", "1517123"), and a short
// exponent ("6.1e9", "1e-7") when |f| is expFrom or more, or below 1e-3.
func FormatNumber(f float64, sig int, expFrom float64) string {
	a := math.Abs(f)
	switch {
	case f == 0:
		return "0"
	case math.IsInf(f, 0) || math.IsNaN(f):
		return strconv.FormatFloat(f, 'g', -1, 64)
	case a >= expFrom || a < 1e-3:
		s := strconv.FormatFloat(f, 'e', sig-1, 64)
		mant, exp, _ := strings.Cut(s, "e")
		sign := ""
		if exp[0] == '-' {
			sign = "-"
		}
		return trimZeros(mant) + "e" + sign + strings.TrimLeft(exp[1:], "0")
	}
	intDigits := int(math.Floor(math.Log10(a))) + 1
	return trimZeros(strconv.FormatFloat(f, 'f', max(0, sig-intDigits), 64))
}

// trimZeros drops the trailing zeros of a decimal fraction, and its point
// when nothing is left after it.
func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
