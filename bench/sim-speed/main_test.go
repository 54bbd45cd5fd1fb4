package main

import "testing"

func TestCellPattern(t *testing.T) {
	for _, tc := range []struct{ cells, want string }{
		{"loopback-tbench", "Examples/loopback-tbench"},
		{"a|b/tso=true/rr", "Examples/a|Examples/b/tso=true/rr"},
		{"(a|b)/x", "Examples/(a|b)/x"},
		{"[|]a|b", "Examples/[|]a|Examples/b"},
		{`a\|b|c`, `Examples/a\|b|Examples/c`},
	} {
		if got := cellPattern(tc.cells); got != tc.want {
			t.Errorf("cellPattern(%q) = %q, want %q", tc.cells, got, tc.want)
		}
	}
}
