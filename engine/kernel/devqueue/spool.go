package devqueue

import (
	"fmt"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// SpoolBytes is the memory of a counter's spool, which keeps the records
// the reader took from the rings until the counter stops: what a
// receiver's rings cannot hold while a run goes on (IngressRingBytes
// holds a 2 s TSO-off run of examples/tso-basics), ~800k records of
// Ethernet, IPv4 and TCP headers (84 bytes each, short records rebuilt
// as full ones) of a longer run. Populating it takes ~20-60 ms (0.25-0.96 ns a
// byte here, load 10) before the run.
const SpoolBytes = 64 << 20

// spoolChunk is the spool's unit: when the spool is full, the reader
// hands the oldest chunks' records to the sink (~40k records a chunk, a
// few milliseconds) and fills them again.
const spoolChunk = 4 << 20

// spoolsMax bounds the memory of all the spools of the process (sixteen
// spools: a lab with more captured NICs than fit captures the others
// without one).
const spoolsMax = 1 << 30

// spoolsMapped is the memory of the spools of the process.
var spoolsMapped atomic.Int64

// A spool keeps records in time order, back to back (each as long as
// its header and captured bytes), in anonymous memory mapped and
// populated when the recorder starts. It exists so that the reader's
// work while a workload runs is a copy into memory already there: the
// merge is done as the records are copied, and the encoding and the
// file's write(2) (about half the reader's CPU time a record, much of
// it the kernel's page allocation for the file; a copy into memory not
// populated beforehand pays for its pages too: 42 ns a 104-byte record
// against 15 into populated memory, here) wait until the recorder
// stops, after the run's measurements. A run longer than the spool
// holds writes the file while it runs once the spool is full: the
// reader then hands two chunks to the sink for each one it starts
// filling, so that the spool empties while the run goes on (see room),
// and from then on hands each record on as it reads it.
type spool struct {
	mem []byte
	// full is set once the spool had no room: from then on it only
	// empties.
	full bool
	// chunks are the chunks holding records, oldest first; the last is
	// the one being filled. Each one's length is what it holds.
	chunks [][]byte
	free   [][]byte // empty chunks
}

// newSpool maps and populates bytes of memory (rounded down to whole
// chunks of chunk bytes, at least one) for a spool, unless the process's
// spools would then take more than spoolsMax.
func newSpool(bytes, chunk int) (*spool, error) {
	n := max(bytes/chunk, 1)
	if spoolsMapped.Add(int64(n*chunk)) > spoolsMax {
		spoolsMapped.Add(-int64(n * chunk))
		return nil, fmt.Errorf("the record spools of this process already take %d MB", spoolsMax>>20)
	}
	mem, err := unix.Mmap(-1, 0, n*chunk, unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		spoolsMapped.Add(-int64(n * chunk))
		return nil, fmt.Errorf("map %d bytes for the record spool: %w", n*chunk, err)
	}
	s := &spool{mem: mem, free: make([][]byte, 0, n), chunks: make([][]byte, 0, n)}
	for i := n - 1; i >= 0; i-- {
		s.free = append(s.free, mem[i*chunk:i*chunk:(i+1)*chunk])
	}
	return s, nil
}

// room is where the next record goes: recordSize bytes at the spool's
// end, to be kept with keep. When a new chunk is needed and none is
// free, the spool is full: the two oldest chunks' records go to hand,
// and from then on two chunks go to hand for each one started.
func (s *spool) room(hand func(rec []byte)) []byte {
	if n := len(s.chunks); n > 0 {
		if c := s.chunks[n-1]; cap(c)-len(c) >= recordSize {
			return c[len(c) : len(c)+recordSize]
		}
	}
	if len(s.free) == 0 {
		s.full = true
	}
	if s.full {
		// Every chunk held is whole: the last one has no room.
		s.each(hand)
		s.each(hand)
	}
	c := s.free[len(s.free)-1]
	s.free = s.free[:len(s.free)-1]
	s.chunks = append(s.chunks, c)
	return c[:recordSize]
}

// emptied says the spool was full and holds at most the chunk it fills:
// the reader hands the rest on and goes on without it.
func (s *spool) emptied() bool { return s.full && len(s.chunks) <= 1 }

// keep keeps the n bytes room returned last, filled, as a record.
func (s *spool) keep(n int) {
	last := &s.chunks[len(s.chunks)-1]
	*last = (*last)[:len(*last)+n]
}

// each hands the records of the oldest chunk to fn, oldest first, and
// frees the chunk; it returns false when the spool is empty.
func (s *spool) each(fn func(rec []byte)) bool {
	if len(s.chunks) == 0 {
		return false
	}
	c := s.chunks[0]
	s.chunks = append(s.chunks[:0], s.chunks[1:]...)
	for b := c; len(b) > 0; {
		n := recHeader + min(int(b[recCapLen]), HeaderMax)
		fn(b[:n])
		b = b[n:]
	}
	s.free = append(s.free, c[:0])
	return true
}

func (s *spool) close() {
	unix.Munmap(s.mem)
	spoolsMapped.Add(-int64(len(s.mem)))
}
