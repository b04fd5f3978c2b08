package httplimit

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// SetHeaders stores what Header lists, with values that outlive the outcome:
// released and reused for other figures, it leaves the map as it was.
func TestSetHeadersOutlivesRelease(t *testing.T) {
	long := strings.Repeat("n", 40) // spills the outcome's buffer
	for _, tt := range []struct {
		name  string
		limit core.Limit
		opts  []Option
	}{
		{"all headers", core.PerMinute(3), nil},
		{"long limit name", core.PerMinute(3).Named(long), nil},
		{"x-ratelimit only", core.PerMinute(3), []Option{WithHeaders(XRateLimitHeaders)}},
		{"ietf only", core.PerMinute(3), []Option{WithHeaders(IETFHeaders)}},
		{"no headers", core.PerMinute(3), []Option{WithHeaders(0)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, clk := newPolicy(t, &mapStore{}, core.GCRA, tt.limit, nil, tt.opts...)
			ctx := context.Background()
			var kept []http.Header
			var want []map[string]string
			for range 4 { // the fourth is denied, with Retry-After
				o := p.decideNow(ctx, get("a"))
				h := http.Header{}
				o.setHeaderMap(h, "")
				w := headersOf(o)
				for k, v := range w {
					w[k] = strings.Clone(v) // Header's values die with the outcome
				}
				kept, want = append(kept, h), append(want, w)
				p.release(o)
				clk.Advance(time.Second)
			}
			expect.Equal(t, "17", want[3]["Retry-After"], "the fourth request is denied")
			for i, h := range kept {
				got := map[string]string{}
				for name, vals := range h {
					must.Len(t, vals, 1)
					got[name] = vals[0]
				}
				expect.Equal(t, want[i], got, "request %d", i)
			}
		})
	}
}

func TestSetHeadersAllocations(t *testing.T) {
	for _, tt := range []struct {
		name   string
		opts   []Option
		allocs float64
	}{
		{"all headers", nil, 1},
		{"no headers", []Option{WithHeaders(0)}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newPolicy(t, &localMapStore{}, core.GCRA, core.PerSecond(1_000_000), nil, tt.opts...)
			r := get("192.0.2.1")
			h := http.Header{}
			allocs := testing.AllocsPerRun(200, func() {
				o := p.decideNow(context.Background(), r)
				o.setHeaderMap(h, "")
				p.release(o)
			})
			expect.Equal(t, tt.allocs, allocs)
		})
	}
}

// An outcome that becomes the request's context is never reused: SetHeaders
// then hands the map the outcome's own per-request values, without a copy;
// only the limit and the policy get slices of their own (one allocation).
func TestSetHeadersSharesAContextOutcome(t *testing.T) {
	p, _ := newPolicy(t, &localMapStore{}, core.GCRA, core.PerSecond(10), nil, WithDecisionInContext())
	o := p.decideNow(context.Background(), get("192.0.2.1"))
	shared := http.Header{}
	o.setHeaderMap(shared, "")
	want := http.Header{}
	for i := range o.numHeaders() {
		name, vals := o.header(i)
		want[name] = vals
	}
	expect.Len(t, shared, 5)
	expect.Equal(t, want, shared)
	expect.Equal(t, 1.0, testing.AllocsPerRun(100, func() { o.setHeaderMap(shared, "") }))
}

// A handler that writes into a header's slice (h[name][0] = ...) changes its
// own response only: no later response, and no other header of the same
// response, sees the write, whether or not the outcome becomes the context.
func TestSetHeadersSlicesAreOwnedByTheResponse(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []Option
	}{
		{"pooled outcome", nil},
		{"context outcome", []Option{WithDecisionInContext()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newPolicy(t, &localMapStore{}, core.GCRA, core.PerMinute(100), nil, tt.opts...)
			ctx := context.Background()
			first := http.Header{}
			o := p.decideNow(ctx, get("a"))
			o.setHeaderMap(first, "")
			want := http.Header{}
			for name, vals := range first {
				want[name] = []string{strings.Clone(vals[0])}
			}
			p.release(o)
			for name := range first {
				first[name][0] = "tampered"
			}

			second := http.Header{}
			o = p.decideNow(ctx, get("b")) // another key: the same figures as the first
			o.setHeaderMap(second, "")
			p.release(o)
			expect.Equal(t, want, second)
			expect.Equal(t, "100", second.Get(HeaderXRateLimitLimit))
			expect.Equal(t, `"default";q=100;w=60`, second.Get(HeaderRateLimitPolicy))
		})
	}
}
