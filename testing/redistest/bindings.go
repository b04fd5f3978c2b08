package redistest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// The checks below are shared by the Redis bindings (store/redis and
// store/rueidis): what they test lives in store/luascript, so each binding
// runs the same scenarios through its own client.

// NewStore returns a store of the binding under test, on a server the test
// started, with a key prefix no other test uses and opts applied after it.
type NewStore func(t testing.TB, opts ...luascript.Option) core.Store

// CacheMatchesRedis runs, for every algorithm, 400 requests (spends and a few
// refunds) over two keys through a store with its local cache of denials on,
// and requires each
// decision to equal the reference store's (but for Remaining, which a cached
// denial repeats): the cache may only answer what Redis would.
func CacheMatchesRedis(t *testing.T, newStore NewStore) {
	for _, alg := range core.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			cached := newStore(t, luascript.WithCallerClock(), luascript.WithMinTTL(time.Hour))
			ref := storetest.NewReference()
			limits := []core.Limit{core.Every(4, time.Second)}
			if alg.OneWord() {
				limits = []core.Limit{core.Every(4, time.Second).WithBurst(6), core.PerMinute(40)}
			}
			now := storetest.Start
			var denied int
			for i := range 400 {
				now = now.Add(time.Duration((i*7919)%97) * time.Millisecond / 4)
				req := core.TakeRequest{Key: []string{"x", "y"}[i%2], Algorithm: alg, Limits: limits, Cost: int64(1 + i%3/2), Now: now}
				if i%11 == 5 { // a refund, which must clear the cached denial
					req.Cost, req.Admitted = -1, now.Add(-time.Duration(i%4)*100*time.Millisecond)
				}
				want, err := ref.Take(context.Background(), req)
				must.NoError(t, err)
				got, err := cached.Take(context.Background(), req)
				must.NoError(t, err)
				want.Remaining, got.Remaining = 0, 0
				must.Equal(t, want, got, "step %d", i)
				if !got.Allowed {
					denied++
				}
			}
			must.Positive(t, denied, "the sequence must deny")
		})
	}
}

// CacheFlood floods one key limited to 10 per minute with 2,000 requests,
// with the local cache off and at its default size, and counts the script
// calls Redis runs (scriptCalls returns the EVALSHA and EVAL calls the server
// has run so far): every request without the cache, at most 20 with it.
func CacheFlood(t *testing.T, newStore NewStore, scriptCalls func(t testing.TB) int64) {
	const n = 2000
	for _, size := range []int{0, luascript.DefaultLocalCacheSize} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			st := newStore(t, luascript.WithLocalCache(size))
			req := core.TakeRequest{Key: "flood", Algorithm: core.GCRA, Limits: []core.Limit{core.PerMinute(10)}, Cost: 1}
			warm := req
			warm.Key = "warm" // loads the script
			_, err := st.Take(context.Background(), warm)
			must.NoError(t, err)
			before := scriptCalls(t)
			began := time.Now()
			var admitted int
			for range n {
				d, err := st.Take(context.Background(), req)
				must.NoError(t, err)
				if d.Allowed {
					admitted++
				} else {
					must.Positive(t, d.RetryAfter)
				}
			}
			took := time.Since(began)
			calls := scriptCalls(t) - before
			t.Logf("cache size %d: %d requests, %d admitted, %d script calls, %v per request", size, n, admitted, calls, took/n)
			expect.Equal(t, 10, admitted)
			if size == 0 {
				expect.Equal(t, int64(n), calls)
			} else {
				expect.LessOrEqual(t, calls, int64(20), "denials answered locally")
			}
		})
	}
}

// Reset checks that Reset forgets a denied key in Redis and in the local cache
// (one limit on the server's clock, and two limits on the caller's) with one
// script call (scriptCalls returns the EVALSHA and EVAL calls the server has
// run so far), rejects an invalid request without one, and reports an ended
// context with an error wrapping luascript.ErrRedis.
func Reset(t *testing.T, newStore NewStore, scriptCalls func(t testing.TB) int64) {
	cases := []struct {
		name string
		req  core.TakeRequest
		opts []luascript.Option
	}{
		{"one limit, server clock", core.TakeRequest{Key: "login", Algorithm: core.FixedWindow, Limits: []core.Limit{core.PerHour(1)}, Cost: 1}, nil},
		{"two limits, caller clock", core.TakeRequest{Key: "k", Algorithm: core.TokenBucket, Limits: []core.Limit{core.PerMinute(1), core.PerHour(5)}, Cost: 1, Now: storetest.Start},
			[]luascript.Option{luascript.WithCallerClock()}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := newStore(t, c.opts...)
			rs, ok := st.(core.Resetter)
			must.True(t, ok, "the store implements core.Resetter")
			ctx := context.Background()
			for round := range 2 { // the first may load the reset script
				d, err := st.Take(ctx, c.req)
				must.NoError(t, err)
				must.True(t, d.Allowed)
				d, err = st.Take(ctx, c.req)
				must.NoError(t, err)
				must.False(t, d.Allowed)
				before := scriptCalls(t)
				must.NoError(t, rs.Reset(ctx, c.req))
				if round == 1 {
					expect.Equal(t, int64(1), scriptCalls(t)-before, "a reset is one script call")
				}
				d, err = st.Take(ctx, c.req)
				must.NoError(t, err)
				expect.True(t, d.Allowed, "a reset key starts fresh, even with its denial cached")
				must.NoError(t, rs.Reset(ctx, c.req))
			}

			before := scriptCalls(t)
			bad := c.req
			bad.Limits = nil
			expect.ErrorIs(t, rs.Reset(ctx, bad), core.ErrInvalidLimit)
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			expect.ErrorIs(t, rs.Reset(cctx, c.req), luascript.ErrRedis)
			expect.Equal(t, before, scriptCalls(t), "neither reached Redis")
		})
	}
}

// Backend checks a binding's luascript.Backend against the server it sends to:
// the integers of a reply are appended after what dst holds, a script the
// server has never seen runs through the EVAL fallback (and then through
// EVALSHA), KEYS and ARGV arrive in order, and a reply that is not an array
// of integers, or an error reply, is an error.
func Backend(t *testing.T, b luascript.Backend) {
	ctx := context.Background()
	script := func(body string) *luascript.Script {
		sha, src := UnseenScript(body)
		return &luascript.Script{Source: src, SHA1: sha}
	}
	echo := script("local r = {#KEYS, #ARGV}\nfor _, a in ipairs(ARGV) do r[#r + 1] = tonumber(a) end\nreturn r")
	for range 2 { // EVAL on NOSCRIPT, then EVALSHA
		got, err := b.Eval(ctx, echo, []string{"{redistest}:a", "{redistest}:b"}, []string{"7", "-1", "9007199254740992"}, []int64{42})
		must.NoError(t, err)
		expect.Equal(t, []int64{42, 2, 3, 7, -1, 1 << 53}, got)
	}
	got, err := b.Eval(ctx, script("return {}"), []string{"{redistest}:a"}, nil, nil)
	must.NoError(t, err)
	expect.Empty(t, got)
	for name, src := range map[string]string{
		"a string in the array": "return {1, 'x'}",
		"not an array":          "return 'x'",
		"an integer":            "return 1",
		"an error reply":        "return redis.error_reply('redistest: boom')",
		"a runtime error":       "return nil + 1",
	} {
		_, err := b.Eval(ctx, script(src), []string{"{redistest}:a"}, nil, nil)
		expect.Error(t, err, name)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = b.Eval(cctx, echo, []string{"{redistest}:a"}, nil, nil)
	expect.ErrorIs(t, err, context.Canceled, "an ended context")
}
