package httplimit

import (
	"context"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
)

// overridden is tiered's limiter (1/min per peer) with overrides for three
// peers: one blocked, one unlimited, one with a limiter of its own (5/min).
func overridden(t *testing.T, opts ...Option) (*Policy, *core.Limiter) {
	t.Helper()
	_, lim := tiered(t)
	partner, err := lim.Tier("partner", core.PerMinute(5))
	must.NoError(t, err)
	p, err := New(lim, append([]Option{WithKey(peerKey), WithOverrides(map[string]Override{
		"10.0.0.1:1": {Blocked: true},
		"10.0.0.2:1": {Unlimited: true},
		"10.0.0.3:1": {Limiter: partner},
	})}, opts...)...)
	must.NoError(t, err)
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
		expect.ErrorIs(t, err, core.ErrInvalidOption, name)
	}
}

// A blocked key gets 429 at once with a quota of 0, and the store never
// counts it.
func TestBlockedKeyIsDeniedWithAZeroQuota(t *testing.T) {
	rec := &recorder{}
	p, lim := overridden(t, WithObserver(rec))
	w, _, next := serve(p, fakereq.New("10.0.0.1:1", "Accept", "application/json"))
	expect.False(t, next)
	expect.Equal(t, 429, w.Code)
	expect.Equal(t, "0", w.Header().Get(HeaderXRateLimitLimit))
	expect.Equal(t, "0", w.Header().Get(HeaderXRateLimitRemain))
	expect.Equal(t, `"default";q=0;w=60`, w.Header().Get(HeaderRateLimitPolicy))
	expect.Equal(t, `"default";r=0;t=60`, w.Header().Get(HeaderRateLimit))
	expect.Equal(t, "60", w.Header().Get(HeaderRetryAfter))
	expect.Contains(t, w.Body.String(), `"violated-policies":["default"]`)
	expect.Equal(t, OutcomeDenied, rec.last().Outcome)
	d, err := lim.Peek(context.Background(), "10.0.0.1:1")
	must.NoError(t, err)
	expect.Equal(t, int64(1), d.Remaining, "a blocked key's requests never reach the store")
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
	must.NoError(t, err)
	for peer, name := range map[string]string{"10.0.0.1:1": "api/override", "10.0.0.2:1": "api/leaked", "10.0.0.3:1": "default"} {
		w, _, next := serve(p, fakereq.New(peer, "Accept", "application/json"))
		expect.False(t, next)
		expect.Equal(t, `"`+name+`";q=0;w=60`, w.Header().Get(HeaderRateLimitPolicy), peer)
		expect.Equal(t, `"`+name+`";r=0;t=60`, w.Header().Get(HeaderRateLimit), peer)
		expect.Contains(t, w.Body.String(), `"violated-policies":["`+name+`"]`, peer)
		expect.Equal(t, name, rec.last().Policy, peer)
	}
}

// In a dry run a blocked key goes on, with the truthful headers.
func TestBlockedKeyInADryRun(t *testing.T) {
	p, _ := overridden(t, WithDryRun())
	w, _, next := serve(p, fakereq.New("10.0.0.1:1"))
	expect.True(t, next)
	expect.Equal(t, `"default";r=0;t=60`, w.Header().Get(HeaderRateLimit))
	expect.Empty(t, w.Header().Get(HeaderRetryAfter))
}

// An unlimited key passes without headers, reported as skipped.
func TestUnlimitedKeyPassesUncounted(t *testing.T) {
	rec := &recorder{}
	p, _ := overridden(t, WithObserver(rec))
	for range 5 {
		w, _, next := serve(p, fakereq.New("10.0.0.2:1"))
		must.True(t, next)
		expect.Empty(t, w.Header().Get(HeaderRateLimit))
	}
	expect.Equal(t, OutcomeSkipped, rec.last().Outcome)
}

// A key with limits of its own is decided by them, named by them, and reset
// and peeked through the policy.
func TestOverrideLimitsAreTheKeysOwn(t *testing.T) {
	p, _ := overridden(t)
	for i := range 5 {
		w, _, next := serve(p, fakereq.New("10.0.0.3:1"))
		must.True(t, next, "request %d", i)
		expect.Equal(t, `"partner";q=5;w=60`, w.Header().Get(HeaderRateLimitPolicy))
	}
	w, _, next := serve(p, fakereq.New("10.0.0.3:1"))
	expect.False(t, next)
	expect.Equal(t, 429, w.Code)
	d, err := p.Peek(context.Background(), "partner", "10.0.0.3:1")
	must.NoError(t, err)
	expect.Equal(t, int64(0), d.Remaining)
	must.NoError(t, p.Reset(context.Background(), "10.0.0.3:1"))
	d, err = p.Peek(context.Background(), "partner", "10.0.0.3:1")
	must.NoError(t, err)
	expect.Equal(t, int64(5), d.Remaining)
	// Any other key keeps the policy's own limit.
	w, _, _ = serve(p, fakereq.New("192.0.2.9:1"))
	expect.Equal(t, `"default";q=1;w=60`, w.Header().Get(HeaderRateLimitPolicy))
}
