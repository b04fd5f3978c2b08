package keyfuncs

import (
	"net/netip"

	"github.com/ratewarden/ratewarden/internal/peertext"
)

// PeerIPRequest is implemented by a Request view whose server reports the
// network peer as an address value rather than as text (fasthttp's
// RemoteAddr and grpc-go's peer.Addr are a *net.TCPAddr): IP reads the peer
// from PeerIP instead of parsing RemoteAddr's text back into an address, and
// gives the same key. The Fiber adapters' views implement it
// (httplimit.PeerIP serves such views).
type PeerIPRequest interface {
	// PeerIP returns the peer's IP address, an IPv4-mapped one as IPv4 and
	// without a zone: the address RemoteAddr writes. ok is false when the
	// peer has no IP address (a unix socket, an in-memory listener); IP then
	// reads RemoteAddr.
	PeerIP() (addr netip.Addr, ok bool)
}

// peerKey is the key of a request whose peer is the address peer: the
// client the honoured forwarding headers name when peer is a trusted proxy,
// else peer masked to the configured prefix. A whole IPv4 address is keyed
// by the shared text of recent peers, with no allocation.
func (c *ipConfig) peerKey(r Request, peer netip.Addr) string {
	if len(c.headers) > 0 && c.isTrusted(peer) {
		if k, ok := c.fromHeaders(r); ok {
			return k
		}
	}
	if peer.Is4() && c.v4Bits == 32 {
		b := peer.As4()
		return peertext.IPv4(uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]))
	}
	return c.format(peer, "")
}
