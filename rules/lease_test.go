package rules

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/store/memory"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

func TestParseTokenLease(t *testing.T) {
	doc, err := Parse([]byte(one("{name: a, algorithm: fixed-window, limits: [100/m], lease_tokens: 20, lease_ttl: 1s}")), "t")
	require.NoError(t, err)
	assert.Equal(t, core.TokenLease{Max: 20, TTL: time.Second}, doc.Policies[0].TokenLease)
	alone, err := Parse([]byte(one("{name: a, limits: [100/m], lease_tokens: 20}")), "t")
	require.NoError(t, err)
	assert.Equal(t, core.TokenLease{Max: 20}, alone.Policies[0].TokenLease, "the TTL defaults when the limiter is built")
	assert.Equal(t, core.TokenLease{Max: 20, TTL: DefaultLeaseTTL}, effectiveTokenLease(alone.Policies[0].TokenLease, alone.Policies[0].Limits))
	assert.Equal(t, core.TokenLease{Max: 2, TTL: 50 * time.Millisecond}, effectiveTokenLease(core.TokenLease{Max: 2}, []core.Limit{core.Every(5, 50*time.Millisecond)}))
	plain, err := Parse([]byte(one("{name: a, algorithm: fixed-window, limits: [100/m]}")), "t")
	require.NoError(t, err)
	assert.NotEqual(t, plain.Digest(), doc.Digest(), "the digest covers the token lease")
	assert.NotEqual(t, alone.Digest(), doc.Digest())
}

func TestParseProblemsOfTokenLease(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		wants []want
	}{
		{"no tokens", one("{name: a, limits: [1/s], lease_tokens: 0}"),
			[]want{{"4:44", "policies[0].lease_tokens", "lease_tokens 0: a lease takes at least 1 token"}}},
		{"a string for tokens", one("{name: a, limits: [1/s], lease_tokens: many}"),
			[]want{{"4:44", "policies[0].lease_tokens", "want a whole number, got a string"}}},
		{"more tokens than the rate", one("{name: a, limits: [10/s], lease_tokens: 11}"),
			[]want{{"4:45", "policies[0].lease_tokens", "token lease of 11 tokens is above the limit 10/s"}}},
		{"more tokens than a tier's rate", "schema: 1\nversion: 1\npolicies:\n  - {name: a, tiers: {by: {header: X-Plan}, default: free, limits: {free: [100/s], paid: [5/s]}}, lease_tokens: 10}\n",
			[]want{{"4:113", "policies[0].lease_tokens", "above the limit 5/s"}}},
		{"a ttl of 0", one("{name: a, limits: [10/s], lease_tokens: 2, lease_ttl: 0s}"),
			[]want{{"4:59", "policies[0].lease_ttl", `lease_ttl "0s" is not a duration above 0`}}},
		{"a ttl that is no duration", one("{name: a, limits: [10/s], lease_tokens: 2, lease_ttl: soon}"),
			[]want{{"4:59", "policies[0].lease_ttl", `lease_ttl "soon" is not a duration`}}},
		{"a ttl longer than the window", one("{name: a, limits: [10/s], lease_tokens: 2, lease_ttl: 2s}"),
			[]want{{"4:45", "policies[0].lease_tokens", "token lease TTL 2s is longer than the window of 10/s"}}},
		{"a ttl without tokens", one("{name: a, limits: [10/s], lease_ttl: 1s}"),
			[]want{{"4:42", "policies[0].lease_ttl", "lease_ttl applies to a token lease: write lease_tokens beside it"}}},
		{"the sliding log", one("{name: a, algorithm: sliding-log, limits: [10/s], lease_tokens: 2}"),
			[]want{{"4:69", "policies[0].lease_tokens", "the sliding log cannot be leased exactly"}}},
		{"the leaky bucket", one("{name: a, algorithm: leaky-bucket, limits: [10/s], lease_tokens: 2}"),
			[]want{{"4:70", "policies[0].lease_tokens", "the leaky bucket cannot be leased exactly"}}},
		{"an unlimited policy", one("{name: a, unlimited: true, lease_tokens: 2}"),
			[]want{{"4:46", "policies[0].lease_tokens", "an unlimited policy has no tokens to lease"}}},
	}
	runProblems(t, tests)
}

// A rule set's limiter leases a hot key's tokens from a store that leases
// (the reference store here; Redis in production), and admits exactly the
// window's limit; a store that leases nothing is refused when the set is
// built.
func TestSetTokenLease(t *testing.T) {
	doc, err := Parse([]byte(one("{name: api, algorithm: fixed-window, limits: [100/h], lease_tokens: 20}")), "t")
	require.NoError(t, err)
	set, err := New(storetest.NewReference(), doc)
	require.NoError(t, err)
	admitted := 0
	for range 300 {
		pass, ok := set.Handle(context.Background(), fakereq.New("192.0.2.1:1"), httptest.NewRecorder())
		if ok {
			admitted++
			pass.Release()
		}
	}
	assert.Equal(t, 100, admitted)

	st, err := memory.New()
	require.NoError(t, err)
	defer st.Close()
	_, err = New(st, doc)
	require.ErrorIs(t, err, core.ErrInvalidOption)
	assert.Contains(t, err.Error(), "leases no tokens")
}
