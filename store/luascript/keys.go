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
//	<prefix>{<namespace>:<key>}:<algorithm code>:<spec>
//
// where the code is one letter (algorithmCodes) and the spec is a limit's
// "<rate>/<period><unit>", with "/<burst>" only when the burst is not the rate
// (appendSpec). A request of several limits joins their specs with '+' and
// has one key per limit, ":<index>" appended, so limiters with different
// limit sets never share state. In the hash tag, '%', '{', '}' are escaped as
// %25, %7B, %7D (and ':' and '#' in the namespace as %3A, %23); a tag longer
// than maxTagLen becomes '#' and the hex SHA-256 of the namespace and key.
//
// The names are short because Redis's memory per key is mostly the key's
// name: the prefix, the code and the spec cost a few bytes, the state one
// integer. They stay unambiguous: the prefix holds no brace and the tag's
// braces are escaped, so the first '}' ends the tag, whose escaping is
// injective; after it come no braces, a letter that names one algorithm, and
// specs that each read back as exactly one (rate, period, burst).

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

// periodUnits are the units a spec writes a period in, largest first, each
// with its length in µs.
var periodUnits = [...]struct {
	suffix string
	micros int64
}{
	{"d", 86_400_000_000}, {"h", 3_600_000_000}, {"m", 60_000_000},
	{"s", 1_000_000}, {"ms", 1_000}, {"us", 1},
}

// appendSpec appends the key's part for a limit of figures f to dst: the
// rate, '/', the period in the largest unit that divides it (d, h, m, s, ms
// or us: 1h, 90s, 1500ms), and '/' and the burst when it is not the rate.
// Each spec reads back as one (rate, period, burst): the unit's suffix says
// what the number before it counts.
func appendSpec(dst []byte, f figures) []byte {
	dst = strconv.AppendInt(dst, f.rate, 10)
	dst = append(dst, '/')
	for _, u := range periodUnits {
		if f.period%u.micros == 0 {
			dst = strconv.AppendInt(dst, f.period/u.micros, 10)
			dst = append(dst, u.suffix...)
			break
		}
	}
	if f.burst != f.rate {
		dst = append(dst, '/')
		dst = strconv.AppendInt(dst, f.burst, 10)
	}
	return dst
}

// appendKeys appends req's keys, named from the limits' encodings, to dst.
func (c *config) appendKeys(dst []string, req core.TakeRequest, encs []*encodedLimit) []string {
	code := algorithmCodes[req.Algorithm]
	n := len(c.prefix) + len(req.Namespace) + len(req.Key) + len(code) + 8
	for _, e := range encs {
		n += len(e.spec) + 1
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(c.prefix)
	b.WriteByte('{')
	writeTag(&b, req.Namespace, req.Key)
	b.WriteString("}:")
	b.WriteString(code)
	b.WriteByte(':')
	for i, e := range encs {
		if i > 0 {
			b.WriteByte('+')
		}
		b.WriteString(e.spec)
	}
	base := b.String()
	if len(encs) == 1 {
		return append(dst, base)
	}
	for i := range encs {
		dst = append(dst, base+":"+strconv.Itoa(i))
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
	case ':', '#':
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
