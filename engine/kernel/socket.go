package kernel

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// sockOptions are the socket options a workload asks for.
type sockOptions struct {
	SndBuf  int    // SO_SNDBUF in bytes; 0 = system default
	RcvBuf  int    // SO_RCVBUF in bytes; 0 = system default
	NoDelay bool   // TCP_NODELAY
	Cork    bool   // TCP_CORK (sender only)
	CC      string // TCP_CONGESTION; "" = system default
	// PacingBps is SO_MAX_PACING_RATE in bits per second (sender only);
	// 0 = unpaced. TCP paces internally when the qdisc is not fq.
	PacingBps uint64
}

func sockaddr(ap netip.AddrPort) (unix.Sockaddr, int) {
	a := ap.Addr().Unmap()
	if a.Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: a.As4()}, unix.AF_INET
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: a.As16()}, unix.AF_INET6
}

// applyCommon sets the options both ends share: buffers, congestion
// control and Nagle.
func applyCommon(fd int, o sockOptions) error {
	if o.SndBuf > 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, o.SndBuf); err != nil {
			return fmt.Errorf("SO_SNDBUF %d: %w", o.SndBuf, err)
		}
	}
	if o.RcvBuf > 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, o.RcvBuf); err != nil {
			return fmt.Errorf("SO_RCVBUF %d: %w", o.RcvBuf, err)
		}
	}
	if o.CC != "" {
		if err := unix.SetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, o.CC); err != nil {
			return fmt.Errorf("congestion control %q (TCP_CONGESTION): %w: is the module loaded and listed in net.ipv4.tcp_allowed_congestion_control?", o.CC, err)
		}
	}
	if o.NoDelay {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
			return fmt.Errorf("TCP_NODELAY: %w", err)
		}
	}
	return nil
}

// listenTCP opens a listening socket on addr with an ephemeral port in the
// calling thread's namespace, and returns it with the port chosen.
func listenTCP(addr netip.Addr, o sockOptions, backlog int) (fd int, port uint16, err error) {
	sa, family := sockaddr(netip.AddrPortFrom(addr, 0))
	fd, err = unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, 0, fmt.Errorf("socket: %w", err)
	}
	fail := func(what string, e error) (int, uint16, error) {
		unix.Close(fd)
		return -1, 0, fmt.Errorf("%s %s: %w", what, addr, e)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return fail("SO_REUSEADDR", err)
	}
	if err := applyCommon(fd, o); err != nil {
		return fail("listen on", err)
	}
	if err := unix.Bind(fd, sa); err != nil {
		return fail("bind", err)
	}
	if err := unix.Listen(fd, backlog); err != nil {
		return fail("listen", err)
	}
	got, err := unix.Getsockname(fd)
	if err != nil {
		return fail("getsockname", err)
	}
	switch s := got.(type) {
	case *unix.SockaddrInet4:
		port = uint16(s.Port)
	case *unix.SockaddrInet6:
		port = uint16(s.Port)
	}
	return fd, port, nil
}

// dialTCP connects to ap from the calling thread's namespace with the
// sender's options.
func dialTCP(ap netip.AddrPort, o sockOptions) (int, error) {
	sa, family := sockaddr(ap)
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	if err := applyCommon(fd, o); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if o.Cork {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_CORK, 1); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("TCP_CORK: %w", err)
		}
	}
	if o.PacingBps > 0 {
		if err := unix.SetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_MAX_PACING_RATE, o.PacingBps/8); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("SO_MAX_PACING_RATE %d bit/s: %w", o.PacingBps, err)
		}
	}
	if err := unix.Connect(fd, sa); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("connect to %s: %w", ap, err)
	}
	return fd, nil
}

// acceptTCP accepts one connection on a blocking listener.
func acceptTCP(lfd int) (int, error) {
	for {
		fd, _, err := unix.Accept4(lfd, unix.SOCK_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return -1, fmt.Errorf("accept: %w", err)
		}
		return fd, nil
	}
}

// tcpInfo reads TCP_INFO of a connected socket.
func tcpInfo(fd int) (*unix.TCPInfo, error) {
	return unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
}

// retryable reports whether a send or receive error only means "try
// again" (EINTR, EAGAIN).
func retryable(err error) bool {
	return errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR)
}

// congestionOf is the congestion control fd's connection runs, as
// TCP_CONGESTION reads back (the kernel pads the name with NULs to
// TCP_CA_NAME_MAX).
func congestionOf(fd int) (string, error) {
	name, err := unix.GetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	if err != nil {
		return "", fmt.Errorf("TCP_CONGESTION: %w", err)
	}
	return strings.TrimRight(name, "\x00"), nil
}

// clientCongestion names the congestion controls the client sockets of
// conns run, sorted and joined by "+" (one name when, as a workload's
// connections do, they all run one); "" when this machine holds no client
// socket.
func clientCongestion(conns []*conn) (string, error) {
	var names []string
	for _, c := range conns {
		if c.client < 0 {
			continue
		}
		n, err := congestionOf(c.client)
		if err != nil {
			return "", err
		}
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(slices.Compact(names), "+"), nil
}
