package netnsfs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// RouteSocket is a NETLINK_ROUTE socket for requests built by hand,
// bound to the namespace of the thread that opened it (OpenRouteSocket).
// Requests go one at a time; each answer is read into a buffer the
// socket's requests share. (nl.NetlinkRequest.Execute reads every answer
// into a 64 KiB array on the calling goroutine's stack: each goroutine
// that made a request grew its stack to 128 KiB, copied and faulted in,
// 9% of a 1000-NIC apply's CPU.) It is safe for concurrent use.
type RouteSocket struct {
	mu  sync.Mutex
	fd  int
	seq uint32
	buf []byte
}

// routeAnswerSize bounds one read of an answer: an acknowledgement, an
// error (with the request it refuses), or the echo of one new link.
const routeAnswerSize = 32 << 10

// OpenRouteSocket opens a RouteSocket in the calling thread's namespace.
func OpenRouteSocket() (*RouteSocket, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("netlink socket: bind: %w", err)
	}
	return &RouteSocket{fd: fd}, nil
}

// Close closes the socket; nil is closed already.
func (s *RouteSocket) Close() {
	if s != nil {
		unix.Close(s.fd)
	}
}

// Do sends req (an acknowledged request: NLM_F_ACK) and waits for the
// kernel's answer: nil for an acknowledgement, the kernel's errno for a
// refusal. msg is the first message the kernel sent before
// acknowledging, when it sent one (the echo of a request with NLM_F_ECHO: its payload,
// as nl.NetlinkRequest.Execute returns it), nil otherwise.
func (s *RouteSocket) Do(req *nl.NetlinkRequest) (msg []byte, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buf == nil {
		s.buf = make([]byte, routeAnswerSize)
	}
	s.seq++
	req.Seq = s.seq
	if err := unix.Sendto(s.fd, req.Serialize(), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, err
	}
	for {
		n, _, err := unix.Recvfrom(s.fd, s.buf, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for b := s.buf[:n]; len(b) >= unix.NLMSG_HDRLEN; {
			size := int(binary.NativeEndian.Uint32(b[0:4]))
			if size < unix.NLMSG_HDRLEN || size > len(b) {
				return nil, fmt.Errorf("netlink: a message of %d bytes in %d", size, len(b))
			}
			typ, seq := binary.NativeEndian.Uint16(b[4:6]), binary.NativeEndian.Uint32(b[8:12])
			data := b[unix.NLMSG_HDRLEN:size]
			if next := nlmsgAlign(size); next < len(b) {
				b = b[next:]
			} else {
				b = nil
			}
			if seq != req.Seq {
				continue // an answer to a request given up on
			}
			switch typ {
			case unix.NLMSG_ERROR:
				if len(data) < 4 {
					return nil, errors.New("netlink: short error message")
				}
				if errno := int32(binary.NativeEndian.Uint32(data[0:4])); errno != 0 {
					return nil, unix.Errno(-errno)
				}
				return msg, nil
			case unix.NLMSG_DONE:
				return msg, nil
			default:
				if msg == nil {
					msg = append([]byte(nil), data...)
				}
			}
		}
	}
}

func nlmsgAlign(n int) int { return (n + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1) }
