// Package peertext holds the text of recently seen IPv4 peers, so that a
// client's later requests reuse it instead of formatting and allocating it
// again: the peer text httplimit.PeerAddr hands out and the key keyfuncs.IP
// makes of an IPv4 client read it from one cache.
package peertext

import (
	"sync/atomic"
	"unsafe"
)

// cache is direct-mapped and lock-free: a slot holds one immutable entry, and
// a peer that maps to a busy slot replaces its entry. Its size is fixed
// (slots entries of 24 bytes), whatever the number of clients.
type cache struct {
	slots [slots]atomic.Pointer[entry]
}

// slots is the number of entries a cache holds (a power of two).
const slots = 1024

// slotBits is log2(slots).
const slotBits = 10

// entry is one cached peer: its address and its text, which lies in buf.
type entry struct {
	ip  uint32
	n   uint8
	buf [len("255.255.255.255")]byte
}

// peers is the cache every caller shares: a client's address is the same
// text whichever adapter or key function asks for it.
var peers cache

// IPv4 returns the text of the IPv4 address a (its four bytes, big-endian),
// as net.IP.String and netip.Addr.String write it, from the shared cache when
// it holds a. The string is never written after it is returned.
func IPv4(a uint32) string { return peers.ipv4(a) }

// ipv4 returns a as text, from the cache when it holds a.
func (c *cache) ipv4(a uint32) string {
	slot := &c.slots[slotOf(a)]
	e := slot.Load()
	if e == nil || e.ip != a {
		e = &entry{ip: a}
		e.n = uint8(len(appendIPv4(e.buf[:0], a)))
		slot.Store(e)
	}
	// An entry is never written after it is stored: its text is immutable.
	return unsafe.String(&e.buf[0], int(e.n))
}

// slotOf is the slot of the IPv4 address a: the top bits of a multiplicative
// hash, so neighbouring addresses spread out.
func slotOf(a uint32) uint32 { return (a * 0x9E3779B1) >> (32 - slotBits) }

// appendIPv4 appends a to buf as net.IP.String does: decimal octets without
// leading zeros, written digit by digit (strconv's general path was a tenth
// of a Fiber middleware's time). buf has room for 15 more bytes.
func appendIPv4(buf []byte, a uint32) []byte {
	n := len(buf)
	buf = buf[:n+len("255.255.255.255")]
	for i := range 4 {
		o := byte(a >> (24 - 8*i))
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
