package kernel

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/result"
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
	// Metered says Softirq holds the softirq meter's totals; Kstat is
	// the kernel's count of softirqs by vector (/proc/softirqs), which
	// the meter's counts are checked against.
	Metered bool
	Softirq softirqTimes
	Kstat   [nrSoftirqs]uint64
	// MeterOn is how long the meter's programs had been attached: it
	// runs in windows (sirqWindow), and Softirq holds what they timed.
	MeterOn time.Duration
	// Processed is the packets each of the machine's CPUs received
	// (/proc/net/softnet_stat's first column, every namespace); LabRx
	// those the lab's namespaces received (the rx_packets of their
	// links), with the meter only; LabRxOK says LabRx was read.
	Processed []uint32 // by CPU; the kernel's counters wrap at 2^32
	LabRx     uint64
	LabRxOK   bool
	// LoadAvg is the 1-minute load average (/proc/loadavg). CPUPressure
	// is the share of the last 10 s in which some runnable task waited
	// for a CPU (/proc/pressure/cpu "some avg10", in %); PressureOK says
	// the kernel has pressure stall information.
	LoadAvg     float64
	CPUPressure float64
	PressureOK  bool
}

// takeCPUSnapshot reads /proc/stat, /proc/softirqs, every /proc/PID/stat
// and, when m is not nil, the softirq meter, the machine's received
// packets and those of the lab's namespaces labNS (none: not read).
func takeCPUSnapshot(m *softirqMeter, labNS []string) (cpuSnapshot, error) {
	s := cpuSnapshot{Wall: time.Now()}
	if m != nil {
		var err error
		if s.Softirq, s.MeterOn, err = m.read(); err != nil {
			return s, err
		}
		s.Metered = true
		softnet, err := os.ReadFile("/proc/net/softnet_stat")
		if err != nil {
			return s, err
		}
		s.Processed = parseSoftnetProcessed(string(softnet))
		if len(labNS) > 0 {
			if s.LabRx, err = rxPackets(labNS); err != nil {
				return s, err
			}
			s.LabRxOK = true
		}
	}
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s, err
	}
	softirqs, err := os.ReadFile("/proc/softirqs")
	if err != nil {
		return s, err
	}
	s.Kstat = parseProcSoftirqs(string(softirqs))
	s.CPUs, s.Idle = parseProcStat(string(stat))
	if err := s.readLoad(); err != nil {
		return s, err
	}
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

// readLoad reads the load average and, where the kernel has it, the CPU
// pressure.
func (s *cpuSnapshot) readLoad() error {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return err
	}
	s.LoadAvg = parseLoadAvg(string(b))
	if b, err = os.ReadFile("/proc/pressure/cpu"); err == nil {
		s.CPUPressure, s.PressureOK = parseCPUPressure(string(b))
	}
	return nil
}

// parseLoadAvg reads the 1-minute load average, the first field of
// /proc/loadavg ("9.80 15.58 13.30 8/177 4345").
func parseLoadAvg(s string) float64 {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// parseCPUPressure reads avg10 of the "some" line of /proc/pressure/cpu
// ("some avg10=92.49 avg60=91.08 avg300=88.93 total=1149338237").
func parseCPUPressure(s string) (avg10 float64, ok bool) {
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "some" {
			continue
		}
		v, found := strings.CutPrefix(f[1], "avg10=")
		if !found {
			return 0, false
		}
		avg10, err := strconv.ParseFloat(v, 64)
		return avg10, err == nil
	}
	return 0, false
}

// machineLoad is how busy the machine was around a run between two
// snapshots: the load average and CPU pressure at each end, and the CPU
// time of every process but this one (own), in % of one core over the
// span.
func machineLoad(a, b cpuSnapshot, own time.Duration) result.Load {
	l := result.Load{LoadStart: a.LoadAvg, LoadEnd: b.LoadAvg}
	if a.PressureOK && b.PressureOK {
		start, end := a.CPUPressure, b.CPUPressure
		l.CPUPressureStart, l.CPUPressureEnd = &start, &end
	}
	if span := b.Wall.Sub(a.Wall); span > 0 {
		others := b.Processes - a.Processes - own
		l.OtherCPUPct = max(0, others.Seconds()/span.Seconds()*100)
	}
	return l
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

// outsideWorkers is the lab's softirq time between two snapshots that
// ran outside the workers' threads, and a note that says where it comes
// from. With the softirq meter in both snapshots it is the time of the
// lab's vectors (labVecs) on the idle task or a task other than the
// workers' threads (softirqd is then 0: ksoftirqd is such a task): of
// the softirqs that handled only the lab's packets or network timers,
// whole (classLab); of those the owner programs could not tell, times
// the lab's share of the packets the machine received (labShare); of
// those that handled only other namespaces', none (classForeign).
// Without the meter, what outsideTasks estimates from /proc.
func outsideWorkers(a, b cpuSnapshot, own time.Duration) (outside, softirqd time.Duration, note string) {
	on := b.MeterOn - a.MeterOn
	if !a.Metered || !b.Metered || on <= 0 {
		outside, softirqd = outsideTasks(a, b, own)
		return outside, softirqd, ""
	}
	d := b.Softirq.sub(a.Softirq)
	share, shareNote := labShare(a, b)
	span := b.Wall.Sub(a.Wall)
	scale := float64(span) / float64(on)
	outside = time.Duration((float64(d.outside(labVecs))*share + float64(d.sum(labVecs, classLab))) * scale)
	return outside, 0, softirqNote(d, b.Kstat, a.Kstat, on, span) + "; " + shareNote
}

// labShare is the lab's share of the packets the machine's CPUs
// received between two snapshots (1 when it cannot be read or the lab
// received more, as it can when a packet is counted on a link but
// dropped before the stack), and a note that says so.
func labShare(a, b cpuSnapshot) (float64, string) {
	if !a.LabRxOK || !b.LabRxOK || len(a.Processed) != len(b.Processed) {
		return 1, "the lab's share of the machine's packets was not read (a socket in the process's own namespace): all of that time is counted as the lab's"
	}
	var machine uint64
	for i := range b.Processed {
		machine += uint64(b.Processed[i] - a.Processed[i])
	}
	lab := b.LabRx - a.LabRx
	if machine == 0 || lab >= machine {
		return 1, fmt.Sprintf("the lab's namespaces received %d of the %d packets the machine's CPUs took: all of that time is counted as the lab's", lab, machine)
	}
	share := float64(lab) / float64(machine)
	return share, fmt.Sprintf("the lab's namespaces received %d of the %d packets the machine's CPUs took: %.1f%% of that time is counted as the lab's (other traffic's packets taken to cost what the lab's do)", lab, machine, share*100)
}

// softirqNote says, for the lab's vectors, how much softirq time in %
// of one core ran on the workers' threads, on idle CPUs and on other
// tasks in the meter's windows (on of span), and how many softirqs it
// timed there against those the kernel counted over span.
func softirqNote(d softirqTimes, kb, ka [nrSoftirqs]uint64, on, span time.Duration) string {
	pct := func(t time.Duration) float64 { return t.Seconds() / on.Seconds() * 100 }
	var parts []string
	var seen, counted uint64
	for _, v := range labVecs {
		parts = append(parts, fmt.Sprintf("%v %.1f/%.1f/%.1f", v,
			pct(d[v][classWorker].Time), pct(d[v][classIdle].Time), pct(d[v][classOther].Time)))
	}
	for v := range nrSoftirqs {
		seen += d.count(v)
		counted += kb[v] - ka[v]
	}
	var owned []string
	for _, v := range labVecs {
		if lab, foreign := d[v][classLab].Time, d[v][classForeign].Time; lab+foreign > 0 {
			owned = append(owned, fmt.Sprintf("%v %.1f/%.1f", v, pct(lab), pct(foreign)))
		}
	}
	note := fmt.Sprintf("softirq time timed by eBPF at irq:softirq_entry/exit in windows (%.1f%% of the run: %v each, %v-%v apart), in %% of one core over the windows on the workers' threads/idle CPUs/other tasks: %s (the last two go to cpu_tx_pct and cpu_rx_pct scaled by the lab's share of the packets and by the run's time over the windows')", 100*on.Seconds()/span.Seconds(), sirqWindow, sirqGapMin, sirqGapMax, strings.Join(parts, ", "))
	if len(owned) > 0 {
		note += fmt.Sprintf("; outside the workers' threads, softirqs that handled only the lab's/only other namespaces' packets or network timers: %s (the first counted whole, the second not at all)", strings.Join(owned, ", "))
	}
	return note + fmt.Sprintf("; it timed %d softirqs in its windows, /proc/softirqs counted %d over the run", seen, counted)
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
