package capture

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gopacket/gopacket/afpacket"
)

// Options configure a capture.
type Options struct {
	// Interface is the NIC to tap, in the namespace of the thread that
	// calls Open.
	Interface string
	// DstPorts select the measured direction: outgoing TCP packets to one
	// of these ports (the servers') are the send units. Other outgoing TCP
	// packets are only counted, for the check against tx_packets.
	DstPorts []uint16
	// Start is the time second 0 of the per-second series begins.
	Start time.Time
	// RingBytes is the size of the ring; 0 = DefaultRingBytes.
	RingBytes int
	// Direction is which packets the ring keeps (Outgoing: the send
	// units; Incoming: what a receiver's NIC hands up). DstPorts select
	// the measured direction in both.
	Direction Direction
	// Sink, when not nil, gets every frame the ring stored, in order,
	// synchronously on the reader's goroutine (see Sink).
	Sink Sink
}

// Sink receives the frames of a ring. Frame is called on the reader's
// goroutine for every frame the ring stored, one at a time; data is the
// ring's own memory, truncated to Snaplen, and is valid only until Frame
// returns (the next read hands the slot back to the kernel), so a sink
// that keeps it must copy it. wireLen is the packet's whole length
// (tp_len). A sink that returns an error gets no more frames; Stop
// returns the error.
type Sink interface {
	Frame(ts time.Time, data []byte, wireLen int) error
}

const (
	// DefaultRingBytes holds ~300k headers-only frames: several hundred
	// ms of line rate at MTU 1500 on veth even if the reader stalls.
	DefaultRingBytes = 64 << 20
	blockBytes       = 1 << 20
	// blockTimeout is tp_retire_blk_tov: a partly filled block goes to
	// the reader after this long.
	blockTimeout = 8 * time.Millisecond
	pollTimeout  = 20 * time.Millisecond
	// maxPayload bounds the payload histogram (BIG TCP stays below).
	maxPayload = 512 << 10
)

// Capture is a running tap on one interface. Its reader runs on its own
// goroutine from Open until Stop.
type Capture struct {
	tp    *afpacket.TPacket
	opts  Options
	ports map[uint16]bool
	// armed is when the filter was attached: an earlier frame in the
	// ring passed no filter and is skipped.
	armed time.Time

	stopOnce sync.Once
	stopc    chan time.Time // receives the time Stop was called
	done     chan struct{}

	// Written by the reader goroutine only, read after done is closed.
	sizes     map[int]int64 // payload bytes -> send units
	perSecond []Second
	otherOut  int64 // TCP packets not to DstPorts, or without payload
	bad       int64 // frames that did not parse
	readErr   error
	sinkErr   error
	written   int64 // frames handed to the sink
	readerCPU time.Duration
}

// Second is what one second of the capture saw of the measured direction.
type Second struct {
	SendUnits    int64
	PayloadBytes int64
}

// Open creates the ring on opts.Interface and starts reading. It must be
// called on a thread inside the interface's network namespace (the packet
// socket and the interface lookup belong to the caller's namespace); the
// reader itself may run anywhere.
func Open(opts Options) (*Capture, error) {
	ring := opts.RingBytes
	if ring <= 0 {
		ring = DefaultRingBytes
	}
	blocks := ring / blockBytes
	if blocks < 2 {
		blocks = 2
	}
	tp, err := afpacket.NewTPacket(
		afpacket.OptInterface(opts.Interface),
		afpacket.TPacketVersion3,
		afpacket.OptFrameSize(256),
		afpacket.OptBlockSize(blockBytes),
		afpacket.OptNumBlocks(blocks),
		afpacket.OptBlockTimeout(blockTimeout),
		afpacket.OptPollTimeout(pollTimeout),
	)
	if err != nil {
		return nil, fmt.Errorf("capture on %s: AF_PACKET TPACKET_V3 ring: %w", opts.Interface, err)
	}
	prog, err := filter(opts.Direction)
	if err != nil {
		tp.Close()
		panic(fmt.Sprintf("capture filter does not assemble: %v", err))
	}
	if err := tp.SetBPF(prog); err != nil {
		tp.Close()
		return nil, fmt.Errorf("capture on %s: attach BPF filter: %w", opts.Interface, err)
	}
	// Frames that arrived before the filter was attached are not ours:
	// their statistics are reset here, and read skips the frames
	// themselves by their timestamp (the ring holds them until read).
	armed := time.Now()
	if err := tp.InitSocketStats(); err != nil {
		tp.Close()
		return nil, fmt.Errorf("capture on %s: reset ring statistics: %w", opts.Interface, err)
	}
	c := &Capture{
		tp:    tp,
		opts:  opts,
		ports: map[uint16]bool{},
		stopc: make(chan time.Time, 1),
		done:  make(chan struct{}),
		armed: armed,
		sizes: map[int]int64{},
	}
	for _, p := range opts.DstPorts {
		c.ports[p] = true
	}
	go c.read()
	return c, nil
}

// read drains the ring until Stop, then until the ring has been quiet
// for two block timeouts past the stop (every block the kernel filled
// before the stop has retired by then).
func (c *Capture) read() {
	defer close(c.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU()
	defer func() { c.readerCPU = threadCPU() - cpu0 }()
	var stopAt time.Time
	for {
		data, ci, err := c.tp.ZeroCopyReadPacketData()
		if err == nil && ci.Timestamp.Before(c.armed) {
			continue // caught before the filter was attached
		}
		if err == nil {
			c.account(data, ci.Length, ci.Timestamp)
			if c.opts.Sink != nil && c.sinkErr == nil {
				// data is the ring's slot: the sink runs before the
				// next read releases it.
				if c.sinkErr = c.opts.Sink.Frame(ci.Timestamp, data, ci.Length); c.sinkErr == nil {
					c.written++
				}
			}
		} else if !errors.Is(err, afpacket.ErrTimeout) {
			c.readErr = err
			return
		}
		if stopAt.IsZero() {
			select {
			case stopAt = <-c.stopc:
			default:
			}
		}
		if !stopAt.IsZero() && errors.Is(err, afpacket.ErrTimeout) && time.Since(stopAt) > 2*blockTimeout {
			return
		}
	}
}

func (c *Capture) account(data []byte, wireLen int, ts time.Time) {
	s := parseFrame(data, wireLen)
	switch {
	case !s.OK:
		c.bad++
		return
	case s.Payload == 0 || !c.ports[s.DstPort]:
		c.otherOut++
		return
	}
	p := s.Payload
	if p > maxPayload {
		p = maxPayload
	}
	c.sizes[p]++
	sec := int(ts.Sub(c.opts.Start) / time.Second)
	if sec < 0 {
		sec = 0
	}
	for len(c.perSecond) <= sec {
		c.perSecond = append(c.perSecond, Second{})
	}
	c.perSecond[sec].SendUnits++
	c.perSecond[sec].PayloadBytes += int64(s.Payload)
}

// Result is what a stopped capture saw.
type Result struct {
	// Sizes maps a send unit's payload in bytes to how many units had it.
	Sizes map[int]int64
	// PerSecond is the measured direction second by second from Start.
	PerSecond []Second
	// OtherOut counts TCP packets of the ring's direction that were not
	// send units (pure ACKs, SYN/FIN, the other direction on loopback).
	OtherOut int64
	// Unparsed counts frames whose headers did not parse.
	Unparsed int64
	// Seen is what the kernel offered the ring (tp_packets, drops
	// included); Dropped is what it could not store (tp_drops).
	Seen, Dropped int64
	// QueueFreezes counts TPACKET_V3 queue freezes (ring full).
	QueueFreezes int64
	// Written counts the frames handed to Options.Sink without error.
	Written int64
	// ReaderCPU is the CPU time the reader thread used (the kernel's
	// share of the capture is charged to the sending threads).
	ReaderCPU time.Duration
}

// Stop ends the capture, closes the ring and returns what it saw. It
// waits for the reader to drain the blocks the kernel filled before the
// call.
func (c *Capture) Stop() (Result, error) {
	c.stopOnce.Do(func() { c.stopc <- time.Now() })
	<-c.done
	_, st, serr := c.tp.SocketStats()
	c.tp.Close()
	res := Result{
		Sizes:        c.sizes,
		PerSecond:    c.perSecond,
		OtherOut:     c.otherOut,
		Unparsed:     c.bad,
		Seen:         int64(st.Packets()),
		Dropped:      int64(st.Drops()),
		QueueFreezes: int64(st.QueueFreezes()),
		Written:      c.written,
		ReaderCPU:    c.readerCPU,
	}
	if c.readErr != nil {
		return res, fmt.Errorf("capture on %s: read: %w", c.opts.Interface, c.readErr)
	}
	if c.sinkErr != nil {
		return res, fmt.Errorf("capture on %s: writing frames: %w", c.opts.Interface, c.sinkErr)
	}
	if serr != nil {
		return res, fmt.Errorf("capture on %s: ring statistics: %w", c.opts.Interface, serr)
	}
	return res, nil
}

// threadCPU is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic(fmt.Sprintf("clock_gettime(CLOCK_THREAD_CPUTIME_ID): %v", err))
	}
	return time.Duration(ts.Nano())
}
