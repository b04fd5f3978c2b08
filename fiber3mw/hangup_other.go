//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package fiber3mw

import "net"

// hungUp reports false: on this system a connection is not peeked at, so a
// held request waits its whole delay, or until the server shuts down.
func hungUp(net.Conn) bool { return false }
