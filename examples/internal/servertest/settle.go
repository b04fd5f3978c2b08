package servertest

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/examples/internal/flags"
)

// Settle starts a server with -settle-header X-Cost, limited to 100 an hour
// per IP, and checks that GET /tokens?n=K settles each request's
// reservation of 1 at K, before the headers go out: the response tells the
// quota after the settle, a bad K is a 400 that keeps its reservation, and
// a cost past the quota spends it all, so the next request waits. Then, in
// rules mode, the document's tokens policy does the same with a debt.
func Settle(t *testing.T, start Start) {
	t.Run("flag", func(t *testing.T) { settleFlag(t, start) })
	t.Run("rules", func(t *testing.T) { settleRules(t, start) })
}

// settleRules starts a server with -rules (a copy of examples/rules.yaml),
// whose tokens policy (10000/h per IP) reserves 1 and settles at X-Cost
// into a debt of up to 5000: a cost past the quota goes into the debt, and
// the next request's Retry-After counts it.
func settleRules(t *testing.T, start Start) {
	s := StartServer(t, start, "-rules", CopyRules(t, "rules.yaml"))
	require.NoError(t, s.WaitReload(t).Err)
	tokens := func(n string) Response { return s.Do(t, http.MethodGet, flags.TokensPath+"?n="+n) }
	r := tokens("3000")
	require.Equal(t, http.StatusOK, r.Status)
	assert.Equal(t, `"tokens";q=10000;w=3600`, r.Header.Get("RateLimit-Policy"))
	assert.Equal(t, "7000", r.Header.Get("X-RateLimit-Remaining"))
	r = tokens("12000")
	assert.Equal(t, http.StatusOK, r.Status)
	assert.Equal(t, "0", r.Header.Get("X-RateLimit-Remaining"), "the quota spent, and 5000 owed: the rest is forgiven")
	r = tokens("1")
	assert.Equal(t, http.StatusTooManyRequests, r.Status)
	assert.Equal(t, "1801", r.Header.Get("Retry-After"), "5000 owed at 0.36 s each, and the request's own 0.36 s")
}

// settleFlag is Settle's check of -settle-header.
func settleFlag(t *testing.T, start Start) {
	s := StartServer(t, start, "-limit", "100/h", "-algorithm", "gcra", "-settle-header", flags.CostHeader)
	tokens := func(n string) Response { return s.Do(t, http.MethodGet, flags.TokensPath+"?n="+n) }
	r := tokens("40")
	require.Equal(t, http.StatusOK, r.Status)
	assert.Equal(t, "40", r.Header.Get(flags.CostHeader))
	assert.Equal(t, "40 tokens\n", r.Body)
	assert.Equal(t, "60", r.Header.Get("X-RateLimit-Remaining"), "the reservation of 1 settled at 40")
	r = tokens("0")
	assert.Equal(t, "0", r.Header.Get(flags.CostHeader))
	assert.Equal(t, "60", r.Header.Get("X-RateLimit-Remaining"), "a cost of 0 gives the reservation back")
	left := 60
	for _, bad := range []string{"NaN", "-1", "1000001", "1e3", "0x10", "", "%201"} {
		r = tokens(bad)
		left--
		assert.Equal(t, http.StatusBadRequest, r.Status, "n=%q", bad)
		assert.Empty(t, r.Header.Get(flags.CostHeader))
		assert.Equal(t, strconv.Itoa(left), r.Header.Get("X-RateLimit-Remaining"), "n=%q keeps its reservation", bad)
	}
	r = s.Do(t, http.MethodGet, "/")
	left--
	assert.Equal(t, strconv.Itoa(left), r.Header.Get("X-RateLimit-Remaining"), "a response without the header keeps its reservation")
	r = tokens(strconv.Itoa(flags.MaxTokens))
	assert.Equal(t, http.StatusOK, r.Status)
	assert.Equal(t, "0", r.Header.Get("X-RateLimit-Remaining"), "a million spends what was left")
	r = tokens("1")
	assert.Equal(t, http.StatusTooManyRequests, r.Status)
	assert.Equal(t, "36", r.Header.Get("Retry-After"), "one emission interval of 100/h")
}
