package planner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/provider"
)

// stateWriter owns the state during an apply. Workers record every change
// through it: Record, RecordAll, Forget and Replace return once a state
// file holding the change is on disk; Note and NoteForget return at once,
// and their change goes to disk with the next of those writes, or Close.
// Its first write keeps the state file it replaces as BackupPath, as
// Terraform keeps terraform.tfstate.backup. Changes that finish while a
// write is in flight are written together by the next write (group
// commit), so parallel changes do not queue behind one fsync each. Each
// record is encoded once per change and kept (encodedState), so a write
// of a large lab's state costs the records that changed, not all of them.
// After close it refuses writes.
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
	// enc holds the encoded records of st, and where each is in
	// st.Resources. Guarded by mu.
	enc encodedState
	// declared are the machines the lab declares (Plan.Machines), whose
	// record stays in the state while it has no object there.
	declared map[string]config.Reach
}

func newStateWriter(dir string, st *State) *stateWriter {
	w := &stateWriter{dir: dir, st: st, enc: encodedState{records: map[provider.Addr]encodedRecord{}}}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// Record stores r, replacing the earlier record of its address, and
// writes the state.
func (w *stateWriter) Record(r ResourceState) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkOpenLocked()
	w.enc.set(w.st, r)
	w.version++
	return w.flushLocked()
}

// RecordAll stores every record of rs, as Record does, and writes the
// state once.
func (w *stateWriter) RecordAll(rs []ResourceState) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkOpenLocked()
	for _, r := range rs {
		w.enc.set(w.st, r)
	}
	w.version++
	return w.flushLocked()
}

// Note stores r, replacing the earlier record of its address, without
// waiting for a write: r reaches the disk with the next write (Record,
// RecordAll, Forget, Replace) or Close. For a change whose loss in a
// crash the next refresh repairs.
func (w *stateWriter) Note(r ResourceState) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkOpenLocked()
	w.enc.set(w.st, r)
	w.version++
}

// NoteForget drops the record of addr without waiting for a write, as
// Note stores one.
func (w *stateWriter) NoteForget(addr provider.Addr) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkOpenLocked()
	w.forgetLocked(addr)
	w.version++
}

// Forget drops the record of addr and writes the state.
func (w *stateWriter) Forget(addr provider.Addr) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkOpenLocked()
	w.forgetLocked(addr)
	w.version++
	return w.flushLocked()
}

// forgetLocked drops the record of addr, and the state's record of its
// machine when no other record names it and the lab no longer declares
// it (a declared machine stays: a replace deletes an object before
// making it again there).
// Precondition: w.mu is held.
func (w *stateWriter) forgetLocked(addr provider.Addr) {
	m := w.enc.remove(w.st, addr)
	if _, declared := w.declared[m]; m != "" && !declared {
		w.st.dropMachine(m)
	}
}

// Replace swaps the whole state for st and writes it.
func (w *stateWriter) Replace(st *State) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkOpenLocked()
	st.Serial = w.st.Serial
	w.st = st
	w.enc = encodedState{records: map[provider.Addr]encodedRecord{}}
	w.version++
	return w.flushLocked()
}

// Lookup returns a copy of the record of addr, or nil.
func (w *stateWriter) Lookup(addr provider.Addr) *ResourceState {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.enc.lookup(w.st, addr)
	if r == nil {
		return nil
	}
	c := *r
	c.Attrs = r.Attrs.Clone()
	return &c
}

// Close writes what was noted and not yet written, stops further writes
// and returns a copy of the final state and the number of state files
// written; err is the final write's failure.
func (w *stateWriter) Close() (st *State, writes int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkOpenLocked()
	err = w.flushLocked()
	for w.writing {
		w.cond.Wait()
	}
	w.closed = true
	st = w.st.Clone()
	st.sortResources()
	return st, w.writes, err
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
		head, recs, err := w.enc.snapshot(w.st)
		backup := !w.backedUp
		w.mu.Unlock()
		if err == nil && backup {
			err = backupState(w.dir)
		}
		if err == nil {
			err = writeEncodedState(w.dir, head, recs)
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

// encodedState keeps each record of a state encoded as it appears in the
// state file (json.MarshalIndent of the whole state), so that writing the
// state encodes only the records changed since the last write.
type encodedState struct {
	records map[provider.Addr]encodedRecord // by address; cleared on change
	index   map[provider.Addr]int           // position in State.Resources; nil = rebuild
}

type encodedRecord struct {
	key  string // Addr.String(), the sort key
	json []byte // never modified once made
}

// set records r in st, as State.set does, forgetting r's old encoding.
func (e *encodedState) set(st *State, r ResourceState) {
	delete(e.records, r.Addr)
	if i, ok := e.indexOf(st, r.Addr); ok {
		st.Resources[i] = r
		return
	}
	st.Resources = append(st.Resources, r)
	e.index[r.Addr] = len(st.Resources) - 1
}

// remove drops the record of addr from st and returns its machine, as
// State.remove does, but moves the last record into its place (the
// writer's records are sorted only when written), so that a destroy's
// thousand removals shift nothing and rebuild no index.
func (e *encodedState) remove(st *State, addr provider.Addr) (machine string) {
	delete(e.records, addr)
	i, ok := e.indexOf(st, addr)
	if !ok {
		return ""
	}
	machine = st.Resources[i].Attrs[provider.AttrMachine]
	last := len(st.Resources) - 1
	if i != last {
		st.Resources[i] = st.Resources[last]
		e.index[st.Resources[i].Addr] = i
	}
	st.Resources[last] = ResourceState{}
	st.Resources = st.Resources[:last]
	delete(e.index, addr)
	return machine
}

// lookup is st.Resource(addr) through the index.
func (e *encodedState) lookup(st *State, addr provider.Addr) *ResourceState {
	if i, ok := e.indexOf(st, addr); ok {
		return &st.Resources[i]
	}
	return nil
}

func (e *encodedState) indexOf(st *State, addr provider.Addr) (int, bool) {
	if e.index == nil {
		e.index = make(map[provider.Addr]int, len(st.Resources))
		for i, r := range st.Resources {
			e.index[r.Addr] = i
		}
	}
	i, ok := e.index[addr]
	return i, ok
}

// snapshot returns what writeEncodedState needs to write st as it is
// now: the state's own fields encoded, and its records' encodings sorted
// by address (as State.sortResources orders them).
func (e *encodedState) snapshot(st *State) (head []byte, recs [][]byte, err error) {
	h := *st
	h.Resources = nil
	if len(st.Resources) == 0 {
		h.Resources = st.Resources // null or [], as json writes it
	}
	if head, err = json.MarshalIndent(&h, "", "  "); err != nil {
		return nil, nil, err
	}
	if len(st.Resources) == 0 {
		return head, nil, nil
	}
	all := make([]encodedRecord, 0, len(st.Resources))
	for i := range st.Resources {
		r := &st.Resources[i]
		er, ok := e.records[r.Addr]
		if !ok {
			c := *r
			if len(c.DependsOn) == 0 {
				c.DependsOn = nil // as State.Clone makes it
			}
			b, err := json.MarshalIndent(&c, "    ", "  ")
			if err != nil {
				return nil, nil, err
			}
			er = encodedRecord{key: r.Addr.String(), json: b}
			e.records[r.Addr] = er
		}
		all = append(all, er)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].key < all[j].key })
	recs = make([][]byte, len(all))
	for i, er := range all {
		recs[i] = er.json
	}
	return head, recs, nil
}

// writeEncodedState writes the state snapshot made: head (the state's
// encoding without records, ending in "null\n}") with recs as its
// resources, byte for byte what writeState writes for the same state.
func writeEncodedState(dir string, head []byte, recs [][]byte) error {
	b := append(head, '\n')
	if len(recs) > 0 {
		b = joinRecords(head, recs)
	}
	if err := writeStateFile(dir, StatePath(dir), b); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return nil
}

// joinRecords puts recs in head as the state's resources.
func joinRecords(head []byte, recs [][]byte) []byte {
	const tail = "null\n}"
	if !bytes.HasSuffix(head, []byte(tail)) {
		panic("planner: the state's fields do not end with its resources")
	}
	n := len(head) + 16
	for _, r := range recs {
		n += len(r) + 6
	}
	b := make([]byte, 0, n)
	b = append(b, head[:len(head)-len(tail)]...)
	b = append(b, "[\n    "...)
	for i, r := range recs {
		if i > 0 {
			b = append(b, ",\n    "...)
		}
		b = append(b, r...)
	}
	return append(b, "\n  ]\n}\n"...)
}
