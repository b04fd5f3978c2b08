package luascript

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
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
			must.NotPanics(t, func() { s, err = New(tt.backend, tt.opts...) })
			must.ErrorIs(t, err, core.ErrInvalidOption)
			expect.Contains(t, err.Error(), tt.want)
			expect.Nil(t, s)
		})
	}

	s, err := New(&recorder{})
	must.NoError(t, err)
	expect.Equal(t, DefaultPrefix, s.cfg.prefix)
	expect.False(t, s.cfg.callerClock)
	expect.Equal(t, "0", s.cfg.minTTLArg)
	must.NotNil(t, s.cache, "the local cache is on by default")
	expect.Len(t, s.cache.slots, DefaultLocalCacheSize)

	s, err = New(&recorder{}, WithLocalCache(0), WithPrefix(""), WithCallerClock(), WithMinTTL(time.Hour), WithLocalCache(3))
	must.NoError(t, err)
	expect.Equal(t, "", s.cfg.prefix)
	expect.True(t, s.cfg.callerClock)
	expect.Equal(t, "3600000", s.cfg.minTTLArg)
	must.NotNil(t, s.cache, "the last option wins")
	expect.Len(t, s.cache.slots, 4, "rounded up to a power of two")

	s, err = New(&recorder{}, WithLocalCache(0), WithPrefix(strings.Repeat("p", maxPrefixLen)))
	must.NoError(t, err)
	expect.Nil(t, s.cache)
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
		{"a reply of another length", recorder{reply: []int64{1, 1_700_000_000_000_000, 0}}, errReply},
		{"a verdict core does not share", recorder{reply: []int64{-1}}, errReply},
		{"a gap beyond any time", recorder{reply: []int64{core.MaxTime + 1}}, errReply},
		{"a denial's gap beyond any time", recorder{reply: []int64{math.MinInt64}}, errReply},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(&tt.rec)
			must.NoError(t, err)
			for range 2 {
				d, err := s.Take(bg, req)
				must.ErrorIs(t, err, ErrRedis)
				must.ErrorIs(t, err, tt.cause)
				expect.False(t, d.Allowed)
			}
			expect.Equal(t, 2, tt.rec.calls, "a failure is not cached")
		})
	}

	rec := &recorder{reply: []int64{0}}
	s, err := New(rec)
	must.NoError(t, err)
	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err = s.Take(ctx, req)
	must.ErrorIs(t, err, ErrRedis)
	must.ErrorIs(t, err, context.Canceled)
	expect.Zero(t, rec.calls, "an ended context sends nothing")
	bad := req
	bad.Limits = nil
	_, err = s.Take(ctx, bad)
	expect.ErrorIs(t, err, core.ErrInvalidLimit, "an invalid request is reported as such, whatever the context")
	expect.NotErrorIs(t, err, ErrRedis)
}

// TestTakeCachesDenials: a denial is answered locally until its RetryAfter,
// only for the same request; admissions, peeks and other costs go to Redis.
func TestTakeCachesDenials(t *testing.T) {
	limit := core.PerSecond(1)
	rec := &recorder{reply: []int64{-1 - 1_000_000}} // one request ahead: denied for 1 s
	s, err := New(rec, WithCallerClock())
	must.NoError(t, err)
	req := core.TakeRequest{Key: "k", Algorithm: core.GCRA, Limits: []core.Limit{limit}, Cost: 1, Now: t0}
	d, err := s.Take(bg, req)
	must.NoError(t, err)
	must.False(t, d.Allowed)
	must.Equal(t, time.Second, d.RetryAfter)

	req.Now = t0.Add(300 * time.Millisecond)
	d, err = s.Take(bg, req)
	must.NoError(t, err)
	expect.False(t, d.Allowed)
	expect.Equal(t, 700*time.Millisecond, d.RetryAfter)
	expect.Equal(t, 1, rec.calls, "answered from the cache")

	peek := req
	peek.Cost = 0
	_, _ = s.Take(bg, peek)
	expect.Equal(t, 2, rec.calls, "a peek asks Redis")

	req.Now = t0.Add(time.Second)
	rec.reply = []int64{0}
	d, err = s.Take(bg, req)
	must.NoError(t, err)
	expect.True(t, d.Allowed, "asked again once the RetryAfter has run")
	expect.Equal(t, 3, rec.calls)
}

// TestReset: Reset sends the reset script with the request's keys and no
// ARGV, forgets the cached denial, and reports failures and malformed replies
// as ErrRedis.
func TestReset(t *testing.T) {
	now := t0.UnixMicro()
	req := core.TakeRequest{Key: "k", Algorithm: core.TokenBucket, Limits: []core.Limit{core.PerMinute(1), core.PerHour(5)}, Cost: 1, Now: t0}
	rec := &recorder{reply: []int64{0, now, now + 60_000_000, now}}
	s, err := New(rec, WithCallerClock(), WithPrefix("r:"))
	must.NoError(t, err)
	_, err = s.Take(bg, req)
	must.NoError(t, err)
	_, err = s.Take(bg, req)
	must.NoError(t, err)
	must.Equal(t, 1, rec.calls, "the denial is cached")
	keys, err := s.Keys(req)
	must.NoError(t, err)

	rec.reply = []int64{2}
	reset := req
	reset.Cost, reset.Now = -5, time.Time{} // ignored
	must.NoError(t, s.Reset(bg, reset))
	expect.Same(t, resetScript, rec.script)
	bk, err := s.BlockKey(req)
	must.NoError(t, err)
	expect.Equal(t, "r:{:k}:t:2:b", bk)
	expect.Equal(t, append(keys, bk), rec.keys, "the reset lifts the penalty box")
	expect.Equal(t, []string{"r:{resets}:announce", announcement(keyAddress("", "k"))}, rec.args, "the reset is announced")
	rec.reply = []int64{1, now, now, now}
	d, err := s.Take(bg, req)
	must.NoError(t, err)
	expect.True(t, d.Allowed, "the cached denial is gone")
	expect.Equal(t, 3, rec.calls)

	bad := req
	bad.Limits = nil
	expect.ErrorIs(t, s.Reset(bg, bad), core.ErrInvalidLimit)
	bad = req
	bad.Algorithm = 0
	expect.ErrorIs(t, s.Reset(bg, bad), core.ErrInvalidAlgorithm)
	expect.Equal(t, 3, rec.calls, "invalid requests send nothing")

	for name, r := range map[string]recorder{
		"backend error": {err: errors.New("down")},
		"no reply":      {},
		"too many":      {reply: []int64{4}},
		"an array":      {reply: []int64{1, 1}},
	} {
		s, err := New(&r)
		must.NoError(t, err)
		expect.ErrorIs(t, s.Reset(bg, req), ErrRedis, name)
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	err = s.Reset(ctx, req)
	expect.ErrorIs(t, err, ErrRedis)
	expect.ErrorIs(t, err, context.Canceled)
}
