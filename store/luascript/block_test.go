package luascript

import (
	"strings"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

func TestBlockScripts(t *testing.T) {
	all := BlockScripts()
	must.Len(t, all, len(core.Algorithms()), "every algorithm's script starts with luaNow, so each has a +block script")
	for i, a := range core.Algorithms() {
		s := all[i]
		expect.Equal(t, a.String()+"+block", s.name)
		expect.True(t, strings.Contains(s.Source, "local nk = #KEYS - 1"), a)
		expect.False(t, strings.Contains(s.Source, luaNow), "%s: the algorithm's own head is replaced", a)
		expect.NotEqual(t, scripts[a].SHA1, s.SHA1)
	}
}

// blockReq is a request of key "k" with a block of a minute.
func blockReq(alg core.Algorithm, cost int64, limits ...core.Limit) core.TakeRequest {
	return core.TakeRequest{Key: "k", Algorithm: alg, Limits: limits, Cost: cost, Now: time.UnixMicro(1_000_000_000), BlockFor: time.Minute}
}

func TestBlockCall(t *testing.T) {
	tests := []struct {
		name     string
		req      core.TakeRequest
		opts     []Option
		keys     []string
		args     []string
		blockArg string
	}{
		{"server clock", blockReq(core.GCRA, 1, core.PerSecond(10)), nil,
			[]string{"{:k}:g", "{:k}:g:b"}, []string{"1", "100000", "1000000", "-1", "0"}, "60000000"},
		{"caller clock", blockReq(core.FixedWindow, 2, core.PerMinute(5)), []Option{WithCallerClock()},
			[]string{"{:k}:f", "{:k}:f:b"}, []string{"2", "5", "60000000", "1000000000", "0"}, "60000000"},
		{"peek", blockReq(core.TokenBucket, 0, core.PerSecond(10)), nil,
			[]string{"{:k}:t", "{:k}:t:b"}, []string{"0", "100000", "1000000", "-1", "0"}, "0"},
		{"cost above the capacity", blockReq(core.SlidingLog, 6, core.PerMinute(5)), []Option{WithMinTTL(time.Second)},
			[]string{"{:k}:s", "{:k}:s:b"}, []string{"6", "5", "60000000", "-1", "1000"}, "0"},
		{"two limits", blockReq(core.GCRA, 1, core.PerSecond(10), core.PerHour(100)), nil,
			[]string{"{:k}:g:2:0", "{:k}:g:2:1", "{:k}:g:2:b"}, []string{"1", "100000", "1000000", "36000000", "3600000000", "-1", "0"}, "60000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := encode(t, tt.req, tt.opts...)
			must.NoError(t, err)
			expect.Same(t, blockScripts[tt.req.Algorithm], rec.script)
			expect.Equal(t, tt.keys, rec.keys)
			expect.Equal(t, append(tt.args, "60000000", tt.blockArg), rec.args)
		})
	}
	rec, err := encode(t, core.TakeRequest{Key: "k", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(10)}, Cost: 1, Now: time.Now()})
	must.NoError(t, err)
	expect.Same(t, oneScripts[core.GCRA], rec.script, "no BlockFor: the algorithm's own script of one limit")
	expect.Equal(t, []string{"{:k}:g"}, rec.keys)

	for _, bad := range []time.Duration{-time.Minute, time.Nanosecond, core.MaxPeriod + time.Second} {
		req := blockReq(core.GCRA, 1, core.PerSecond(10))
		req.BlockFor = bad
		_, err := encode(t, req)
		expect.ErrorIs(t, err, core.ErrInvalidOption, bad)
	}
}

func TestDecodeBlock(t *testing.T) {
	const now = int64(1_000_000_000)
	req := blockReq(core.GCRA, 1, core.PerSecond(10))
	good := map[string]struct {
		reply   []int64
		blocked bool
		left    time.Duration
	}{
		"no block": {[]int64{1, now, 0, 0, 0, now}, false, 0},
		"blocked":  {[]int64{1, now, 0, 1, now + 20_000_000, now}, true, 20 * time.Second},
		"started":  {[]int64{0, now, now + 1_000_000, 2, now + 60_000_000, now}, false, time.Minute},
		// The bucket is spent: the limit alone makes the request wait 100 ms,
		// longer than the block's last microsecond.
		"blocked, spent": {[]int64{1, now, now + 1_000_000, 1, now + 1, now}, true, 100 * time.Millisecond},
	}
	for name, c := range good {
		d, err := decodeBlock(req, c.reply)
		must.NoError(t, err, name)
		expect.Equal(t, c.blocked, d.Blocked, name)
		expect.Equal(t, name == "started", d.BlockStarted, name)
		expect.Equal(t, c.left, d.RetryAfter, name)
		expect.Equal(t, c.left == 0, d.Allowed, name)
	}
	bad := map[string][]int64{
		"short":                   {0, now},
		"state":                   {1, now, 0, 3, 0, now},
		"negative time":           {1, now, 0, 0, 0, -1},
		"end without a block":     {1, now, 0, 0, now + 1, now},
		"block ended":             {1, now, 0, 1, now, now},
		"block beyond BlockFor":   {1, now, 0, 1, now + 60_000_001, now},
		"started on an admission": {1, now, 0, 2, now + 60_000_000, now},
		"algorithm's reply":       {1, now, 0, 0, 1, 0, 0, now},
	}
	for name, reply := range bad {
		_, err := decodeBlock(req, reply)
		expect.ErrorIs(t, err, errReply, name)
	}
}

// TestDenyCacheHonoursBlocks: a block's denial is served from the cache for
// any cost until the block's end, counted down; a reset drops it.
func TestDenyCacheHonoursBlocks(t *testing.T) {
	t0 := time.UnixMicro(1_000_000_000)
	now := t0.UnixMicro()
	req := blockReq(core.GCRA, 1, core.PerSecond(10))
	req.Now = t0
	rec := &recorder{reply: []int64{0, now, now + 1_000_000, 2, now + 60_000_000, now}}
	s, err := New(rec, WithCallerClock())
	must.NoError(t, err)
	d, err := s.Take(bg, req)
	must.NoError(t, err)
	must.True(t, d.BlockStarted)
	must.Equal(t, time.Minute, d.RetryAfter)

	later := req
	later.Cost, later.Now = 3, t0.Add(15*time.Second)
	d, err = s.Take(bg, later)
	must.NoError(t, err)
	expect.Equal(t, 1, rec.calls, "refused from the cache, whatever the cost")
	expect.True(t, d.Blocked)
	expect.False(t, d.BlockStarted)
	expect.Equal(t, 45*time.Second, d.RetryAfter)

	other := later
	other.BlockFor = 0
	rec.reply = []int64{0} // the one-limit script's reply: admitted, nothing owed
	d, err = s.Take(bg, other)
	must.NoError(t, err)
	expect.Equal(t, 2, rec.calls, "a limiter without the block has its own cached denials")
	expect.True(t, d.Allowed)

	rec.reply = []int64{1}
	must.NoError(t, s.Reset(bg, req))
	rec.reply = []int64{1, now, now, 0, 0, now}
	d, err = s.Take(bg, later)
	must.NoError(t, err)
	expect.True(t, d.Allowed, "the reset dropped the cached block")
	expect.Equal(t, 4, rec.calls)

	end := later
	end.Now = t0.Add(time.Minute)
	rec.reply = []int64{0, now, now + 1_000_000, 2, now + 60_000_000, now}
	_, err = s.Take(bg, req)
	must.NoError(t, err)
	rec.reply = []int64{1, now, now, 0, 0, now}
	d, err = s.Take(bg, end)
	must.NoError(t, err)
	expect.True(t, d.Allowed, "at the block's end the call goes to Redis")
	expect.Equal(t, 6, rec.calls)
}
