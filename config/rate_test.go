package config

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
	}{
		{"65536", 65536},
		{"1KiB", 1024}, {"1MiB", 1 << 20}, {"2GiB", 2 << 30}, {"1TiB", 1 << 40},
		{"100KB", 100e3}, {"100MB", 100e6}, {"1GB", 1e9}, {"1TB", 1e12},
		{"64k", 64 << 10}, {"4m", 4 << 20}, {"1g", 1 << 30}, {"512B", 512},
		{" 1.5MiB ", 3 << 19},
	} {
		got, err := ParseSize(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "lots", "-1MB", "MB", "1 XB"} {
		if _, err := ParseSize(bad); err == nil || !strings.Contains(err.Error(), "is not a size") {
			t.Errorf("ParseSize(%q): error %v, want one saying it is not a size", bad, err)
		}
	}
}

func TestParseRate(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Rate
		str  string
	}{
		{"2gbit", 2e9, "2gbit"}, {"7.5gbit", 7.5e9, "7500mbit"}, {"100mbit", 100e6, "100mbit"},
		{"1000kbit", 1e6, "1mbit"}, {"1tbit", 1e12, "1000gbit"}, {"300bit", 300, "300bit"},
		{"1gbps", 8e9, "8gbit"}, {"10mbps", 80e6, "80mbit"}, {"1kbps", 8e3, "8kbit"}, {"1bps", 8, "8bit"},
		{"1GBIT", 1e9, "1gbit"}, {"12345", 12345, "12345bit"},
	} {
		got, err := ParseRate(tt.in)
		if err != nil || got != tt.want || got.String() != tt.str {
			t.Errorf("ParseRate(%q) = %v (%s), %v; want %v (%s)", tt.in, uint64(got), got, err, uint64(tt.want), tt.str)
		}
	}
	for _, bad := range []string{"", "fast", "0gbit", "-1mbit", "0.1bit"} {
		if _, err := ParseRate(bad); err == nil || !strings.Contains(err.Error(), "is not a rate") {
			t.Errorf("ParseRate(%q): error %v, want one saying it is not a rate", bad, err)
		}
	}
}
