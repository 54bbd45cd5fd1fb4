package kernel

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/config"
)

// defaultWriteSize is the write size when the workload gives none.
const defaultWriteSize = 65536

// recvBufSize is what a receiver asks for per read (iperf3 reads 128 KiB too).
const recvBufSize = 128 << 10

// limits says when a sending loop ends: at a deadline, after a byte count,
// or both (whichever comes first).
type limits struct {
	deadline time.Time // zero = none
	bytes    int64     // per connection; 0 = none
}

func (l limits) done(sent int64) bool {
	if l.bytes > 0 && sent >= l.bytes {
		return true
	}
	return !l.deadline.IsZero() && !time.Now().Before(l.deadline)
}

func (r *run) limits() limits {
	var l limits
	if r.w.Duration > 0 {
		l.deadline = time.Now().Add(r.w.Duration)
	}
	l.bytes = r.w.Bytes
	return l
}

// spawnWorkers starts a sending and a receiving thread per connection;
// they wait for r.startc.
func (r *run) spawnWorkers() error {
	ws := r.w.WriteSize
	if ws <= 0 {
		ws = defaultWriteSize
	}
	if r.w.Duration <= 0 && r.w.Bytes <= 0 && !(r.w.Kind == config.Sendfile && r.w.FileSize > 0) {
		return errors.New("neither duration nor bytes is set: give one")
	}
	// Check everything before the first worker starts waiting.
	switch r.w.Kind {
	case config.Stream, config.Sendfile:
	case config.RR:
		if r.w.RequestSize <= 0 || r.w.ResponseSize <= 0 {
			return fmt.Errorf("rr needs request_size and response_size > 0 (got %d and %d)", r.w.RequestSize, r.w.ResponseSize)
		}
	default:
		return fmt.Errorf("unknown workload kind %q: use stream, rr or sendfile", r.w.Kind)
	}
	for _, c := range r.conns {
		c := c
		switch r.w.Kind {
		case config.Stream:
			r.spawn(sideTx, func() error { return streamSend(c.client, ws, r.limits()) })
			r.spawn(sideRx, func() error { return drain(c.server, c) })
		case config.Sendfile:
			size := r.w.FileSize
			r.spawn(sideTx, func() error {
				l := r.limits()
				if l.deadline.IsZero() && l.bytes == 0 {
					l.bytes = size
				}
				return sendFile(c.client, r.file, size, l)
			})
			r.spawn(sideRx, func() error { return drain(c.server, c) })
		case config.RR:
			req, resp := r.w.RequestSize, r.w.ResponseSize
			r.spawn(sideTx, func() error {
				lat, err := rrClient(c.client, req, resp, r.limits(), c)
				r.mu.Lock()
				r.lat = append(r.lat, lat...)
				r.mu.Unlock()
				return err
			})
			r.spawn(sideRx, func() error { return rrServer(c.server, req, resp, c) })
		}
	}
	return nil
}

// streamSend writes ws-byte buffers until the limits, then half-closes.
func streamSend(fd, ws int, l limits) error {
	buf := make([]byte, ws)
	for i := range buf {
		buf[i] = byte(i)
	}
	var sent int64
	for !l.done(sent) {
		b := buf
		if l.bytes > 0 && l.bytes-sent < int64(len(b)) {
			b = b[:l.bytes-sent]
		}
		n, err := unix.Write(fd, b)
		if n > 0 {
			sent += int64(n)
		}
		if err != nil && !retryable(err) {
			return fmt.Errorf("write: %w", err)
		}
	}
	return shutdownWrite(fd)
}

// sendFile sends the file with sendfile(2), from the start again each
// time it ends, until the limits, then half-closes.
func sendFile(fd int, f *os.File, size int64, l limits) error {
	in := int(f.Fd())
	var sent, off int64
	for !l.done(sent) {
		if off >= size {
			off = 0
		}
		count := size - off
		if l.bytes > 0 && l.bytes-sent < count {
			count = l.bytes - sent
		}
		if count > 1<<30 {
			count = 1 << 30
		}
		n, err := unix.Sendfile(fd, in, &off, int(count))
		if n > 0 {
			sent += int64(n)
		}
		if err != nil && !retryable(err) {
			return fmt.Errorf("sendfile: %w", err)
		}
	}
	return shutdownWrite(fd)
}

func shutdownWrite(fd int) error {
	if err := unix.Shutdown(fd, unix.SHUT_WR); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// drain reads until the peer half-closes, counting bytes on c.
func drain(fd int, c *conn) error {
	buf := make([]byte, recvBufSize)
	for {
		n, err := unix.Read(fd, buf)
		if n > 0 {
			c.received.Add(int64(n))
		}
		switch {
		case err != nil && retryable(err):
			continue
		case err != nil:
			return fmt.Errorf("read: %w", err)
		case n == 0:
			return nil
		}
	}
}

// readFull reads exactly len(b) bytes; io.EOF when the peer closed before
// the first byte.
func readFull(fd int, b []byte, c *conn) error {
	got := 0
	for got < len(b) {
		n, err := unix.Read(fd, b[got:])
		if n > 0 {
			got += n
			c.received.Add(int64(n))
		}
		switch {
		case err != nil && retryable(err):
			continue
		case err != nil:
			return fmt.Errorf("read: %w", err)
		case n == 0 && got == 0:
			return io.EOF
		case n == 0:
			return fmt.Errorf("read: connection closed after %d of %d bytes", got, len(b))
		}
	}
	return nil
}

func writeFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if n > 0 {
			b = b[n:]
		}
		if err != nil && !retryable(err) {
			return fmt.Errorf("write: %w", err)
		}
	}
	return nil
}

// rrClient runs transactions (a request out, the whole response back)
// until the limits, and returns each transaction's latency. bytes limits
// count request and response payload.
func rrClient(fd, reqSize, respSize int, l limits, c *conn) ([]time.Duration, error) {
	req := make([]byte, reqSize)
	resp := make([]byte, respSize)
	lat := make([]time.Duration, 0, 1<<14)
	var moved int64
	for !l.done(moved) {
		t := time.Now()
		if err := writeFull(fd, req); err != nil {
			return lat, err
		}
		if err := readFull(fd, resp, c); err != nil {
			if errors.Is(err, io.EOF) {
				return lat, errors.New("server closed the connection mid-transaction")
			}
			return lat, err
		}
		lat = append(lat, time.Since(t))
		moved += int64(reqSize + respSize)
	}
	return lat, shutdownWrite(fd)
}

// rrServer answers every request with a response until the client
// half-closes.
func rrServer(fd, reqSize, respSize int, c *conn) error {
	req := make([]byte, reqSize)
	resp := make([]byte, respSize)
	for {
		if err := readFull(fd, req, c); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := writeFull(fd, resp); err != nil {
			return err
		}
	}
}

// makeFile writes the sendfile source: file_size bytes of a pattern, so
// the page cache holds real pages.
func (r *run) makeFile() error {
	size := r.w.FileSize
	if size <= 0 {
		return errors.New("sendfile needs file_size > 0")
	}
	f, err := os.CreateTemp(r.eng.opts.TempDir, "tsolab-sendfile-*")
	if err != nil {
		return fmt.Errorf("sendfile source: %w", err)
	}
	r.file = f
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i * 7)
	}
	for left := size; left > 0; {
		b := chunk
		if left < int64(len(b)) {
			b = b[:left]
		}
		n, err := f.Write(b)
		if err != nil {
			return fmt.Errorf("sendfile source %s: %w", f.Name(), err)
		}
		left -= int64(n)
	}
	return nil
}
