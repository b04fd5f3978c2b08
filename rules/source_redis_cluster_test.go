package rules

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/testing/redistest"
)

// On a Redis Cluster, the instance watching talks to another node than the
// one the pushes go through: it reads the rules through a redirection, and
// receives the announcements the owner of their slot publishes across the
// cluster, before and after its subscription is killed.
func TestWatchRedisCluster(t *testing.T) {
	addrs := redistest.StartCluster(t)
	prefix := redisPrefix()
	owner := slotOwner(t, addrs, prefix+"{rules}:doc")
	other := addrs[0]
	if other == owner {
		other = addrs[1]
	}
	pusher := newRESP(owner)
	push(t, pusher, prefix, 2, "2/s")
	s, reloads := newRedisSet(t, 1)

	w := watch(t, s, newRESP(other), prefix)
	assert.Equal(t, redisLoad(2, "2/s"), nextReload(t, reloads), "read through a redirection")
	subscribedAndPolled(t, w, 1)
	push(t, pusher, prefix, 3, "3/s")
	assert.Equal(t, redisLoad(3, "3/s"), nextReload(t, reloads))
	waitStats(t, w, "the announcement", func(s RedisWatcherStats) bool { return s.Announcements == 1 })

	killPubSub(t, other)
	subscribedAndPolled(t, w, 2)
	push(t, pusher, prefix, 4, "4/s")
	assert.Equal(t, redisLoad(4, "4/s"), nextReload(t, reloads))
	waitStats(t, w, "the announcement on the new subscription", func(s RedisWatcherStats) bool { return s.Announcements == 2 })
	assert.Equal(t, int64(4), s.Version())
}

// slotOwner returns the node among addrs that serves key's slot: the one
// that answers for it rather than redirecting.
func slotOwner(t *testing.T, addrs []string, key string) string {
	t.Helper()
	for _, a := range addrs {
		_, err := command(context.Background(), a, "EXISTS", key)
		if re := redisError(""); errors.As(err, &re) && strings.HasPrefix(string(re), "MOVED ") {
			continue
		}
		require.NoError(t, err)
		return a
	}
	t.Fatalf("no node of %v serves %s", addrs, key)
	return ""
}
