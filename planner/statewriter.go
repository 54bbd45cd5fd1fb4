package planner

import (
	"sync"

	"github.com/tsolab/tsolab/provider"
)

// stateWriter owns the state during an apply. Workers record every change
// through it; each call returns once a state file holding the change is on
// disk. Its first write keeps the state file it replaces as
// BackupPath, as Terraform keeps terraform.tfstate.backup. Changes that finish while a write is in flight are written
// together by the next write (group commit), so parallel changes do not
// queue behind one fsync each. After close it refuses writes.
type stateWriter struct {
	dir string

	mu      sync.Mutex
	cond    *sync.Cond // signalled when a write finishes; uses mu
	st      *State     // guarded by mu
	version uint64     // modifications made to st; guarded by mu
	written uint64     // modifications known to be on disk; guarded by mu
	writing bool       // a write is in flight; guarded by mu
	writes  int        // state files written; guarded by mu
	// backedUp: the state file as it was before the first write is in
	// BackupPath. Guarded by mu.
	backedUp bool
	closed   bool // guarded by mu
}

func newStateWriter(dir string, st *State) *stateWriter {
	w := &stateWriter{dir: dir, st: st}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// Record stores r, replacing the earlier record of its address, and
// writes the state.
func (w *stateWriter) Record(r ResourceState) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkOpenLocked()
	w.st.set(r)
	w.version++
	return w.flushLocked()
}

// Forget drops the record of addr and writes the state.
func (w *stateWriter) Forget(addr provider.Addr) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkOpenLocked()
	w.st.remove(addr)
	w.version++
	return w.flushLocked()
}

// Replace swaps the whole state for st and writes it.
func (w *stateWriter) Replace(st *State) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkOpenLocked()
	st.Serial = w.st.Serial
	w.st = st
	w.version++
	return w.flushLocked()
}

// Lookup returns a copy of the record of addr, or nil.
func (w *stateWriter) Lookup(addr provider.Addr) *ResourceState {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.st.Resource(addr)
	if r == nil {
		return nil
	}
	c := *r
	c.Attrs = r.Attrs.Clone()
	return &c
}

// Close stops further writes and returns a copy of the final state and the
// number of state files written.
func (w *stateWriter) Close() (*State, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.writing {
		w.cond.Wait()
	}
	w.closed = true
	st := w.st.Clone()
	st.sortResources()
	return st, w.writes
}

// checkOpenLocked panics when the writer was closed: a change recorded
// after the walk ended is a bug in the walk.
// Precondition: w.mu is held.
func (w *stateWriter) checkOpenLocked() {
	if w.closed {
		panic("planner: state written after the apply finished")
	}
}

// flushLocked returns once every modification made so far is on disk,
// writing the state itself unless another caller's write in flight will
// be followed by one that includes it.
// Precondition: w.mu is held; it is released while writing and held again
// on return.
func (w *stateWriter) flushLocked() error {
	want := w.version
	for w.written < want {
		if w.writing {
			w.cond.Wait()
			continue
		}
		w.writing = true
		upTo := w.version
		w.st.Serial++
		snap := w.st.Clone()
		snap.sortResources()
		backup := !w.backedUp
		w.mu.Unlock()
		var err error
		if backup {
			err = backupState(w.dir)
		}
		if err == nil {
			err = writeState(w.dir, snap)
		}
		w.mu.Lock()
		if err == nil && backup {
			w.backedUp = true
		}
		w.writing = false
		w.cond.Broadcast()
		if err != nil {
			w.st.Serial--
			return err
		}
		w.writes++
		w.written = upTo
	}
	return nil
}
