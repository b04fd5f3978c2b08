package main

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/store/memory"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// watcher is an instance watching the rules in Redis through go-redis, as
// an application does, and what its reload hook hears.
type watcher struct {
	set     *rules.Set
	w       *rules.RedisWatcher
	reloads chan rules.Reload
}

func startWatcher(t *testing.T, tg target, client redis.UniversalClient) *watcher {
	t.Helper()
	st, err := memory.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	doc, err := rules.Parse([]byte("schema: 1\nversion: 1\npolicies:\n  - {name: api, limits: [1/s]}\n"), "built-in")
	require.NoError(t, err)
	wt := &watcher{reloads: make(chan rules.Reload, 10)}
	wt.set, err = rules.New(st, doc, rules.WithLogger(slog.New(slog.DiscardHandler)), rules.WithReloadHook(func(r rules.Reload) { wt.reloads <- r }))
	require.NoError(t, err)
	b, err := redisstore.NewRulesBackend(client)
	require.NoError(t, err)
	wt.w, err = rules.WatchRedis(wt.set, b, rules.WithRedisPrefix(tg.prefix), rules.WithRedisPollInterval(time.Hour))
	require.NoError(t, err)
	t.Cleanup(func() { _ = wt.w.Close() })
	return wt
}

func (wt *watcher) next(t *testing.T) rules.Reload {
	t.Helper()
	select {
	case r := <-wt.reloads:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no reload reported in 10s")
		return rules.Reload{}
	}
}

// waitSubscribed waits until the watcher has n subscriptions and read the
// version after the last.
func (wt *watcher) waitSubscribed(t *testing.T, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s := wt.w.Stats(); s.Subscriptions < n || s.Polls < n; s = wt.w.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("subscription %d not confirmed: %+v", n, s)
		}
		time.Sleep(2 * time.Millisecond) // waits for the watcher; moves no time
	}
}

// waitAnnouncements waits until the watcher has received n announcements.
func (wt *watcher) waitAnnouncements(t *testing.T, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s := wt.w.Stats(); s.Announcements < n; s = wt.w.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("announcement %d not received: %+v", n, s)
		}
		time.Sleep(2 * time.Millisecond) // waits for the watcher; moves no time
	}
}

// The operator's push reaches every instance on its announcement, through
// go-redis on a single server and a cluster, and again after the
// instances' subscriptions are killed (they subscribe again).
func TestPushReachesWatchers(t *testing.T) {
	t.Parallel()
	for name, start := range targets {
		t.Run(name, func(t *testing.T) {
			tg := start(t)
			var ws []*watcher
			for range 2 { // each instance with a client of its own
				opts := &redis.UniversalOptions{Addrs: addrsOf(t, tg), IsClusterMode: name == "cluster", ContextTimeoutEnabled: true}
				c := redis.NewUniversalClient(opts)
				t.Cleanup(func() { _ = c.Close() })
				wt := startWatcher(t, tg, c)
				assert.ErrorIs(t, wt.next(t).Err, rules.ErrNoRules)
				wt.waitSubscribed(t, 1)
				ws = append(ws, wt)
			}
			require.Equal(t, exitOK, tg.run(t, "rules", "push", "testdata/rules.yaml").code)
			v7 := rules.Reload{Source: rules.RedisSource, Version: 7, Digest: mustDigest(t, "testdata/rules.yaml")}
			for _, wt := range ws {
				assert.Equal(t, v7, wt.next(t))
				assert.Equal(t, int64(1), wt.w.Stats().Announcements)
			}
			show := tg.run(t, "rules", "show")
			assert.Equal(t, tg.docKey()+" holds "+ws[0].set.Identity().String()+"\n", show.stderr, "what the tool shows is what the instances run")
			assert.Equal(t, ws[0].set.Identity(), ws[1].set.Identity())

			// The same rules pushed again: announced again, loaded by nobody.
			require.Equal(t, exitOK, tg.run(t, "rules", "push", "testdata/rules.yaml").code)
			for _, wt := range ws {
				wt.waitAnnouncements(t, 2)
				require.NoError(t, wt.w.Refresh(context.Background()))
				assert.Equal(t, int64(1), wt.w.Stats().Loads)
				assert.Empty(t, wt.reloads)
			}

			killSubscribers(t, tg)
			for _, wt := range ws {
				wt.waitSubscribed(t, 2)
			}
			require.Equal(t, exitOK, tg.run(t, "rules", "push", "testdata/rules-v8.yaml").code)
			for _, wt := range ws {
				assert.Equal(t, rules.Reload{Source: rules.RedisSource, Version: 8, Digest: mustDigest(t, "testdata/rules-v8.yaml")}, wt.next(t))
				assert.Equal(t, int64(3), wt.w.Stats().Announcements, "announced on the new subscription")
				assert.Len(t, wt.set.Document().Policies, 4)
			}
		})
	}
}

// addrsOf returns the target's node addresses.
func addrsOf(t *testing.T, tg target) []string {
	t.Helper()
	switch c := tg.client.(type) {
	case *redis.ClusterClient:
		return c.Options().Addrs
	case *redis.Client:
		return []string{c.Options().Addr}
	}
	t.Fatalf("client %T", tg.client)
	return nil
}

// killSubscribers runs CLIENT KILL TYPE pubsub on every node.
func killSubscribers(t *testing.T, tg target) {
	t.Helper()
	ctx := context.Background()
	var killed int64
	for _, a := range addrsOf(t, tg) {
		c := redis.NewClient(&redis.Options{Addr: a, ContextTimeoutEnabled: true})
		n, err := c.ClientKillByFilter(ctx, "TYPE", "pubsub").Result()
		_ = c.Close()
		require.NoError(t, err)
		killed += n
	}
	require.Equal(t, int64(2), killed, "one subscriber per instance")
}
