package luascript

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var bg = context.Background()

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		backend Backend
		opts    []Option
		want    string
	}{
		{"nil backend", nil, nil, "nil backend"},
		{"nil option", &recorder{}, []Option{WithCallerClock(), nil}, "nil option"},
		{"brace in prefix", &recorder{}, []Option{WithPrefix("a{b")}, "may not hold"},
		{"closing brace", &recorder{}, []Option{WithPrefix("a}")}, "may not hold"},
		{"long prefix", &recorder{}, []Option{WithPrefix(strings.Repeat("p", maxPrefixLen+1))}, "longer than 256 bytes"},
		{"negative TTL", &recorder{}, []Option{WithMinTTL(-time.Second)}, "negative minimum TTL"},
		{"huge TTL", &recorder{}, []Option{WithMinTTL(core.MaxPeriod + time.Second)}, "is longer than"},
		{"negative cache", &recorder{}, []Option{WithLocalCache(-1)}, "local cache size -1"},
		{"huge cache", &recorder{}, []Option{WithLocalCache(maxCacheSize + 1)}, "out of [0, 16777216]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s *Store
			var err error
			require.NotPanics(t, func() { s, err = New(tt.backend, tt.opts...) })
			require.ErrorIs(t, err, core.ErrInvalidOption)
			assert.Contains(t, err.Error(), tt.want)
			assert.Nil(t, s)
		})
	}

	s, err := New(&recorder{})
	require.NoError(t, err)
	assert.Equal(t, DefaultPrefix, s.cfg.prefix)
	assert.False(t, s.cfg.callerClock)
	assert.Equal(t, "0", s.cfg.minTTLArg)
	require.NotNil(t, s.cache, "the local cache is on by default")
	assert.Len(t, s.cache.slots, DefaultLocalCacheSize)

	s, err = New(&recorder{}, WithLocalCache(0), WithPrefix(""), WithCallerClock(), WithMinTTL(time.Hour), WithLocalCache(3))
	require.NoError(t, err)
	assert.Equal(t, "", s.cfg.prefix)
	assert.True(t, s.cfg.callerClock)
	assert.Equal(t, "3600000", s.cfg.minTTLArg)
	require.NotNil(t, s.cache, "the last option wins")
	assert.Len(t, s.cache.slots, 4, "rounded up to a power of two")

	s, err = New(&recorder{}, WithLocalCache(0), WithPrefix(strings.Repeat("p", maxPrefixLen)))
	require.NoError(t, err)
	assert.Nil(t, s.cache)
}

// TestTakeFailures: whatever goes wrong once the request is valid is an error
// wrapping ErrRedis, and nothing is cached.
func TestTakeFailures(t *testing.T) {
	req := core.TakeRequest{Key: "k", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1)}, Cost: 1}
	boom := errors.New("connection reset")
	tests := []struct {
		name  string
		rec   recorder
		cause error
	}{
		{"backend error", recorder{err: boom}, boom},
		{"no reply", recorder{}, errReply},
		{"a reply of another length", recorder{reply: []int64{1, 1_700_000_000_000_000, 0, 0}}, errReply},
		{"a verdict core does not share", recorder{reply: []int64{0, 1_700_000_000_000_000, 0}}, errReply},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(&tt.rec)
			require.NoError(t, err)
			for range 2 {
				d, err := s.Take(bg, req)
				require.ErrorIs(t, err, ErrRedis)
				require.ErrorIs(t, err, tt.cause)
				assert.False(t, d.Allowed)
			}
			assert.Equal(t, 2, tt.rec.calls, "a failure is not cached")
		})
	}

	rec := &recorder{reply: []int64{1, 1_700_000_000_000_000, 0}}
	s, err := New(rec)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err = s.Take(ctx, req)
	require.ErrorIs(t, err, ErrRedis)
	require.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, rec.calls, "an ended context sends nothing")
	bad := req
	bad.Limits = nil
	_, err = s.Take(ctx, bad)
	assert.ErrorIs(t, err, core.ErrInvalidLimit, "an invalid request is reported as such, whatever the context")
	assert.NotErrorIs(t, err, ErrRedis)
}

// TestTakeCachesDenials: a denial is answered locally until its RetryAfter,
// only for the same request; admissions, peeks and other costs go to Redis.
func TestTakeCachesDenials(t *testing.T) {
	now := t0.UnixMicro()
	limit := core.PerSecond(1)
	rec := &recorder{reply: []int64{0, now, now + 1_000_000}} // one request ahead: denied for 1 s
	s, err := New(rec, WithCallerClock())
	require.NoError(t, err)
	req := core.TakeRequest{Key: "k", Algorithm: core.GCRA, Limits: []core.Limit{limit}, Cost: 1, Now: t0}
	d, err := s.Take(bg, req)
	require.NoError(t, err)
	require.False(t, d.Allowed)
	require.Equal(t, time.Second, d.RetryAfter)

	req.Now = t0.Add(300 * time.Millisecond)
	d, err = s.Take(bg, req)
	require.NoError(t, err)
	assert.False(t, d.Allowed)
	assert.Equal(t, 700*time.Millisecond, d.RetryAfter)
	assert.Equal(t, 1, rec.calls, "answered from the cache")

	peek := req
	peek.Cost = 0
	_, _ = s.Take(bg, peek)
	assert.Equal(t, 2, rec.calls, "a peek asks Redis")

	req.Now = t0.Add(time.Second)
	rec.reply = []int64{1, now + 1_000_000, now + 1_000_000}
	d, err = s.Take(bg, req)
	require.NoError(t, err)
	assert.True(t, d.Allowed, "asked again once the RetryAfter has run")
	assert.Equal(t, 3, rec.calls)
}

// TestReset: Reset sends the reset script with the request's keys and no
// ARGV, forgets the cached denial, and reports failures and malformed replies
// as ErrRedis.
func TestReset(t *testing.T) {
	now := t0.UnixMicro()
	req := core.TakeRequest{Key: "k", Algorithm: core.TokenBucket, Limits: []core.Limit{core.PerMinute(1), core.PerHour(5)}, Cost: 1, Now: t0}
	rec := &recorder{reply: []int64{0, now, now + 60_000_000, now}}
	s, err := New(rec, WithCallerClock(), WithPrefix("r:"))
	require.NoError(t, err)
	_, err = s.Take(bg, req)
	require.NoError(t, err)
	_, err = s.Take(bg, req)
	require.NoError(t, err)
	require.Equal(t, 1, rec.calls, "the denial is cached")
	keys, err := s.Keys(req)
	require.NoError(t, err)

	rec.reply = []int64{2}
	reset := req
	reset.Cost, reset.Now = -5, time.Time{} // ignored
	require.NoError(t, s.Reset(bg, reset))
	assert.Same(t, resetScript, rec.script)
	assert.Equal(t, keys, rec.keys)
	assert.Equal(t, []string{"r:{resets}:announce", announcement(keyAddress("", "k"))}, rec.args, "the reset is announced")
	rec.reply = []int64{1, now, now, now}
	d, err := s.Take(bg, req)
	require.NoError(t, err)
	assert.True(t, d.Allowed, "the cached denial is gone")
	assert.Equal(t, 3, rec.calls)

	bad := req
	bad.Limits = nil
	assert.ErrorIs(t, s.Reset(bg, bad), core.ErrInvalidLimit)
	bad = req
	bad.Algorithm = 0
	assert.ErrorIs(t, s.Reset(bg, bad), core.ErrInvalidAlgorithm)
	assert.Equal(t, 3, rec.calls, "invalid requests send nothing")

	for name, r := range map[string]recorder{
		"backend error": {err: errors.New("down")},
		"no reply":      {},
		"too many":      {reply: []int64{3}},
		"an array":      {reply: []int64{1, 1}},
	} {
		s, err := New(&r)
		require.NoError(t, err)
		assert.ErrorIs(t, s.Reset(bg, req), ErrRedis, name)
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	err = s.Reset(ctx, req)
	assert.ErrorIs(t, err, ErrRedis)
	assert.ErrorIs(t, err, context.Canceled)
}
