package devqueue

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"
)

// recorder reads the program's records from the ring buffer and hands
// them to the sink, from startRecorder until stop. The program wakes no
// reader (BPF_RB_NO_WAKEUP: a wake-up per record cost more than the
// record at hundreds of thousands a second), so the reader drains the
// ring every pollInterval.
type recorder struct {
	rb   *ebpf.Map
	rd   *ringbuf.Reader
	sink Sink
	// wallOffset turns the program's CLOCK_MONOTONIC times into wall
	// clock times: wall = monotonic + wallOffset.
	wallOffset time.Duration
	stopc      chan struct{} // closed by stop: drain once more and end
	done       chan struct{}

	// Written by the reader goroutine only, read after done is closed.
	recorded, data int64
	err            error
}

// pollInterval is how often the reader drains the ring buffer. RingBytes
// holds ~90k records: at the ~900k records a second of a TSO-off
// receiver at MTU 1500, 100 ms, fifty polls.
const pollInterval = 2 * time.Millisecond

func startRecorder(rb *ebpf.Map, sink Sink) (*recorder, error) {
	rd, err := ringbuf.NewReader(rb)
	if err != nil {
		return nil, fmt.Errorf("read the record ring buffer: %w", err)
	}
	var mono unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono); err != nil {
		rd.Close()
		return nil, fmt.Errorf("clock_gettime(CLOCK_MONOTONIC): %w", err)
	}
	// A deadline in the past: ReadInto returns what is there, then
	// os.ErrDeadlineExceeded, and never waits for a wake-up.
	rd.SetDeadline(time.Unix(1, 0))
	r := &recorder{
		rb: rb, rd: rd, sink: sink,
		wallOffset: time.Duration(time.Now().UnixNano() - mono.Nano()),
		stopc:      make(chan struct{}),
		done:       make(chan struct{}),
	}
	go r.read()
	return r, nil
}

// read hands every record to the sink, draining the ring every
// pollInterval, until a drain after stop or a failure.
func (r *recorder) read() {
	defer close(r.done)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	stopping := false
	var rec ringbuf.Record
	for {
		err := r.rd.ReadInto(&rec)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if stopping {
				return
			}
			select {
			case <-r.stopc:
				stopping = true
			case <-tick.C:
			}
			continue
		}
		if err != nil {
			r.err = fmt.Errorf("read the record ring buffer: %w", err)
			return
		}
		if r.err != nil {
			continue // the sink failed: drain without writing
		}
		ts, data, wireLen, payload, toWatched, ok := parseRecord(rec.RawSample)
		if !ok {
			r.err = fmt.Errorf("record of %d bytes, want %d", len(rec.RawSample), recordSize)
			continue
		}
		if err := r.sink.Frame(time.Unix(0, ts+int64(r.wallOffset)), data, wireLen); err != nil {
			r.err = err
			continue
		}
		r.recorded++
		if payload > 0 && toWatched {
			r.data++
		}
	}
}

// stop drains the records written before the call (the program is
// detached by then), ends the reader and frees the ring buffer.
func (r *recorder) stop() (recorded, data int64, err error) {
	close(r.stopc)
	<-r.done
	r.rd.Close()
	r.rb.Close()
	return r.recorded, r.data, r.err
}

// parseRecord splits a record the program wrote; toWatched says the
// packet went to a watched port (counted), not from one.
func parseRecord(b []byte) (ts int64, header []byte, wireLen, payload int, toWatched, ok bool) {
	if len(b) < recordSize {
		return 0, nil, 0, 0, false, false
	}
	ne := binary.NativeEndian
	caplen := min(int(ne.Uint32(b[recCapLen:])), HeaderMax)
	return int64(ne.Uint64(b[recTime:])), b[recHeader : recHeader+caplen],
		int(ne.Uint32(b[recLen:])), int(int32(ne.Uint32(b[recPayload:]))), ne.Uint32(b[recFlag:]) != 0, true
}
