package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// cpuProfileEnv names a file to write a CPU profile of the whole command
// to (Go's pprof format), for finding where a command's time goes:
// bench/provision-1000 sets it. Empty or unset: no profile.
const cpuProfileEnv = "TSOLAB_CPUPROFILE"

// startProfile starts the CPU profile asked for by cpuProfileEnv, and
// returns the function that writes it out.
func startProfile() (stop func()) {
	path := os.Getenv(cpuProfileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "tsolab: %s: %v\n", cpuProfileEnv, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "tsolab: %s: %v\n", cpuProfileEnv, err)
		}
	}
}
