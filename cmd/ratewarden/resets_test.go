package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/luascript"
	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// scriptCount counts the script calls a go-redis client sends.
type scriptCount struct{ n atomic.Int64 }

func (*scriptCount) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *scriptCount) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); n == "evalsha" || n == "eval" {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (*scriptCount) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// followingInstance is an application instance of the rules in the
// target's Redis whose store keeps its local cache of denials (the default)
// and follows the announcements of resets, until t ends.
func followingInstance(t *testing.T, tg target) (*rules.Set, *luascript.Store) {
	t.Helper()
	b, err := redisstore.NewRulesBackend(tg.client)
	require.NoError(t, err)
	raw, _, err := rules.FetchRules(context.Background(), b, rules.WithRedisPrefix(tg.prefix))
	require.NoError(t, err)
	doc, err := rules.Parse(raw, "redis")
	require.NoError(t, err)
	st, err := redisstore.New(tg.client, luascript.WithPrefix(tg.prefix))
	require.NoError(t, err)
	s, err := rules.New(st, doc, rules.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- st.FollowResets(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	require.Eventually(t, func() bool { return st.FollowStats().Subscriptions > 0 }, 10*time.Second, time.Millisecond)
	return s, st
}

// login sends POST /login from ip through s and, when it went on, answers
// with status; it reports whether it went on.
func login(s *rules.Set, ip string, status int) bool {
	r := httptest.NewRequest(http.MethodPost, "/login", nil)
	r.RemoteAddr = net.JoinHostPort(ip, "4321")
	pass, next := s.Handle(r.Context(), stdhttp.View(r), httptest.NewRecorder())
	if next {
		pass.Finish(status)
	}
	return next
}

// key reset reaches every instance at once: a client denied on two
// instances, each answering from its cache, is admitted by both as soon as
// the reset's announcement reaches them, with no wait for the denial's
// Retry-After (a minute).
func TestKeyResetReachesEveryInstance(t *testing.T) {
	t.Parallel()
	for name, start := range targets {
		t.Run(name, func(t *testing.T) {
			tg := start(t)
			require.Equal(t, exitOK, tg.run(t, "rules", "push", "testdata/rules.yaml").code)
			calls := &scriptCount{}
			tg.client.AddHook(calls)
			a, sa := followingInstance(t, tg)
			b, sb := followingInstance(t, tg)
			const ip = "203.0.113.9"
			for range 5 {
				require.True(t, login(a, ip, http.StatusUnauthorized), "a wrong password is counted")
			}
			require.False(t, login(a, ip, http.StatusOK))
			require.False(t, login(b, ip, http.StatusOK))
			before := calls.n.Load()
			require.False(t, login(a, ip, http.StatusOK))
			require.False(t, login(b, ip, http.StatusOK))
			require.Equal(t, before, calls.n.Load(), "both instances answer from their caches")
			heardA, heardB := sa.FollowStats().Announcements, sb.FollowStats().Announcements

			r := tg.run(t, "key", "reset", "login", ip)
			require.Equal(t, exitOK, r.code, r.stderr)
			// The login policy has no tiers or overrides: one reset, one
			// announcement.
			for _, w := range []struct {
				st   *luascript.Store
				seen uint64
			}{{sa, heardA}, {sb, heardB}} {
				require.Eventually(t, func() bool { return w.st.FollowStats().Announcements > w.seen }, 10*time.Second, time.Millisecond,
					"the reset's announcement reaches the instance")
			}
			assert.True(t, login(a, ip, http.StatusOK), "the right password goes on at once on A")
			assert.True(t, login(b, ip, http.StatusOK), "and on B")
		})
	}
}

// key reset's help says what holds of instances that follow the
// announcements, that missed them, and that do not follow them.
func TestKeyResetHelp(t *testing.T) {
	t.Parallel()
	r := ratewarden(t, nil, "key", "reset", "-h")
	require.Equal(t, exitOK, r.code, r.stderr)
	help := strings.Join(strings.Fields(r.stdout+r.stderr), " ")
	for _, want := range []string{
		"announces the reset on the channel PREFIX{resets}:announce",
		"Every instance whose store follows the announcements (its app runs luascript's Store.FollowResets) drops its cached denials of KEY at once",
		"dropped its whole cache of denials when it subscribed again",
		"one that does not follow them denies from its cache until the cached denial's Retry-After",
	} {
		assert.Contains(t, help, want)
	}
}
