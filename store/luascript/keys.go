package luascript

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/ratewarden/ratewarden/core"
)

// Keys have the form
//
//	<prefix>{<namespace>:<key>}:<algorithm code>
//
// where the code is one letter (algorithmCodes). A request of several limits
// has one key per limit, ":<number of limits>:<index>" appended. A key names
// no limit figures: the state of a client under a policy stays where it is
// when the policy's rate, period or burst is edited, and the value holds the
// figure it was written under (the meters' emission interval, the windows'
// period), from which the scripts re-express it under the new limit
// (core.TakeRequest.Reexpress). In the hash tag, '%', '{', '}' are escaped as
// %25, %7B, %7D (and ':', '#' and NUL in the namespace as %3A, %23, %00); a
// tag longer than maxTagLen becomes '#' and the hex SHA-256 of the namespace
// and key.
//
// The names are short because Redis's memory per key is mostly the key's
// name. They stay unambiguous: the prefix holds no brace and the tag's
// braces are escaped, so the first '}' ends the tag, whose escaping is
// injective; after it come no braces, a letter that names one algorithm, and
// for several limits their number and an index.

// maxTagLen bounds the hash tag's length, so a 10 KB API key costs Redis what
// a short one does.
const maxTagLen = 128

// algorithmCodes name the algorithms in keys, indexed by core.Algorithm.
var algorithmCodes = [...]string{
	core.TokenBucket:   "t",
	core.LeakyBucket:   "l",
	core.FixedWindow:   "f",
	core.SlidingLog:    "s",
	core.SlidingWindow: "w",
	core.GCRA:          "g",
}

// appendKeys appends req's keys, one per limit in encs, to dst.
func (c *config) appendKeys(dst []string, req core.TakeRequest, encs []*encodedLimit) []string {
	code := algorithmCodes[req.Algorithm]
	var b strings.Builder
	b.Grow(len(c.prefix) + len(req.Namespace) + len(req.Key) + len(code) + 8)
	b.WriteString(c.prefix)
	b.WriteByte('{')
	writeTag(&b, req.Namespace, req.Key)
	b.WriteString("}:")
	b.WriteString(code)
	if len(encs) == 1 {
		return append(dst, b.String())
	}
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(len(encs)))
	b.WriteByte(':')
	base := b.String()
	for i := range encs {
		dst = append(dst, base+strconv.Itoa(i))
	}
	return dst
}

// writeTag writes the hash tag's content for namespace ns and key.
func writeTag(b *strings.Builder, ns, key string) {
	n := escapedLen(ns, true) + 1 + escapedLen(key, false)
	if n > maxTagLen {
		h := sha256.New()
		var lenbuf [binary.MaxVarintLen64]byte
		h.Write(lenbuf[:binary.PutUvarint(lenbuf[:], uint64(len(ns)))])
		h.Write([]byte(ns))
		h.Write([]byte(key))
		b.WriteByte('#')
		b.WriteString(hex.EncodeToString(h.Sum(nil)))
		return
	}
	writeEscaped(b, ns, true)
	b.WriteByte(':')
	writeEscaped(b, key, false)
}

func escapes(c byte, ns bool) bool {
	switch c {
	case '%', '{', '}':
		return true
	case ':', '#', 0:
		return ns
	}
	return false
}

func escapedLen(s string, ns bool) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if escapes(s[i], ns) {
			n += 2
		}
	}
	return n
}

func writeEscaped(b *strings.Builder, s string, ns bool) {
	const hexdigits = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !escapes(c, ns) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexdigits[c>>4])
		b.WriteByte(hexdigits[c&15])
	}
}
