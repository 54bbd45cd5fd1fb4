package kernel

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time the calling OS thread has used
// (CLOCK_THREAD_CPUTIME_ID). The caller must be locked to its thread.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		// The clock exists on every Linux since 2.6.12; failing is a bug.
		panic(fmt.Sprintf("clock_gettime(CLOCK_THREAD_CPUTIME_ID): %v", err))
	}
	return time.Duration(ts.Nano())
}

// processCPU returns the CPU time every thread of this process has used,
// live and ended (getrusage RUSAGE_SELF: user + system, which the kernel
// scales to the threads' sum_exec_runtime).
func processCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		// RUSAGE_SELF cannot fail on Linux; failing is a bug.
		panic(fmt.Sprintf("getrusage(RUSAGE_SELF): %v", err))
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// userHZ is the unit of /proc/stat (USER_HZ, 100 on every Linux ABI).
const userHZ = 100

// cpuSnapshot is the machine's CPU accounting at one instant: how long
// the CPUs were idle, and how long every process has run.
type cpuSnapshot struct {
	Wall time.Time
	CPUs int
	// Idle is idle + iowait + steal summed over the online CPUs, from
	// /proc/stat. With NO_HZ the idle and iowait times are measured, not
	// sampled, and interrupt and softirq time taken on an idle CPU is not
	// idle time.
	Idle time.Duration
	// Processes is utime + stime + cutime + cstime summed over every
	// process (/proc/PID/stat): the runtime of its threads, dead ones
	// included, and of the children it reaped. A process that ends
	// between two snapshots leaves its time in an ancestor's cutime.
	Processes time.Duration
	// Softirqd is the runtime of the ksoftirqd/N threads (schedstat, ns).
	Softirqd time.Duration
}

// takeCPUSnapshot reads /proc/stat and every /proc/PID/stat.
func takeCPUSnapshot() (cpuSnapshot, error) {
	s := cpuSnapshot{Wall: time.Now()}
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s, err
	}
	s.CPUs, s.Idle = parseProcStat(string(stat))
	pids, err := os.ReadDir("/proc")
	if err != nil {
		return s, err
	}
	for _, p := range pids {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + p.Name() + "/stat")
		if err != nil {
			continue // the process ended and was reaped: its parent has it
		}
		comm, ticks, ok := parsePidStat(string(b))
		if !ok {
			continue
		}
		s.Processes += time.Duration(ticks) * time.Second / userHZ
		if strings.HasPrefix(comm, "ksoftirqd/") {
			if b, err := os.ReadFile("/proc/" + p.Name() + "/schedstat"); err == nil {
				if ns, ok := parseSchedstat(string(b)); ok {
					s.Softirqd += ns
				}
			}
		}
	}
	return s, nil
}

// parsePidStat returns the command name and utime+stime+cutime+cstime (in
// USER_HZ ticks) from a /proc/PID/stat line.
func parsePidStat(stat string) (comm string, ticks int64, ok bool) {
	open, closing := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || closing < open {
		return "", 0, false
	}
	f := strings.Fields(stat[closing+1:])
	// f[0] is field 3 (state); utime..cstime are fields 14..17.
	if len(f) < 15 {
		return "", 0, false
	}
	for _, v := range f[11:15] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "", 0, false
		}
		ticks += n
	}
	return stat[open+1 : closing], ticks, true
}

// parseProcStat returns the online CPUs and their summed idle, iowait and
// steal time from /proc/stat.
func parseProcStat(stat string) (cpus int, idle time.Duration) {
	for _, line := range strings.Split(stat, "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		cpus++
		for _, col := range []int{4, 5, 8} { // idle, iowait, steal
			v, _ := strconv.ParseInt(f[col], 10, 64)
			idle += time.Duration(v) * time.Second / userHZ
		}
	}
	return cpus, idle
}

// outsideTasks is CPU time between two snapshots that no thread ran:
// hardirq and softirq work on otherwise idle CPUs (TCP pacing timers, TSQ
// tasklets). softirqd is the runtime of the ksoftirqd threads. Both are
// exact to the 10 ms unit of /proc per CPU and per busy process. own is
// this process's CPU time over the same span: at least that much of the
// busy time ran in a process, and the ksoftirqd threads' runtime in
// others, even when the sum over /proc comes out smaller, as it does on
// a loaded machine when a process's time leaves /proc without reaching
// an ancestor's cutime (a child no one waited for, a reused PID).
func outsideTasks(a, b cpuSnapshot, own time.Duration) (outside, softirqd time.Duration) {
	softirqd = b.Softirqd - a.Softirqd
	busy := time.Duration(b.CPUs)*b.Wall.Sub(a.Wall) - (b.Idle - a.Idle)
	if outside = busy - max(b.Processes-a.Processes, own+softirqd); outside < 0 {
		outside = 0
	}
	return outside, softirqd
}

// parseSchedstat reads the run time from a /proc/PID/schedstat line
// ("RUNTIME_NS WAIT_NS TIMESLICES").
func parseSchedstat(s string) (time.Duration, bool) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(v), true
}

// splitSoftirq divides softirq time run outside the workload's threads
// between the sender and the receiver in proportion to the segments each
// side handled (sent plus received): softirq work is per segment, a
// transmit on one side and a receive on the other.
func splitSoftirq(total time.Duration, txSegs, rxSegs uint64) (tx, rx time.Duration) {
	if total <= 0 {
		return 0, 0
	}
	sum := txSegs + rxSegs
	if sum == 0 {
		return total / 2, total - total/2
	}
	tx = time.Duration(float64(total) * float64(txSegs) / float64(sum))
	return tx, total - tx
}
