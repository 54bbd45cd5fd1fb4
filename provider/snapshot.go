package provider

import "github.com/tsolab/tsolab/once"

// Snapshot is what the reads of one refresh read once and share
// (ReadRequest.Snapshot). The planner makes one per refresh and drops it
// when the refresh is done, so nothing read into it outlives the reads
// it answers; changes never use one, and it never crosses to another
// process (remote.ReadCall leaves it out). Safe for concurrent use.
type Snapshot struct {
	reads once.Map[any, any]
}

// NewSnapshot returns an empty snapshot for one refresh.
func NewSnapshot() *Snapshot { return &Snapshot{} }

// Get returns what read returned for key, calling read for the first Get
// of key only; the Gets of key made meanwhile wait for it. On a nil
// Snapshot it calls read every time. key must be comparable: a type of
// the provider's own, so that two providers' keys never meet.
func (s *Snapshot) Get(key any, read func() (any, error)) (any, error) {
	if s == nil {
		return read()
	}
	return s.reads.Do(key, read)
}
