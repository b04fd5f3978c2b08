package redisstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/store/luascript"
)

// newClient returns a client of a single Redis server, closed when t ends.
func newClient(t testing.TB, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// newClusterClient returns a client of the cluster, closed when t ends.
func newClusterClient(t testing.TB, addrs []string) *redis.ClusterClient {
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// testPrefix is a prefix no other test uses, so tests may share a server.
func testPrefix() string {
	return fmt.Sprintf("rwtest%x:", rand.Uint64())
}

func newStore(t testing.TB, c redis.UniversalClient, opts ...luascript.Option) *luascript.Store {
	t.Helper()
	s, err := New(c, append([]luascript.Option{luascript.WithPrefix(testPrefix())}, opts...)...)
	require.NoError(t, err)
	return s
}

// commandCalls sums, over addrs, the calls of every command in INFO
// commandstats (cmdstat_evalsha -> calls), leaving out INFO itself.
func commandCalls(t testing.TB, addrs ...string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a, ContextTimeoutEnabled: true})
		info, err := c.Info(context.Background(), "commandstats").Result()
		_ = c.Close()
		require.NoError(t, err)
		for _, line := range strings.Split(info, "\n") {
			name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
			if !ok {
				continue
			}
			name = strings.TrimPrefix(name, "cmdstat_")
			n, err := strconv.ParseInt(strings.SplitN(rest, ",", 2)[0], 10, 64)
			require.NoError(t, err, line)
			if !isConnectionSetup(name) {
				out[name] += n
			}
		}
	}
	return out
}

func diffCalls(before, after map[string]int64) map[string]int64 {
	d := map[string]int64{}
	for k, v := range after {
		if v-before[k] != 0 {
			d[k] = v - before[k]
		}
	}
	return d
}

// isConnectionSetup reports the commands a client sends on its own (a new
// connection's handshake, cluster discovery) and INFO, which the counting uses.
func isConnectionSetup(name string) bool {
	base, _, _ := strings.Cut(name, "|")
	switch base {
	case "info", "hello", "client", "cluster", "command", "ping", "readonly", "select":
		return true
	}
	return false
}
