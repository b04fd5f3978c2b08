package httplimit

import (
	"encoding/binary"
	"net"
	"sync/atomic"
	"unsafe"
)

// peerCache holds the text of recently seen IPv4 peers, so that a client's
// later requests reuse it instead of formatting and allocating it again. It is
// direct-mapped and lock-free: a slot holds one immutable entry, and a peer
// that maps to a busy slot replaces its entry. Its size is fixed (peerSlots
// entries of 24 bytes), whatever the number of clients.
type peerCache struct {
	slots [peerSlots]atomic.Pointer[peerEntry]
}

// peerSlots is the number of entries a peerCache holds (a power of two).
const peerSlots = 1024

// peerEntry is one cached peer: its address and its text, which lies in buf.
type peerEntry struct {
	ip  uint32
	n   uint8
	buf [len("255.255.255.255")]byte
}

// peers is the cache every adapter shares: a client's address is the same
// text whichever adapter formats it.
var peers peerCache

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
			return peers.ipv4(ip4)
		}
		return a.IP.String()
	}
	if addr == nil {
		return ""
	}
	return addr.String()
}

// ipv4 returns ip (4 bytes) as text, from the cache when it holds ip.
func (c *peerCache) ipv4(ip net.IP) string {
	a := binary.BigEndian.Uint32(ip)
	slot := &c.slots[peerSlot(a)]
	e := slot.Load()
	if e == nil || e.ip != a {
		e = &peerEntry{ip: a}
		e.n = uint8(len(appendIPv4(e.buf[:0], ip)))
		slot.Store(e)
	}
	// An entry is never written after it is stored: its text is immutable.
	return unsafe.String(&e.buf[0], int(e.n))
}

// peerSlotBits is log2(peerSlots).
const peerSlotBits = 10

// peerSlot is the slot of the IPv4 address a (big-endian): the top bits of a
// multiplicative hash, so neighbouring addresses spread out.
func peerSlot(a uint32) uint32 { return (a * 0x9E3779B1) >> (32 - peerSlotBits) }

// appendIPv4 appends ip (4 bytes) to buf as net.IP.String does: decimal
// octets without leading zeros, written digit by digit (strconv's general path
// was a tenth of the middleware's time). buf has room for 15 more bytes.
func appendIPv4(buf []byte, ip net.IP) []byte {
	n := len(buf)
	buf = buf[:n+len("255.255.255.255")]
	for i, o := range ip[:4] {
		if i > 0 {
			buf[n] = '.'
			n++
		}
		switch {
		case o >= 100:
			buf[n], buf[n+1], buf[n+2] = '0'+o/100, '0'+o/10%10, '0'+o%10
			n += 3
		case o >= 10:
			buf[n], buf[n+1] = '0'+o/10, '0'+o%10
			n += 2
		default:
			buf[n] = '0' + o
			n++
		}
	}
	return buf[:n]
}
