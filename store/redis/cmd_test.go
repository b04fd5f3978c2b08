package redisstore

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// TestDecisionCmd: a decision's call goes as EVALSHA sha numkeys keys args,
// every key and argument as the *string it was given (nothing boxed), is
// never retried, and prints as Redis receives it, then its reply or error.
func TestDecisionCmd(t *testing.T) {
	sha := "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
	keys, args := []string{"rw:{user-7}:gcra:1"}, []string{"1", "100000", "100000"}
	cmd := newDecisionCmd(context.Background(), "evalsha", &sha, keys, args)
	got := cmd.Args()
	require.Len(t, got, 7)
	assert.Equal(t, []any{"evalsha", &sha, 1, &keys[0], &args[0], &args[1], &args[2]}, got)
	assert.True(t, cmd.NoRetry())
	cmd.SetVal([]int64{1, 1700000000000000, 0})
	assert.Equal(t, "evalsha "+sha+" 1 rw:{user-7}:gcra:1 1 100000 100000: [1 1700000000000000 0]", cmd.String())
	cmd.SetErr(redis.Nil)
	assert.Equal(t, "evalsha "+sha+" 1 rw:{user-7}:gcra:1 1 100000 100000: redis: nil", cmd.String())
}

// TestGapCmd: the call of a script that replies with one integer goes as a
// decision's does, is never retried, and prints its integer.
func TestGapCmd(t *testing.T) {
	sha := "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
	keys, args := []string{"rw:{user-7}:g"}, []string{"1", "100000", "100000"}
	cmd := newGapCmd(context.Background(), "evalsha", &sha, keys, args)
	assert.Equal(t, []any{"evalsha", &sha, 1, &keys[0], &args[0], &args[1], &args[2]}, cmd.Args())
	assert.True(t, cmd.NoRetry())
	cmd.SetVal(-100001)
	assert.Equal(t, "evalsha "+sha+" 1 rw:{user-7}:g 1 100000 100000: -100001", cmd.String())
	cmd.SetErr(redis.Nil)
	assert.Equal(t, "evalsha "+sha+" 1 rw:{user-7}:g 1 100000 100000: redis: nil", cmd.String())
}

// TestRingRoutesByKey: a ring client hashes a decision's key, sent as a
// *string, to the shard it hashes the same key as a string to, so the state
// is where the ring's own commands find it.
func TestRingRoutesByKey(t *testing.T) {
	a, b := redistest.Start(t), redistest.StartLocal(t)
	ring := redis.NewRing(&redis.RingOptions{
		Addrs:                 map[string]string{"a": a.Addr(), "b": b.Addr()},
		ContextTimeoutEnabled: true,
	})
	t.Cleanup(func() { _ = ring.Close() })
	st := newStore(t, ring, luascript.WithLocalCache(0))
	for _, key := range []string{"alice", "bob", "carol", "dave", "erin", "frank"} {
		req := core.TakeRequest{Key: key, Algorithm: core.GCRA, Limits: []core.Limit{core.PerMinute(10)}, Cost: 1}
		d, err := st.Take(bg, req)
		require.NoError(t, err)
		require.True(t, d.Allowed)
		redisKeys, err := st.Keys(req)
		require.NoError(t, err)
		n, err := ring.Exists(bg, redisKeys[0]).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "the ring finds %s's state under %s", key, redisKeys[0])
	}
}
