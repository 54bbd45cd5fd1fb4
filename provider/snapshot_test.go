package provider_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tsolab/tsolab/provider"
)

// TestSnapshotReadsOnce: concurrent Gets of one key call read once and
// all get its answer (an error too); other keys are read on their own; a
// nil Snapshot reads every time.
func TestSnapshotReadsOnce(t *testing.T) {
	type key struct{ ns string }
	s := provider.NewSnapshot()
	var calls atomic.Int32
	read := func(v string) func() (any, error) {
		return func() (any, error) { calls.Add(1); return v, nil }
	}
	var wg sync.WaitGroup
	got := make([]any, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = s.Get(key{"sw"}, read("dump of sw"))
		}()
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("16 Gets of one key: %d reads, want 1", n)
	}
	for i, v := range got {
		if v != "dump of sw" {
			t.Errorf("Get %d = %v, want %q", i, v, "dump of sw")
		}
	}
	if v, _ := s.Get(key{"other"}, read("dump of other")); v != "dump of other" || calls.Load() != 2 {
		t.Errorf("Get of another key = %v after %d reads, want %q after 2", v, calls.Load(), "dump of other")
	}
	boom := errors.New("interrupted")
	for range 2 {
		if _, err := s.Get(key{"bad"}, func() (any, error) { calls.Add(1); return nil, boom }); !errors.Is(err, boom) {
			t.Errorf("Get of a failed read: err %v, want %v", err, boom)
		}
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("after two Gets of a failed read: %d reads, want 3", n)
	}
	var none *provider.Snapshot
	none.Get(key{"sw"}, read("x"))
	none.Get(key{"sw"}, read("x"))
	if n := calls.Load(); n != 5 {
		t.Errorf("two Gets on a nil Snapshot: %d reads in all, want 5", n)
	}
}
