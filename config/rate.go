package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Rate is a bit rate in bits per second.
type Rate uint64

// ParseRate parses tc-style rates: "2gbit", "100mbit", "7.5gbit", "1000kbit",
// "10gbps" (bytes), or a plain number of bits per second.
func ParseRate(s string) (Rate, error) {
	str := strings.ToLower(strings.TrimSpace(s))
	v, mult, err := withUnit(str, []unit{
		{"tbit", 1e12}, {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1},
		{"tbps", 8e12}, {"gbps", 8e9}, {"mbps", 8e6}, {"kbps", 8e3}, {"bps", 8},
	})
	if err != nil || v <= 0 || v*mult < 1 {
		return 0, fmt.Errorf("%q is not a rate: write a positive number with a unit, like \"2gbit\", \"100mbit\" or \"1gbps\" (bytes)", s)
	}
	return Rate(v * mult), nil
}

func (r Rate) String() string {
	switch {
	case r == 0:
		return "0bit"
	case r%1e9 == 0:
		return fmt.Sprintf("%dgbit", r/1e9)
	case r%1e6 == 0:
		return fmt.Sprintf("%dmbit", r/1e6)
	case r%1e3 == 0:
		return fmt.Sprintf("%dkbit", r/1e3)
	}
	return fmt.Sprintf("%dbit", uint64(r))
}

// ParseSize parses a byte count: "100MB", "1MiB", "64k", "65536".
// Decimal units (KB, MB, GB) are powers of 1000, binary ones (KiB, MiB,
// GiB, and the short k, m, g) powers of 1024.
func ParseSize(s string) (int64, error) {
	str := strings.TrimSpace(s)
	v, mult, err := withUnit(str, []unit{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"B", 1},
	})
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a size: write a number of bytes with an optional unit, like \"100MB\", \"1MiB\" or \"65536\"", s)
	}
	return int64(v * mult), nil
}

// unit is a suffix of a number and what it multiplies the number by.
type unit struct {
	suffix string
	mult   float64
}

// withUnit parses str as a number followed by the first of units whose
// suffix it ends with (none: a multiplier of 1).
func withUnit(str string, units []unit) (v, mult float64, err error) {
	mult = 1
	for _, u := range units {
		if strings.HasSuffix(str, u.suffix) {
			mult = u.mult
			str = strings.TrimSuffix(str, u.suffix)
			break
		}
	}
	v, err = strconv.ParseFloat(strings.TrimSpace(str), 64)
	return v, mult, err
}
