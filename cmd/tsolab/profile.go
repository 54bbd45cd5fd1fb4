package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"

	"github.com/tsolab/tsolab/sudouser"
)

// cpuProfileEnv names a file to write a CPU profile of the whole command
// to (Go's pprof format), for finding where a command's time goes:
// bench/provision-1000 sets it. Empty or unset: no profile.
const cpuProfileEnv = "TSOLAB_CPUPROFILE"

// traceEnv names a file to write an execution trace of the whole command
// to (runtime/trace), for the time a CPU profile does not see: waits in
// syscalls (fsync, the kernel's locks), on locks and on channels. Read
// it with `go tool trace -pprof=syscall FILE` (or sync, net, sched).
// Empty or unset: no trace.
const traceEnv = "TSOLAB_TRACE"

// memProfileEnv names a file to write a profile of the whole command's
// allocations to (pprof's allocs, one sample per 64 KiB allocated), for
// finding what makes the heap grow: `go tool pprof -sample_index=alloc_space
// -top FILE`. Empty or unset: no profile.
const memProfileEnv = "TSOLAB_MEMPROFILE"

// startProfile starts the CPU profile and the execution trace asked for
// by cpuProfileEnv and traceEnv, and returns the function that writes
// them out.
func startProfile() (stop func()) {
	stopCPU := startOne(cpuProfileEnv, pprof.StartCPUProfile, pprof.StopCPUProfile)
	stopTrace := startOne(traceEnv, trace.Start, trace.Stop)
	stopMem := func() {}
	if os.Getenv(memProfileEnv) != "" {
		runtime.MemProfileRate = 64 << 10
		var f io.Writer
		stopMem = startOne(memProfileEnv, func(w io.Writer) error { f = w; return nil }, func() {
			runtime.GC() // the profile holds what the last GC saw
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				fmt.Fprintf(os.Stderr, "tsolab: %s: %v\n", memProfileEnv, err)
			}
		})
	}
	return func() {
		stopMem()
		stopTrace()
		stopCPU()
	}
}

// startOne starts one profile into the file env names, if it names one.
func startOne(env string, start func(io.Writer) error, stop func()) func() {
	path := os.Getenv(env)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = sudouser.GiveFile(path)
	}
	if err == nil {
		err = start(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "tsolab: %s: %v\n", env, err)
		return func() {}
	}
	return func() {
		stop()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "tsolab: %s: %v\n", env, err)
		}
	}
}
