package once_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsolab/tsolab/once"
)

// TestDoOncePerKey: concurrent Dos of one key call f once and all get its
// answer; another key calls its own f; a failed f's error is kept too.
func TestDoOncePerKey(t *testing.T) {
	var m once.Map[string, int]
	var calls atomic.Int32
	f := func(v int) func() (int, error) {
		return func() (int, error) { calls.Add(1); return v, nil }
	}
	var wg sync.WaitGroup
	got := make([]int, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = m.Do("sw", f(7))
		}()
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("16 Dos of one key: %d calls, want 1", n)
	}
	for i, v := range got {
		if v != 7 {
			t.Errorf("Do %d = %d, want 7", i, v)
		}
	}
	if v, _ := m.Do("other", f(8)); v != 8 || calls.Load() != 2 {
		t.Errorf("Do of another key = %d after %d calls, want 8 after 2", v, calls.Load())
	}
	boom := errors.New("unreachable")
	for range 2 {
		if _, err := m.Do("bad", func() (int, error) { calls.Add(1); return 0, boom }); !errors.Is(err, boom) {
			t.Errorf("Do of a failed f: err %v, want %v", err, boom)
		}
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("after two Dos of a failed f: %d calls, want 3", n)
	}
}

// TestDoKeysInParallel: a slow f of one key does not hold up another
// key's Do.
func TestDoKeysInParallel(t *testing.T) {
	var m once.Map[string, int]
	release := make(chan struct{})
	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Do("slow", func() (int, error) { close(started); <-release; return 1, nil })
	}()
	<-started
	fast := make(chan int)
	go func() {
		v, _ := m.Do("fast", func() (int, error) { return 2, nil })
		fast <- v
	}()
	select {
	case v := <-fast:
		if v != 2 {
			t.Errorf("fast key = %d, want 2", v)
		}
	case <-time.After(10 * time.Second):
		t.Error("a Do of another key waited for the slow key's f")
	}
	close(release)
	<-done
}
