package redisstore

import (
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/testing/redistest"
)

// TestRulesBackend runs the checks every binding's rules backend shares (see
// redistest.RulesBackendChecks) on a single server and a cluster: Eval runs
// an unseen script through EVAL, then EVALSHA, and turns every reply but an
// array of strings into an error; Subscribe confirms, delivers what any node
// publishes, and ends when the server kills the subscriber (go-redis does
// not resubscribe: the caller subscribes again) or ctx ends.
func TestRulesBackend(t *testing.T) {
	redistest.RulesBackendChecks(t, func(t *testing.T, addrs []string, cluster bool) redistest.RulesBackend {
		var client redis.UniversalClient
		if cluster {
			client = newClusterClient(t, addrs)
		} else {
			client = newClient(t, addrs[0])
		}
		b, err := NewRulesBackend(client)
		require.NoError(t, err)
		return b
	}, redistest.SubscriptionEnds)
}

// The binding insists, as New does, on a client that honours deadlines.
func TestNewRulesBackendBadClient(t *testing.T) {
	_, err := NewRulesBackend(nil)
	assert.ErrorIs(t, err, ErrClient)
	lax := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = lax.Close() })
	_, err = NewRulesBackend(lax)
	assert.ErrorIs(t, err, ErrClient)
	assert.Contains(t, err.Error(), "ContextTimeoutEnabled")
}

// A lost reply to a push is an error, and the script ran once: go-redis's
// retries, which would run it again, are off.
func TestRulesBackendLostReply(t *testing.T) {
	addr := redistest.Start(t).Addr()
	p := startDropProxy(t, addr)
	client := redis.NewClient(&redis.Options{Addr: p.ln.Addr().String(), ContextTimeoutEnabled: true, MaxRetries: 5})
	t.Cleanup(func() { _ = client.Close() })
	b, err := NewRulesBackend(client)
	require.NoError(t, err)
	key := testPrefix() + "{rules}:n"
	sha, src := redistest.UnseenScript("return {tostring(redis.call('INCR', KEYS[1]))}")
	got, err := b.Eval(bg, sha, src, []string{key}, nil) // loads the script
	require.NoError(t, err)
	require.Equal(t, []string{"1"}, got)
	p.drop.Store(true)
	_, err = b.Eval(bg, sha, src, []string{key}, nil)
	require.Error(t, err)
	n, err := newClient(t, addr).Get(bg, key).Int()
	require.NoError(t, err)
	assert.Equal(t, 2, n, "the script ran once and was not replayed")
}
