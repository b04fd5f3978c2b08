package httplimit

import (
	"context"
	"testing"
	"time"
	"unsafe"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// An outcome is pooled, and the one allocation of an allowed request when
// the pool is empty: it must stay in a small size class. It was 256 bytes
// until a core.Decision carried a calendar limit's zone and anchor and a
// settle's debt (296 bytes: the 320-byte class).
func TestOutcomeSize(t *testing.T) {
	expect.LessOrEqual(t, unsafe.Sizeof(outcome{}), uintptr(320))
}

// Long limit names overflow the outcome's buffer and take the allocating path;
// the values must be the same.
func TestRateLimitFieldLongName(t *testing.T) {
	long := "a-very-long-policy-name-that-does-not-fit-in-the-outcome-buffer-at-all"
	p := &Policy{headers: AllHeaders}
	o := &outcome{t: &tier{p: p, perLimit: []limitHeaders{{rlPrefix: `"` + long + `";r=`}}}}
	p.setHeaders(o, &core.Decision{Allowed: true, Remaining: 12345, ResetAfter: 1500 * 1e6}, true)
	var got string
	for i := range o.numHeaders() {
		if name, vals := o.header(i); name == HeaderRateLimit {
			got = vals[0]
		}
	}
	expect.Equal(t, `"`+long+`";r=12345;t=2`, got)
}

// acceptsJSON reads a header the client controls: no input may panic it, and
// appending a plain-text range never changes its answer.
func FuzzAcceptsJSON(f *testing.F) {
	for _, s := range []string{"", "*/*", "application/json;q=0", "text/plain, application/problem+json; q=0.5", ";,=q"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		if got, plus := acceptsJSON(accept), acceptsJSON(accept+", text/plain"); got != plus {
			t.Fatalf("%q: %v, with text/plain appended: %v", accept, got, plus)
		}
	})
}

// decideNow is decide with no arrival stamp, as the tests call it.
func (p *Policy) decideNow(ctx context.Context, r keyfuncs.Request) *outcome {
	o, _ := p.decide(ctx, r, time.Time{})
	return o
}

// decideAt is decide at the arrival stamp arrival.
func (p *Policy) decideAt(r keyfuncs.Request, arrival time.Time) *outcome {
	o, _ := p.decide(context.Background(), r, arrival)
	return o
}
