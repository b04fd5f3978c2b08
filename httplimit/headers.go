package httplimit

import (
	"math/bits"
	"strconv"
	"time"
	"unsafe"

	"github.com/ratewarden/ratewarden/core"
)

// HeaderSet selects the rate-limit header families a policy writes.
type HeaderSet uint8

const (
	// XRateLimitHeaders are X-RateLimit-Limit, X-RateLimit-Remaining and
	// X-RateLimit-Reset (the reset as delta seconds, like the IETF draft's).
	XRateLimitHeaders HeaderSet = 1 << iota
	// IETFHeaders are RateLimit-Policy and RateLimit as defined by
	// draft-ietf-httpapi-ratelimit-headers-10.
	IETFHeaders
	// AllHeaders is both families, the default.
	AllHeaders = XRateLimitHeaders | IETFHeaders
)

// Canonical names of the headers a policy writes (the form net/http's Header
// map keys use; HTTP field names are case-insensitive on the wire).
const (
	HeaderRetryAfter         = "Retry-After"
	HeaderXRateLimitLimit    = "X-Ratelimit-Limit"
	HeaderXRateLimitRemain   = "X-Ratelimit-Remaining"
	HeaderXRateLimitReset    = "X-Ratelimit-Reset"
	HeaderRateLimitPolicy    = "Ratelimit-Policy"
	HeaderRateLimit          = "Ratelimit"
	ContentTypeProblemJSON   = "application/problem+json"
	ContentTypeTextPlain     = "text/plain; charset=utf-8"
	ProblemTypeQuotaExceeded = "https://iana.org/assignments/http-problem-types#quota-exceeded"
)

// setHeaders fills o's headers for d, with Retry-After on a denial when
// retryAfter is set (a dry run's denials go on, and get none). Values that change per request are
// formatted once, into o.buf: with the IETF headers on, the RateLimit field
// is written whole and the remaining and reset figures are slices of it. The
// other values were built once by precompute.
func (p *Policy) setHeaders(o *outcome, d *core.Decision, retryAfter bool) {
	lh := &o.t.perLimit[d.Index]
	remaining := max(d.Remaining, 0)
	var reset int64
	if d.Allowed {
		reset = ceilSeconds(d.ResetAfter)
	} else {
		// Retry-After must not point earlier than the draft's reset (t), so on a
		// denial both say when the request could pass.
		reset = max(ceilSeconds(d.RetryAfter), 1)
	}
	ietf := p.headers&IETFHeaders != 0
	var resetSlot, remSlot, rlSlot uint8
	if ietf {
		// "name";r=<remaining>;t=<reset>. A long limit name overflows o.buf:
		// append then moves the field to the heap, with an allocation.
		b := append(o.buf[:0], lh.rlPrefix...)
		r0 := len(b)
		b = appendDecimal(b, remaining)
		r1 := len(b)
		b = append(b, ";t="...)
		t0 := len(b)
		b = appendDecimal(b, reset)
		if cap(b) == len(o.buf) {
			o.n = uint8(len(b))
		} else {
			o.spilled = true
		}
		// b is never written again: the strings below may share it.
		field := unsafe.String(&b[0], len(b))
		resetSlot = o.addValue(field[t0:], uint8(t0))
		remSlot = o.addValue(field[r0:r1], uint8(r0))
		rlSlot = o.addValue(field, 0)
	} else {
		resetSlot = o.appendInt(reset)
		if p.headers&XRateLimitHeaders != 0 {
			// Retry-After alone (no header family) needs only the reset.
			remSlot = o.appendInt(remaining)
		}
	}
	if !d.Allowed && retryAfter {
		o.addHeader(hRetryAfter, resetSlot)
	}
	if p.headers&XRateLimitHeaders != 0 {
		o.addHeader(hXLimit, 0)
		o.addHeader(hXRemaining, remSlot)
		o.addHeader(hXReset, resetSlot)
	}
	if ietf {
		o.addHeader(hPolicy, 0)
		o.addHeader(hRateLimit, rlSlot)
	}
}

// appendDecimal appends v, which is not negative, to b in decimal, as
// strconv.AppendInt does: in place, two digits at a time, when b has room
// (the figures of a header are short, and strconv's general path was a
// twentieth of a denial through Fiber).
func appendDecimal(b []byte, v int64) []byte {
	l := len(b)
	if v < 0 || v >= 1e18 {
		return strconv.AppendInt(b, v, 10)
	}
	u := uint64(v)
	n := bits.Len64(u) * 1233 >> 12 // floor(log10(u)) or one less
	if u >= pow10[n] {
		n++
	}
	n = max(n, 1)
	if cap(b)-l < n {
		return strconv.AppendInt(b, v, 10)
	}
	b = b[:l+n]
	i := l + n
	for u >= 100 {
		q := u / 100
		r := (u - q*100) * 2
		i -= 2
		b[i], b[i+1] = digitPairs[r], digitPairs[r+1]
		u = q
	}
	if u >= 10 {
		b[i-2], b[i-1] = digitPairs[u*2], digitPairs[u*2+1]
	} else {
		b[i-1] = byte('0' + u)
	}
	return b
}

// digitPairs are the two digits of 0 to 99, for appendDecimal.
const digitPairs = "00010203040506070809" +
	"10111213141516171819" + "20212223242526272829" + "30313233343536373839" +
	"40414243444546474849" + "50515253545556575859" + "60616263646566676869" +
	"70717273747576777879" + "80818283848586878889" + "90919293949596979899"

// pow10 are the powers of ten below 1e19, for appendDecimal.
var pow10 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// ceilSeconds rounds d up to whole seconds, as delay-seconds fields want.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}
