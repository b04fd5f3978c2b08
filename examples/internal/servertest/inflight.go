package servertest

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
)

// InFlight starts a server with -concurrency 1 beside -limit 100/m and
// checks that while GET /slow?ms=1500 runs, another request of the client
// gets 429 with Retry-After: 1 and X-Concurrency-Limit naming the policy,
// and no RateLimit fields; that the slot comes back when the slow request
// is answered; and that a bad ms is a 400. In rules mode, examples/rules.yaml's
// policy slow (concurrency: 2) does the same for GET /slow.
func InFlight(t *testing.T, start Start) {
	s := StartServer(t, start, "-limit", "100/m", "-concurrency", "1")
	inflight(t, s, "/", `"default";n=1`, 1)
	r := StartServer(t, start, "-rules", CopyRules(t, "rules.yaml"))
	inflight(t, r, flags.SlowPath+"?ms=0", `"slow";n=2`, 2)
}

// inflight runs n requests GET /slow?ms=1500 on s at once and checks that
// path is refused while they run, with the field X-Concurrency-Limit, and
// admitted again once they are answered.
func inflight(t *testing.T, s *Server, path, field string, n int) {
	for _, bad := range []string{"NaN", "-1", "10001", "1.5", "", "1e3"} {
		r := s.Do(t, http.MethodGet, flags.SlowPath+"?ms="+bad)
		assert.Equal(t, http.StatusBadRequest, r.Status, "ms=%q", bad)
	}
	r := s.Do(t, http.MethodGet, flags.SlowPath+"?ms=0")
	assert.Equal(t, http.StatusOK, r.Status)
	assert.Equal(t, "slept 0 ms\n", r.Body)

	type answer struct {
		status int
		body   string
		err    error
	}
	slow := make(chan answer, n)
	for range n {
		go func() {
			resp, err := http.Get(s.URL + flags.SlowPath + "?ms=1500")
			if err != nil {
				slow <- answer{err: err}
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			slow <- answer{resp.StatusCode, string(body), err}
		}()
	}
	var refused Response
	require.Eventually(t, func() bool {
		refused = s.Do(t, http.MethodGet, path)
		return refused.Status == http.StatusTooManyRequests
	}, 5*time.Second, 5*time.Millisecond, "a request while the slow ones run is refused")
	assert.Equal(t, "1", refused.Header.Get("Retry-After"))
	assert.Equal(t, field, refused.Header.Get("X-Concurrency-Limit"))
	assert.Empty(t, refused.Header.Get("RateLimit"), "the rate fields describe rates")
	for range n {
		got := <-slow
		require.NoError(t, got.err)
		assert.Equal(t, http.StatusOK, got.status)
		assert.Equal(t, "slept 1500 ms\n", got.body)
	}
	require.Eventually(t, func() bool { return s.Do(t, http.MethodGet, path).Status == http.StatusOK }, 5*time.Second, 5*time.Millisecond,
		"the slots come back once the slow requests are answered")
}
