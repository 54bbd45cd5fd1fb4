package kernel

import (
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkYielderPass measures what a worker's pass through the Go
// scheduler costs, the way yielder passes (a locked goroutine's
// Gosched) and unlocked from its thread (tried in session 8, and taken
// back: yielder says why): two locked goroutines, as a
// connection's two workers, make system calls (getppid) for a second
// and pass every passEvery, with GOMAXPROCS held as a run holds it:
//
//	go test -run - -bench YielderPass -benchtime 3x ./engine/kernel
//
// pass_us is a pass's wall time (mean, p90, p99): how long the worker's
// data path stops; cpu_us is the CPU the process used per pass outside
// the workers' stretches between passes (the passing thread's scheduler
// and the threads the pass wakes).
func BenchmarkYielderPass(b *testing.B) {
	for _, bc := range []struct {
		name string
		pass func(y *yielder)
	}{
		{"locked", (*yielder).pass},
		{"unlocked", func(y *yielder) {
			y.due = time.Now().Add(passEvery)
			y.meter.stop()
			runtime.UnlockOSThread()
			runtime.Gosched()
			runtime.LockOSThread()
			y.meter.start()
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			release := holdProcs(3) // as a run of one connection holds it
			defer release()
			var walls []time.Duration
			var cpu time.Duration
			for range b.N {
				w, c := passRun(bc.pass, time.Second)
				walls = append(walls, w...)
				cpu += c
			}
			sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
			var sum time.Duration
			for _, w := range walls {
				sum += w
			}
			n := max(len(walls), 1)
			us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
			b.ReportMetric(us(sum/time.Duration(n)), "pass_us_mean")
			b.ReportMetric(us(walls[len(walls)*9/10]), "pass_us_p90")
			b.ReportMetric(us(walls[len(walls)*99/100]), "pass_us_p99")
			b.ReportMetric(us(cpu/time.Duration(n)), "cpu_us")
		})
	}
}

// passRun runs two workers for d and returns each pass's wall time and
// the CPU the process used meanwhile outside the workers' stretches.
func passRun(pass func(*yielder), d time.Duration) (walls []time.Duration, cpu time.Duration) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	var workers time.Duration
	p0 := processCPU()
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var m cpuMeter
			y := yielder{meter: &m, due: time.Now().Add(passEvery)}
			var mine []time.Duration
			m.start()
			for end := time.Now().Add(d); time.Now().Before(end); {
				unix.Getppid()
				if time.Until(y.due) <= 0 {
					t := time.Now()
					pass(&y)
					mine = append(mine, time.Since(t))
				}
			}
			m.stop()
			mu.Lock()
			defer mu.Unlock()
			walls = append(walls, mine...)
			workers += m.used
		}()
	}
	wg.Wait()
	return walls, processCPU() - p0 - workers
}
