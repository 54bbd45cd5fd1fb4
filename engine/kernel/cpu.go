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

// userHZ is the unit of /proc/stat (USER_HZ, 100 on every Linux ABI).
const userHZ = 100

// cpuSnapshot is the machine's CPU accounting at one instant: how long
// the CPUs were idle, and how long every task has run.
type cpuSnapshot struct {
	Wall time.Time
	CPUs int
	// Idle is idle + iowait + steal summed over the online CPUs, from
	// /proc/stat. With NO_HZ the idle and iowait times are measured, not
	// sampled, and interrupt and softirq time taken on an idle CPU is not
	// idle time.
	Idle time.Duration
	// Tasks is sum_exec_runtime of every thread, by TID.
	Tasks map[int]time.Duration
	// Softirqd is the subset of Tasks that are ksoftirqd/N threads.
	Softirqd map[int]bool
}

// takeCPUSnapshot reads /proc/stat and /proc/*/task/*/schedstat.
func takeCPUSnapshot() (cpuSnapshot, error) {
	s := cpuSnapshot{Wall: time.Now(), Tasks: map[int]time.Duration{}, Softirqd: map[int]bool{}}
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
		tids, err := os.ReadDir("/proc/" + p.Name() + "/task")
		if err != nil {
			continue // the process ended
		}
		for _, t := range tids {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			dir := "/proc/" + p.Name() + "/task/" + t.Name()
			b, err := os.ReadFile(dir + "/schedstat")
			if err != nil {
				continue
			}
			if ns, ok := parseSchedstat(string(b)); ok {
				s.Tasks[tid] = ns
			}
			if c, err := os.ReadFile(dir + "/comm"); err == nil && strings.HasPrefix(string(c), "ksoftirqd/") {
				s.Softirqd[tid] = true
			}
		}
	}
	return s, nil
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
// tasklets), plus whatever threads that ended in between had used.
// softirqd is the runtime of the ksoftirqd threads.
func outsideTasks(a, b cpuSnapshot) (outside, softirqd time.Duration) {
	busy := time.Duration(b.CPUs)*b.Wall.Sub(a.Wall) - (b.Idle - a.Idle)
	var tasks time.Duration
	for tid, rt := range b.Tasks {
		d := rt - a.Tasks[tid]
		if d < 0 {
			continue // a TID reused by a new thread
		}
		tasks += d
		if b.Softirqd[tid] {
			softirqd += d
		}
	}
	if outside = busy - tasks; outside < 0 {
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

// splitSoftirq divides softirq time run outside the workload's threads between the
// sender and the receiver in proportion to the segments each received.
func splitSoftirq(total time.Duration, txSegsIn, rxSegsIn uint64) (tx, rx time.Duration) {
	if total <= 0 {
		return 0, 0
	}
	sum := txSegsIn + rxSegsIn
	if sum == 0 {
		return total / 2, total - total/2
	}
	tx = time.Duration(float64(total) * float64(txSegsIn) / float64(sum))
	return tx, total - tx
}
