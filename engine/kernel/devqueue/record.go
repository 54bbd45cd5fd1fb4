package devqueue

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"
)

// recorder reads the program's records from the ring buffer and hands
// them to the sink, from startRecorder until stop.
type recorder struct {
	rb   *ebpf.Map
	rd   *ringbuf.Reader
	sink Sink
	// wallOffset turns the program's CLOCK_MONOTONIC times into wall
	// clock times: wall = monotonic + wallOffset.
	wallOffset time.Duration
	done       chan struct{}

	// Written by the reader goroutine only, read after done is closed.
	recorded, data int64
	err            error
}

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
	r := &recorder{
		rb: rb, rd: rd, sink: sink,
		wallOffset: time.Duration(time.Now().UnixNano() - mono.Nano()),
		done:       make(chan struct{}),
	}
	go r.read()
	return r, nil
}

// read hands every record to the sink until the reader is flushed and
// empty (stop) or fails.
func (r *recorder) read() {
	defer close(r.done)
	var rec ringbuf.Record
	for {
		err := r.rd.ReadInto(&rec)
		if errors.Is(err, ringbuf.ErrFlushed) || errors.Is(err, ringbuf.ErrClosed) {
			return
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

// stop waits for the records written before the call (the program is
// detached by then), ends the reader and frees the ring buffer.
func (r *recorder) stop() (recorded, data int64, err error) {
	ferr := r.rd.Flush()
	if ferr != nil {
		r.rd.Close()
	}
	<-r.done
	r.rd.Close()
	r.rb.Close()
	return r.recorded, r.data, errors.Join(r.err, ferr)
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
