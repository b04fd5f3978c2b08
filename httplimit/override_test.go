package httplimit

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/fakereq"
)

// overridden is tiered's limiter (1/min per peer) with overrides for three
// peers: one blocked, one unlimited, one with a limiter of its own (5/min).
func overridden(t *testing.T, opts ...Option) (*Policy, *core.Limiter) {
	t.Helper()
	_, lim := tiered(t)
	partner, err := lim.Tier("partner", core.PerMinute(5))
	require.NoError(t, err)
	p, err := New(lim, append([]Option{WithKey(peerKey), WithOverrides(map[string]Override{
		"10.0.0.1:1": {Blocked: true},
		"10.0.0.2:1": {Unlimited: true},
		"10.0.0.3:1": {Limiter: partner},
	})}, opts...)...)
	require.NoError(t, err)
	return p, lim
}

func TestWithOverridesRefusesAmbiguousOverrides(t *testing.T) {
	_, lim := tiered(t)
	for name, ov := range map[string]Override{
		"none":                       {},
		"two":                        {Blocked: true, Unlimited: true},
		"all":                        {Blocked: true, Unlimited: true, Limiter: lim},
		"a name on an unlimited key": {Unlimited: true, Name: "x"},
		"a name on a limiter":        {Limiter: lim, Name: "x"},
	} {
		_, err := New(lim, WithOverrides(map[string]Override{"k": ov}))
		assert.ErrorIs(t, err, core.ErrInvalidOption, name)
	}
}

// A blocked key gets 429 at once with a quota of 0, and the store never
// counts it.
func TestBlockedKeyIsDeniedWithAZeroQuota(t *testing.T) {
	rec := &recorder{}
	p, lim := overridden(t, WithObserver(rec))
	w, _, next := serve(p, fakereq.New("10.0.0.1:1", "Accept", "application/json"))
	assert.False(t, next)
	assert.Equal(t, 429, w.Code)
	assert.Equal(t, "0", w.Header().Get(HeaderXRateLimitLimit))
	assert.Equal(t, "0", w.Header().Get(HeaderXRateLimitRemain))
	assert.Equal(t, `"default";q=0;w=60`, w.Header().Get(HeaderRateLimitPolicy))
	assert.Equal(t, `"default";r=0;t=60`, w.Header().Get(HeaderRateLimit))
	assert.Equal(t, "60", w.Header().Get(HeaderRetryAfter))
	assert.Contains(t, w.Body.String(), `"violated-policies":["default"]`)
	assert.Equal(t, OutcomeDenied, rec.last().Outcome)
	d, err := lim.Peek(context.Background(), "10.0.0.1:1")
	require.NoError(t, err)
	assert.Equal(t, int64(1), d.Remaining, "a blocked key's requests never reach the store")
}

// A named blocked key is answered under its name (rules names it
// "policy/override"), and keys blocked under different names keep theirs.
func TestBlockedKeyIsAnsweredUnderItsName(t *testing.T) {
	rec := &recorder{}
	_, lim := tiered(t)
	p, err := New(lim, WithKey(peerKey), WithObserver(rec), WithOverrides(map[string]Override{
		"10.0.0.1:1": {Blocked: true, Name: "api/override"},
		"10.0.0.2:1": {Blocked: true, Name: "api/leaked"},
		"10.0.0.3:1": {Blocked: true},
	}))
	require.NoError(t, err)
	for peer, name := range map[string]string{"10.0.0.1:1": "api/override", "10.0.0.2:1": "api/leaked", "10.0.0.3:1": "default"} {
		w, _, next := serve(p, fakereq.New(peer, "Accept", "application/json"))
		assert.False(t, next)
		assert.Equal(t, `"`+name+`";q=0;w=60`, w.Header().Get(HeaderRateLimitPolicy), peer)
		assert.Equal(t, `"`+name+`";r=0;t=60`, w.Header().Get(HeaderRateLimit), peer)
		assert.Contains(t, w.Body.String(), `"violated-policies":["`+name+`"]`, peer)
		assert.Equal(t, name, rec.last().Policy, peer)
	}
}

// In a dry run a blocked key goes on, with the truthful headers.
func TestBlockedKeyInADryRun(t *testing.T) {
	p, _ := overridden(t, WithDryRun())
	w, _, next := serve(p, fakereq.New("10.0.0.1:1"))
	assert.True(t, next)
	assert.Equal(t, `"default";r=0;t=60`, w.Header().Get(HeaderRateLimit))
	assert.Empty(t, w.Header().Get(HeaderRetryAfter))
}

// An unlimited key passes without headers, reported as skipped.
func TestUnlimitedKeyPassesUncounted(t *testing.T) {
	rec := &recorder{}
	p, _ := overridden(t, WithObserver(rec))
	for range 5 {
		w, _, next := serve(p, fakereq.New("10.0.0.2:1"))
		require.True(t, next)
		assert.Empty(t, w.Header().Get(HeaderRateLimit))
	}
	assert.Equal(t, OutcomeSkipped, rec.last().Outcome)
}

// A key with limits of its own is decided by them, named by them, and reset
// and peeked through the policy.
func TestOverrideLimitsAreTheKeysOwn(t *testing.T) {
	p, _ := overridden(t)
	for i := range 5 {
		w, _, next := serve(p, fakereq.New("10.0.0.3:1"))
		require.True(t, next, "request %d", i)
		assert.Equal(t, `"partner";q=5;w=60`, w.Header().Get(HeaderRateLimitPolicy))
	}
	w, _, next := serve(p, fakereq.New("10.0.0.3:1"))
	assert.False(t, next)
	assert.Equal(t, 429, w.Code)
	d, err := p.Peek(context.Background(), "partner", "10.0.0.3:1")
	require.NoError(t, err)
	assert.Equal(t, int64(0), d.Remaining)
	require.NoError(t, p.Reset(context.Background(), "10.0.0.3:1"))
	d, err = p.Peek(context.Background(), "partner", "10.0.0.3:1")
	require.NoError(t, err)
	assert.Equal(t, int64(5), d.Remaining)
	// Any other key keeps the policy's own limit.
	w, _, _ = serve(p, fakereq.New("192.0.2.9:1"))
	assert.Equal(t, `"default";q=1;w=60`, w.Header().Get(HeaderRateLimitPolicy))
}
