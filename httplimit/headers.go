package httplimit

import (
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
	reset := ceilSeconds(d.ResetAfter)
	if !d.Allowed {
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
		b = strconv.AppendInt(b, remaining, 10)
		r1 := len(b)
		b = append(b, ";t="...)
		t0 := len(b)
		b = strconv.AppendInt(b, reset, 10)
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

// ceilSeconds rounds d up to whole seconds, as delay-seconds fields want.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}
