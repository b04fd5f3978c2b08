package servertest

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
)

// Calendar starts a server with a calendar quota, -limit 3/month -tz
// Asia/Tokyo -anchor-day 31 on the fixed window, and checks what a client
// sees: RateLimit-Policy without w, and RateLimit's t, X-RateLimit-Reset
// and the 429's Retry-After counting the seconds to the quota's next
// boundary (midnight in Tokyo on the 31st, or a shorter month's last day).
func Calendar(t *testing.T, start Start) {
	s := StartServer(t, start, "-algorithm", "fixed-window", "-limit", "3/month", "-tz", "Asia/Tokyo", "-anchor-day", "31")
	_, end, err := core.Monthly(3).In("Asia/Tokyo").AnchoredOn(31).WindowAt(time.Now())
	require.NoError(t, err)
	near := func(t *testing.T, field string) {
		t.Helper()
		got, err := strconv.ParseInt(field, 10, 64)
		require.NoError(t, err, field)
		want := int64(time.Until(end)/time.Second) + 1
		assert.InDelta(t, want, got, 3, "seconds to %s", end)
	}
	for i := range 3 {
		resp := s.Do(t, http.MethodGet, "/")
		require.Equal(t, http.StatusOK, resp.Status, "request %d", i)
		assert.Equal(t, `"default";q=3`, resp.Header.Get("RateLimit-Policy"))
		assert.Equal(t, strconv.Itoa(2-i), resp.Header.Get("X-RateLimit-Remaining"))
		near(t, resp.Header.Get("X-RateLimit-Reset"))
	}
	resp := s.Do(t, http.MethodGet, "/")
	require.Equal(t, http.StatusTooManyRequests, resp.Status)
	near(t, resp.Header.Get("Retry-After"))
	rl := resp.Header.Get("RateLimit")
	require.Regexp(t, `^"default";r=0;t=[0-9]+$`, rl)
	near(t, rl[len(`"default";r=0;t=`):])
}
