package provider

import "sync"

// Snapshot is what the reads of one refresh read once and share
// (ReadRequest.Snapshot). The planner makes one per refresh and drops it
// when the refresh is done, so nothing read into it outlives the reads
// it answers; changes never use one, and it never crosses to another
// process (remote.ReadCall leaves it out). Safe for concurrent use.
type Snapshot struct {
	mu      sync.Mutex
	entries map[any]*snapshotEntry
}

type snapshotEntry struct {
	once sync.Once
	v    any
	err  error
}

// NewSnapshot returns an empty snapshot for one refresh.
func NewSnapshot() *Snapshot { return &Snapshot{entries: map[any]*snapshotEntry{}} }

// Get returns what read returned for key, calling read for the first Get
// of key only; the Gets of key made meanwhile wait for it. On a nil
// Snapshot it calls read every time. key must be comparable: a type of
// the provider's own, so that two providers' keys never meet.
func (s *Snapshot) Get(key any, read func() (any, error)) (any, error) {
	if s == nil {
		return read()
	}
	s.mu.Lock()
	e := s.entries[key]
	if e == nil {
		e = &snapshotEntry{}
		s.entries[key] = e
	}
	s.mu.Unlock()
	e.once.Do(func() { e.v, e.err = read() })
	return e.v, e.err
}
