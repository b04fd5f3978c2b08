package luascript

import "math/bits"

// A reset and a refund free quota, which every instance's cache of denials
// must then stop serving. Their script announces it: it PUBLISHes on the
// store's channel (resetChannel) the key's address (keyAddress) as
// announcementLen lowercase hex digits, and every Store that follows the
// channel (FollowResets) drops its cached denials of that key.
//
// The channel is a classic one: Redis Cluster broadcasts a PUBLISH to every
// node, so a subscriber on any node hears a reset whose key lives on
// another (SPUBLISH reaches the subscribers of the key's shard only). It is
// named like the rules' channel, <prefix>{rules}:announce, and under the
// store's prefix, so stores under other prefixes ignore each other.
//
// The payload is a fixed-size digest rather than the key: a key may be 10 KiB
// long and hold anything, and a refund, which may come with every request,
// announces too; a digest costs every subscriber the same 16 bytes. Two keys
// of one address (a collision) only make an announcement drop both.

// announcementLen is the length of an announcement's payload.
const announcementLen = 16

// resetChannel is the channel a store under prefix announces resets and
// refunds on.
func resetChannel(prefix string) string { return prefix + "{resets}:announce" }

// Constants of keyAddress's mixing (wyhash's).
const (
	addrK0 = 0xa0761d6478bd642f
	addrK1 = 0xe7037ed1a0b428db
	addrK2 = 0x8ebc6af09c88c6e3
)

// keyAddress is the address of a client's key ns, key: a hash that every
// process computes alike (unlike the cache's seeded identity), so an
// announcement can name the key in 64 bits. It is not secret: whoever
// crafts a key of another's address only makes the two share a cache slot
// (evicting each other) and each other's drops, never each other's denials,
// which match on the seeded identity.
func keyAddress(ns, key string) uint64 {
	h := mix(uint64(len(ns))^addrK0, uint64(len(key))^addrK1)
	return absorb(absorb(h, ns), key)
}

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// absorb mixes s into h, eight bytes at a time; the last eight (or fewer)
// are read at once, overlapping the ones before when need be.
func absorb(h uint64, s string) uint64 {
	n := len(s)
	if n <= 8 {
		return mix(h^short(s)^addrK1, addrK2^uint64(n))
	}
	rest := s
	for len(rest) > 8 {
		h = mix(h^le64(rest)^addrK1, addrK2)
		rest = rest[8:]
	}
	return mix(h^le64(s[n-8:])^addrK1, addrK2^uint64(len(rest)))
}

// short reads a string of at most eight bytes as one word (two overlapping
// halves, or three bytes, for shorter ones; their lengths are mixed apart).
func short(s string) uint64 {
	switch n := len(s); {
	case n == 8:
		return le64(s)
	case n >= 4:
		return le32(s)<<32 | le32(s[n-4:])
	case n > 0:
		return uint64(s[0])<<16 | uint64(s[n>>1])<<8 | uint64(s[n-1])
	}
	return 0
}

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func le32(s string) uint64 {
	_ = s[3]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24
}

// announcement returns the payload naming the key whose address is addr.
func announcement(addr uint64) string {
	const digits = "0123456789abcdef"
	var b [announcementLen]byte
	for i := range b {
		b[announcementLen-1-i] = digits[addr>>(4*i)&15]
	}
	return string(b[:])
}

// parseAnnouncement returns the address a payload names, or false for
// anything else: another length, upper case, any other byte.
func parseAnnouncement(payload string) (uint64, bool) {
	if len(payload) != announcementLen {
		return 0, false
	}
	var addr uint64
	for i := 0; i < len(payload); i++ {
		c := payload[i]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		default:
			return 0, false
		}
		addr = addr<<4 | uint64(c)
	}
	return addr, true
}
