package httplimit

import (
	"context"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// A calendar quota's headers count to the boundary exactly: RateLimit's t,
// X-RateLimit-Reset and, on a denial, Retry-After are the seconds to the
// next local midnight of the month's anchor day (a 23-hour day in March in
// New York included), and RateLimit-Policy has no w, since a month has no
// one length.
func TestCalendarHeaders(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	must.NoError(t, err)
	tests := []struct {
		name     string
		limit    core.Limit
		start    time.Time
		boundary time.Time
		policy   string
	}{
		{"month end", core.Monthly(2).In("America/New_York").Named("monthly"),
			time.Date(2026, 2, 28, 22, 59, 59, 500_000_000, ny), time.Date(2026, 3, 1, 0, 0, 0, 0, ny), `"monthly";q=2`},
		{"the day clocks spring forward", core.Daily(2).In("America/New_York").Named("daily"),
			time.Date(2026, 3, 8, 0, 30, 0, 0, ny), time.Date(2026, 3, 9, 0, 0, 0, 0, ny), `"daily";q=2`},
		{"billing day 31 in April", core.Monthly(2).AnchoredOn(31).Named("billing"),
			time.Date(2026, 4, 29, 12, 0, 0, 0, time.UTC), time.Date(2026, 4, 30, 0, 0, 0, 0, time.UTC), `"billing";q=2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, clk := newPolicy(t, &mapStore{}, core.FixedWindow, tt.limit, nil)
			clk.Set(tt.start)
			toBoundary := int64((tt.boundary.Sub(tt.start) + time.Second - 1) / time.Second)
			for i := range 2 {
				w := httptest.NewRecorder()
				_, next := p.Handle(context.Background(), get("192.0.2.1"), w)
				must.True(t, next, "request %d", i)
				h := writtenHeaders(w)
				expect.Equal(t, tt.policy, h[HeaderRateLimitPolicy])
				expect.Equal(t, strconv.FormatInt(toBoundary, 10), h[HeaderXRateLimitReset])
				expect.Equal(t, `"`+tt.limit.Name+`";r=`+strconv.Itoa(1-i)+`;t=`+strconv.FormatInt(toBoundary, 10), h[HeaderRateLimit])
			}
			w := httptest.NewRecorder()
			_, next := p.Handle(context.Background(), get("192.0.2.1"), w)
			must.False(t, next)
			h := writtenHeaders(w)
			expect.Equal(t, strconv.FormatInt(toBoundary, 10), h[HeaderRetryAfter])
			expect.Equal(t, `"`+tt.limit.Name+`";r=0;t=`+strconv.FormatInt(toBoundary, 10), h[HeaderRateLimit])
			// One microsecond before the boundary: still denied, Retry-After 1.
			clk.Set(tt.boundary.Add(-time.Microsecond))
			w = httptest.NewRecorder()
			_, next = p.Handle(context.Background(), get("192.0.2.1"), w)
			must.False(t, next)
			expect.Equal(t, "1", writtenHeaders(w)[HeaderRetryAfter])
			// At the boundary: a fresh window.
			clk.Set(tt.boundary)
			w = httptest.NewRecorder()
			_, next = p.Handle(context.Background(), get("192.0.2.1"), w)
			must.True(t, next)
			expect.Equal(t, `"`+tt.limit.Name+`";r=1;t=`, writtenHeaders(w)[HeaderRateLimit][:len(tt.limit.Name)+9])
		})
	}
}

// A plain limit keeps its w beside a calendar one.
func TestCalendarPolicyHeaderMixed(t *testing.T) {
	p, _ := newPolicy(t, &mapStore{}, core.FixedWindow, core.PerMinute(10),
		[]core.Option{core.WithLimit(core.Monthly(1000).In("Europe/Berlin").Named("monthly"))})
	w := httptest.NewRecorder()
	_, next := p.Handle(context.Background(), get("192.0.2.1"), w)
	must.True(t, next)
	expect.Equal(t, `"default";q=10;w=60, "monthly";q=1000`, writtenHeaders(w)[HeaderRateLimitPolicy])
}
