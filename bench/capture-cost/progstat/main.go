// Command progstat measures what each of tsolab's eBPF programs costs per
// run while a command runs: it turns the kernel's BPF run-time statistics
// on (BPF_ENABLE_STATS, as kernel.bpf_stats_enabled=1 does, for as long as
// progstat runs), starts the command, and takes a file descriptor of
// every program whose name starts with -prefix as soon as it sees it
// (polling every -every), so that a program the command closes stays
// readable; when the command has ended it prints one line a program:
//
//	name=tsl_ingress id=123 runs=2300000 run_ns=98000000 ns_per_run=42.6 xlated=... jited=...
//
// runs and run_ns are the kernel's run_cnt and run_time_ns (the time
// between two sched_clock reads around each run, so a little of the
// reads' own cost is in it); ns_per_run their ratio; xlated and jited the
// program's size in bytes after the verifier and the JIT. With the
// statistics on every run of every program on the machine costs two clock
// reads more: throughput measured under progstat is not comparable with
// throughput measured without it. A program loaded and closed between two
// polls is missed. Needs root (CAP_SYS_ADMIN for the statistics and for
// programs' ids). It is a benchmark driver, not part of the product.
//
//	progstat [-prefix tsl_] [-every 20ms] -- COMMAND [ARG...]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

func main() {
	prefix := flag.String("prefix", "tsl_", "measure the programs whose name starts with this")
	every := flag.Duration("every", 20*time.Millisecond, "how often to look for new programs")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: progstat [-prefix P] [-every D] -- COMMAND [ARG...]")
		os.Exit(2)
	}
	if err := run(*prefix, *every, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "progstat:", err)
		os.Exit(1)
	}
}

// seen is a program progstat holds open, in the order it was found.
type seen struct {
	id   ebpf.ProgramID
	name string
	prog *ebpf.Program
}

func run(prefix string, every time.Duration, args []string) error {
	stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		return fmt.Errorf("turn the BPF run-time statistics on: %w", err)
	}
	defer stats.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	held := map[ebpf.ProgramID]bool{}
	var progs []seen
	defer func() {
		for _, p := range progs {
			p.prog.Close()
		}
	}()
	look := func() {
		for id := ebpf.ProgramID(0); ; {
			next, err := ebpf.ProgramGetNextID(id)
			if err != nil {
				return
			}
			id = next
			if held[id] {
				continue
			}
			held[id] = true
			p, err := ebpf.NewProgramFromID(id)
			if err != nil {
				continue // gone already
			}
			info, err := p.Info()
			if err != nil || !strings.HasPrefix(info.Name, prefix) {
				p.Close()
				continue
			}
			progs = append(progs, seen{id: id, name: info.Name, prog: p})
		}
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(every)
	defer tick.Stop()
	var cmdErr error
wait:
	for {
		select {
		case cmdErr = <-done:
			break wait
		case <-tick.C:
			look()
		}
	}
	for _, p := range progs {
		st, err := p.prog.Stats()
		if err != nil {
			return fmt.Errorf("program %d (%s): %w", p.id, p.name, err)
		}
		perRun := 0.0
		if st.RunCount > 0 {
			perRun = float64(st.Runtime.Nanoseconds()) / float64(st.RunCount)
		}
		var xlated int
		var jited uint32
		if info, err := p.prog.Info(); err == nil {
			xlated, _ = info.TranslatedSize()
			jited, _ = info.JitedSize()
		}
		fmt.Printf("name=%s id=%d runs=%d run_ns=%d ns_per_run=%.1f xlated=%d jited=%d\n",
			p.name, p.id, st.RunCount, st.Runtime.Nanoseconds(), perRun, xlated, jited)
	}
	var exit *exec.ExitError
	if errors.As(cmdErr, &exit) {
		os.Exit(exit.ExitCode())
	}
	return cmdErr
}
