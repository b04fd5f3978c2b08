package redisstore

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// conformanceOpts: the suite moves a manual clock, so the store decides at the
// caller's time; the floor on TTLs keeps Redis from expiring state on its own
// clock while the manual one stands still; the suite compares every field, and
// cached denials repeat their Remaining, so the cache is off (its own test
// compares it with Redis).
func conformanceOpts() []luascript.Option {
	return []luascript.Option{luascript.WithCallerClock(), luascript.WithMinTTL(time.Hour), luascript.WithLocalCache(0)}
}

func TestConformanceSingle(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	storetest.Run(t, func(t *testing.T) core.Store {
		return newStore(t, client, conformanceOpts()...)
	})
}

func TestConformanceCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starting a cluster takes seconds")
	}
	addrs := redistest.StartCluster(t)
	client := newClusterClient(t, addrs)
	storetest.Run(t, func(t *testing.T) core.Store {
		return newStore(t, client, conformanceOpts()...)
	})
}

var _ redis.UniversalClient = (*redis.ClusterClient)(nil)
