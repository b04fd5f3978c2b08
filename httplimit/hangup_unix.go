//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package httplimit

import (
	"errors"
	"net"
	"syscall"
)

// ConnHungUp reports whether the client of c has closed it, for a view's
// HangUpChecker on a server that does not report hang-ups (fasthttp). It is
// for adapter authors. It peeks at one byte of the socket without waiting and
// without consuming it (recv with MSG_PEEK|MSG_DONTWAIT), so the server reads whatever
// the client sent next, untouched. End of stream (the client closed or
// half-closed the connection, as net/http's server also takes it) and a reset
// mean gone; nothing to read, or bytes to read (a pipelined request, or under
// TLS a record that may be the client's close_notify), mean present, as does
// any connection that is not a socket. It never blocks, reads no deadline
// and changes none.
func ConnHungUp(c net.Conn) bool {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = tc.NetConn() // *tls.Conn: the TCP connection beneath
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var gone bool
	err = rc.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil:
			gone = n == 0
		case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ENOTCONN), errors.Is(err, syscall.EPIPE),
			errors.Is(err, syscall.ETIMEDOUT):
			gone = true
		}
	})
	// Control fails once the connection was closed on this side.
	return gone || errors.Is(err, net.ErrClosed)
}
