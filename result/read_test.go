package result

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFile: a results file of format 1 reads back; a file that is
// not JSON, or of another format, is refused naming the file and why.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, body string
		err        string // "" = reads
	}{
		{"ok.json", `{"format_version": 1}`, ""},
		{"bad.json", `not json`, "is not a tsolab results file"},
		{"v2.json", `{"format_version": 2}`, "has results format 2; this tsolab reads format 1"},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := ReadFile(path)
		switch {
		case tc.err == "" && (err != nil || r == nil || r.FormatVersion != 1):
			t.Errorf("%s: got %v, %v; want format 1 read", tc.name, r, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), path)):
			t.Errorf("%s: error %v, want one naming the file with %q", tc.name, err, tc.err)
		}
	}
}

// TestMedian: the middle value of an odd count, the mean of the middle
// two of an even one (whatever the order), 0 for none.
func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{7}, 7}, {nil, 0}} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
