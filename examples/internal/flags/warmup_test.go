package flags

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/testing/redistest"
)

// Build warms the Redis client up before the server takes requests: every
// master of a cluster (and a single server) answers a PING during Build, so
// the first burst of requests does not pay the client's start-up (slot map,
// command table, dials) within the store timeout.
func TestBuildWarmsRedisUp(t *testing.T) {
	tests := []struct {
		name  string
		addrs func(t *testing.T) []string
		store func(addrs []string) string
	}{
		{"single node", func(t *testing.T) []string { return []string{redistest.Start(t).Addr()} },
			func(addrs []string) string { return "redis://" + addrs[0] + "/0" }},
		{"cluster", func(t *testing.T) []string { return redistest.StartCluster(t) },
			func(addrs []string) string { return "redis-cluster://" + strings.Join(addrs, ",") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addrs := tt.addrs(t)
			before := pingCalls(t, addrs)
			var errLog bytes.Buffer
			c, err := Parse("ex", []string{"-store", tt.store(addrs)}, &bytes.Buffer{})
			require.NoError(t, err)
			c.ErrorLog = &errLog
			s, err := c.Build()
			require.NoError(t, err)
			after := pingCalls(t, addrs)
			require.NoError(t, s.Close())
			for i, a := range addrs {
				assert.Greater(t, after[i], before[i], "no PING reached %s during Build", a)
			}
			assert.Empty(t, errLog.String())
		})
	}
}

// With no Redis at the address, Build still succeeds (the fail mode decides
// what requests get), and the error log says Redis did not answer at start.
func TestBuildRedisDownAtStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	tests := []struct{ store, fail string }{
		{"redis://" + addr + "/0", "open"},
		{"redis-cluster://" + addr, "closed"},
	}
	for _, tt := range tests {
		t.Run(tt.store+" "+tt.fail, func(t *testing.T) {
			var errLog bytes.Buffer
			c, err := Parse("ex", []string{"-store", tt.store, "-fail", tt.fail}, &bytes.Buffer{})
			require.NoError(t, err)
			c.ErrorLog = &errLog
			s, err := c.Build()
			require.NoError(t, err)
			require.NoError(t, s.Close())
			assert.True(t, strings.HasPrefix(errLog.String(), "rate limiter: redis did not answer at start (failing "+tt.fail+" until it does): "), errLog.String())
		})
	}
}

// pingCalls returns, for each address, the PING calls in INFO commandstats.
func pingCalls(t *testing.T, addrs []string) []int64 {
	t.Helper()
	calls := make([]int64, len(addrs))
	for i, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a, ContextTimeoutEnabled: true})
		info, err := c.Info(context.Background(), "commandstats").Result()
		require.NoError(t, c.Close())
		require.NoError(t, err)
		for _, line := range strings.Split(info, "\n") {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_ping:calls="); ok {
				calls[i], err = strconv.ParseInt(strings.SplitN(rest, ",", 2)[0], 10, 64)
				require.NoError(t, err, line)
			}
		}
	}
	return calls
}
