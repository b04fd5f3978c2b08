package httplimit

import (
	"encoding/binary"
	"net"
	"net/netip"

	"github.com/ratewarden/ratewarden/internal/peertext"
)

// PeerAddr is what a request view's RemoteAddr returns for a peer its server
// reports as a net.Addr (fasthttp's RemoteAddr, grpc-go's peer.Addr): a TCP
// peer's IP without the port (no key uses the port, and formatting it
// allocates), an IPv4 one taken from a fixed, lock-free cache of the text of
// recent peers that every adapter shares, so a client's later requests
// allocate nothing; any other address (a unix socket, an in-memory
// listener) as its String, which keyfuncs.IP refuses as a peer that is not
// an IP. It is for adapter authors.
func PeerAddr(addr net.Addr) string {
	if a, ok := addr.(*net.TCPAddr); ok {
		if ip4 := a.IP.To4(); ip4 != nil {
			return peertext.IPv4(binary.BigEndian.Uint32(ip4))
		}
		return a.IP.String()
	}
	if addr == nil {
		return ""
	}
	return addr.String()
}

// PeerIP is what a request view's PeerIP (keyfuncs.PeerIPRequest) returns
// for a peer its server reports as a net.Addr: a TCP peer's IP address, an
// IPv4-mapped one as IPv4, without the port and the zone, which PeerAddr's
// text leaves out too; false for any other address (a unix socket, an
// in-memory listener), whose text PeerAddr gives. keyfuncs.IP then keys an
// IPv4 client by the text PeerAddr would give it, without writing the text
// out and parsing it back. It is for adapter authors.
func PeerIP(addr net.Addr) (netip.Addr, bool) {
	a, ok := addr.(*net.TCPAddr)
	if !ok {
		return netip.Addr{}, false
	}
	ip, ok := netip.AddrFromSlice(a.IP)
	if !ok {
		return netip.Addr{}, false
	}
	return ip.Unmap(), true
}
