package rules

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/store/luascript"
	"github.com/ratewarden/ratewarden/testing/redistest"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// leaseDoc is a document of version v whose policy api leases up to max
// tokens of a hot client (by IP) under a fixed window of 100000/h.
func leaseDoc(t *testing.T, v, max int64) *Document {
	t.Helper()
	raw := fmt.Sprintf("schema: 1\nversion: %d\npolicies:\n  - {name: api, algorithm: fixed-window, limits: [100000/h], lease_tokens: %d, lease_ttl: 30m}\n", v, max)
	doc, err := Parse([]byte(raw), "t")
	require.NoError(t, err)
	return doc
}

// leaseClock is the tests' clock: the store decides on it too
// (luascript.WithCallerClock), so a window never ends during a test.
func leaseClock() *core.ManualClock {
	return core.NewManualClock(time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC))
}

// handleHot runs n requests of one client through s, all admitted.
func handleHot(t *testing.T, s *Set, n int) {
	t.Helper()
	for range n {
		pass, ok := s.Handle(context.Background(), fakereq.New("192.0.2.1:1"), httptest.NewRecorder())
		require.True(t, ok)
		pass.Release()
	}
}

// remaining is what the store holds of the hot client's window, asking it
// directly (a Peek costs nothing and leases nothing).
func remaining(t *testing.T, s *Set) int64 {
	t.Helper()
	res, err := s.Peek(context.Background(), "api", "192.0.2.1")
	require.NoError(t, err)
	require.Len(t, res, 1)
	return res[0].Decision.Remaining
}

// checkLeaseReturn drives a hot client under a leasing policy of a Set on
// st, reloads a document that replaces the policy (lease_tokens changes; the
// limits, and so the counters, stay), and closes the Set: each time the
// unspent leased tokens go back to the store, which then holds exactly what
// the requests spent.
func checkLeaseReturn(t *testing.T, st core.Store, clock core.Clock) {
	s, err := New(st, leaseDoc(t, 1, 100), WithClock(clock), WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	handleHot(t, s, 300)
	old := s.Policies()[0]
	held := 100000 - 300 - remaining(t, s)
	require.Positive(t, held, "the hot client leased tokens it did not spend")
	require.Zero(t, old.TokenLeaseStats().Returned)

	require.NoError(t, s.Replace(leaseDoc(t, 2, 50), "t"))
	require.NotSame(t, old, s.Policies()[0], "the reload replaced the policy")
	s.leases.wg.Wait()
	assert.GreaterOrEqual(t, old.TokenLeaseStats().Returned, held, "the replaced policy gave its unspent tokens back (and those of a refresh on its way when the store was peeked)")
	assert.Equal(t, int64(100000-300), remaining(t, s), "the store holds what was spent, nothing more")

	handleHot(t, s, 200)
	cur := s.Policies()[0]
	require.Positive(t, 100000-500-remaining(t, s))
	require.NoError(t, s.Close())
	assert.Positive(t, cur.TokenLeaseStats().Returned)
	assert.Equal(t, int64(100000-500), remaining(t, s), "Close gave the rules in force's tokens back")
	require.NoError(t, s.Close(), "a second Close has nothing to give")
	assert.Equal(t, int64(100000-500), remaining(t, s))
}

func TestSetReturnsLeasedTokens(t *testing.T) {
	checkLeaseReturn(t, storetest.NewReference(), leaseClock())
}

// The same against a real redis-server, through the scripts every Redis
// binding sends.
func TestSetReturnsLeasedTokensToRedis(t *testing.T) {
	srv := redistest.Start(t)
	clock := leaseClock()
	st, err := luascript.New(scriptBackend{newRESP(srv.Addr())}, luascript.WithPrefix(redisPrefix()), luascript.WithCallerClock())
	require.NoError(t, err)
	checkLeaseReturn(t, st, clock)
}

// A store that does not answer holds neither a reload nor Close past the
// lease return timeout: the reload returns at once, its give-back gives up
// in the background (logged), and Close reports the store's error.
func TestSetLeaseReturnTimeout(t *testing.T) {
	srv := redistest.StartLocal(t)
	st, err := luascript.New(scriptBackend{newRESP(srv.Addr())}, luascript.WithPrefix(redisPrefix()), luascript.WithCallerClock())
	require.NoError(t, err)
	var logs bytes.Buffer
	s, err := New(st, leaseDoc(t, 1, 100), WithClock(leaseClock()), WithLeaseReturnTimeout(100*time.Millisecond),
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.NoError(t, err)
	handleHot(t, s, 300)
	srv.Pause(t)
	defer srv.Resume(t)

	start := time.Now()
	require.NoError(t, s.Replace(leaseDoc(t, 2, 50), "t"), "a reload does not wait for the give-back")
	s.leases.wg.Wait()
	assert.Less(t, time.Since(start), 10*time.Second, "the give-back ended at its timeout")
	assert.Contains(t, logs.String(), "giving back the leased tokens of a replaced policy failed")
	assert.Contains(t, logs.String(), "policy=api")

	require.NoError(t, s.Replace(leaseDoc(t, 1, 100), "t", AllowDowngrade()))
	require.NoError(t, s.Close(), "the policy in force leased nothing yet")
}

func TestWithLeaseReturnTimeoutRefusesBadValues(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second, time.Microsecond, 2 * time.Minute} {
		t.Run(d.String(), func(t *testing.T) {
			_, err := New(storetest.NewReference(), leaseDoc(t, 1, 10), WithLeaseReturnTimeout(d))
			require.ErrorIs(t, err, core.ErrInvalidOption)
			assert.Contains(t, err.Error(), "lease return timeout "+d.String())
		})
	}
	s, err := New(storetest.NewReference(), leaseDoc(t, 1, 10), WithLeaseReturnTimeout(time.Minute))
	require.NoError(t, err)
	require.NoError(t, s.Close())
}

// scriptBackend runs the store's scripts on a real redis-server through the
// tests' RESP client.
type scriptBackend struct{ r *respBackend }

func (b scriptBackend) Eval(ctx context.Context, script *luascript.Script, keys, args []string, dst []int64) ([]int64, error) {
	cmd := append([]string{"EVALSHA", script.SHA1, strconv.Itoa(len(keys))}, keys...)
	cmd = append(cmd, args...)
	reply, err := b.r.do(ctx, cmd...)
	if re := redisError(""); errors.As(err, &re) && strings.HasPrefix(string(re), "NOSCRIPT") {
		cmd[0], cmd[1] = "EVAL", script.Source
		reply, err = b.r.do(ctx, cmd...)
	}
	if err != nil {
		return dst, err
	}
	vals, ok := reply.([]any)
	if !ok {
		return dst, fmt.Errorf("reply is %T, not an array", reply)
	}
	for i, v := range vals {
		n, ok := v.(int64)
		if !ok {
			return dst, fmt.Errorf("reply value %d is %T, not an integer", i, v)
		}
		dst = append(dst, n)
	}
	return dst, nil
}
