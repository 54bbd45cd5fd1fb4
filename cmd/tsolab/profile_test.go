package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestMemProfile: with TSOLAB_MEMPROFILE set, the command's allocations
// are written to that file when it stops, as pprof's gzipped profile
// that names the function that allocated.
func TestMemProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mem.pprof")
	t.Setenv(memProfileEnv, path)
	t.Setenv(cpuProfileEnv, "")
	t.Setenv(traceEnv, "")
	stop := startProfile()
	sink = allocateForProfile()
	stop()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	z, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s is not pprof's gzipped profile: %v", path, err)
	}
	pb, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(pb, []byte("allocateForProfile")) {
		t.Errorf("the profile (%d bytes) does not name allocateForProfile, which allocated 4 MiB", len(pb))
	}
}

var sink [][]byte

//go:noinline
func allocateForProfile() [][]byte {
	var out [][]byte
	for range 64 {
		out = append(out, make([]byte, 64<<10))
	}
	return out
}
