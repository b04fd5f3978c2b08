//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package httplimit

import "net"

// ConnHungUp reports false: on this system a connection is not peeked at, so
// a held request waits its whole delay, or until the server shuts down.
func ConnHungUp(net.Conn) bool { return false }
