package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/testing/redistest"
)

// On Redis's own clock (the default), a key's slots live in one hash-tagged
// sorted set with a TTL that follows its latest deadline, deleted once
// empty; acquiring costs one script call, releasing one.
func TestInFlightOnRedisTime(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr())
	st := newStore(t, client)
	ctx := context.Background()
	lim, err := core.NewLimiter(st, core.GCRA, core.PerSecond(100), core.WithNamespace("api"),
		core.WithInFlight(core.InFlight{Slots: 2, Lease: 20 * time.Second}))
	must.NoError(t, err)
	key := st.InFlightKey("api", "{alice}")
	expect.Contains(t, key, "{api:%7Balice%7D}")

	warm, _, err := lim.Acquire(ctx, "warm-up") // loads the scripts
	must.NoError(t, err)
	must.NoError(t, warm.Release(ctx))

	before := commandCalls(t, srv.Addr())
	a, d, err := lim.Acquire(ctx, "{alice}")
	must.NoError(t, err)
	must.True(t, d.Allowed)
	expect.Equal(t, int64(1), diffCalls(before, commandCalls(t, srv.Addr()))["evalsha"], "one round trip")
	expect.Equal(t, key, d.Lease.Key)
	expect.InDelta(t, float64(20*time.Second), float64(time.Until(d.Lease.Deadline)), float64(2*time.Second))
	ttl, err := client.PTTL(ctx, key).Result()
	must.NoError(t, err)
	expect.InDelta(t, float64(20*time.Second), float64(ttl), float64(2*time.Second), "the TTL follows the deadline")

	b, d, err := lim.Acquire(ctx, "{alice}")
	must.NoError(t, err)
	must.True(t, d.Allowed)
	_, d, err = lim.Acquire(ctx, "{alice}")
	must.NoError(t, err)
	must.False(t, d.Allowed)
	expect.Equal(t, int64(2), d.Held)
	expect.InDelta(t, float64(20*time.Second), float64(d.NextDeadline), float64(2*time.Second), "the earliest deadline")
	held, err := lim.PeekSlots(ctx, "{alice}")
	must.NoError(t, err)
	expect.Equal(t, int64(2), held)

	renewed, expired, err := lim.RenewSlots(ctx)
	must.NoError(t, err)
	expect.Equal(t, 2, renewed)
	expect.Zero(t, expired)

	before = commandCalls(t, srv.Addr())
	must.NoError(t, a.Release(ctx))
	calls := diffCalls(before, commandCalls(t, srv.Addr()))
	expect.Equal(t, int64(1), calls["evalsha"], "one round trip")
	expect.Zero(t, calls["eval"])
	must.NoError(t, b.Release(ctx))
	n, err := client.Exists(ctx, key).Result()
	must.NoError(t, err)
	expect.Zero(t, n, "an empty slot set is deleted")
}
