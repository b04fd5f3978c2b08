package luascript

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

var t0 = time.UnixMicro(1_700_000_000_123_456)

// recorder is a Backend that records the calls it is handed and replies with
// reply, or fails with err.
type recorder struct {
	calls      int
	script     *Script
	keys, args []string
	reply      []int64
	err        error
}

var errRecorded = errors.New("recorded")

// ReadsIntegerReplies makes the recorder an IntegerReplier, as the bindings
// are.
func (r *recorder) ReadsIntegerReplies() bool { return true }

func (r *recorder) Eval(_ context.Context, script *Script, keys, args []string, dst []int64) ([]int64, error) {
	r.calls++
	r.script, r.keys, r.args = script, slices.Clone(keys), slices.Clone(args)
	if r.err != nil {
		return dst, r.err
	}
	return append(dst, r.reply...), nil
}

// encode returns the call Take sends for req through a store made with opts
// (over an empty prefix), or Take's error when req is refused.
func encode(t *testing.T, req core.TakeRequest, opts ...Option) (*recorder, error) {
	t.Helper()
	rec := &recorder{err: errRecorded}
	s, err := New(rec, append([]Option{WithPrefix(""), WithLocalCache(0)}, opts...)...)
	must.NoError(t, err)
	_, err = s.Take(context.Background(), req)
	if errors.Is(err, errRecorded) {
		must.Equal(t, 1, rec.calls)
		return rec, nil
	}
	must.Zero(t, rec.calls, "a refused request never reaches the backend")
	return rec, err
}

func TestScripts(t *testing.T) {
	all := Scripts()
	must.Len(t, all, 7+len(BlockScripts())+len(CalendarScripts())+len(SettleScripts())+len(InFlightScripts())+len(LeaseScripts())+5)
	seen := map[string]bool{}
	for i, s := range all {
		name := "reset"
		switch {
		case i < 6:
			name = core.Algorithms()[i].String()
			expect.Same(t, scripts[core.Algorithms()[i]], s)
		case i > 6: // a feature's script names itself
			name, _, _ = strings.Cut(strings.TrimPrefix(s.Source, "-- ratewarden "), "\n")
		}
		sum := sha1.Sum([]byte(s.Source))
		expect.Equal(t, hex.EncodeToString(sum[:]), s.SHA1)
		expect.False(t, seen[s.SHA1], "scripts differ")
		seen[s.SHA1] = true
		expect.Equal(t, name+" "+s.SHA1, s.String())
		expect.True(t, strings.HasPrefix(s.Source, "-- ratewarden "+name+"\n"), s.Source)
	}
	expect.Same(t, resetScript, all[6])
}

// fiveKeys are the keys of TestEncode's request of five limits.
var fiveKeys = func() []string {
	var out []string
	for i := range 5 {
		out = append(out, "{:f}:s:5:"+strconv.Itoa(i))
	}
	return out
}()

func TestEncode(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		req  core.TakeRequest
		keys []string
		args []string
	}{
		{
			name: "server time, one limit",
			opts: []Option{WithPrefix("rw:")},
			req:  core.TakeRequest{Namespace: "api", Key: "1.2.3.4", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(10)}, Cost: 1, Now: t0},
			keys: []string{"rw:{api:1.2.3.4}:g"},
			args: []string{"100000", "1000000"}, // a cost of 1 goes unsaid (shortOneCall)
		},
		{
			name: "server time, a TTL floor: -1 and the floor follow the figures",
			opts: []Option{WithPrefix("rw:"), WithMinTTL(time.Minute)},
			req:  core.TakeRequest{Namespace: "api", Key: "1.2.3.4", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(10)}, Cost: 1, Now: t0},
			keys: []string{"rw:{api:1.2.3.4}:g"},
			args: []string{"1", "100000", "1000000", "-1", "60000"},
		},
		{
			name: "caller clock, burst, min TTL rounded up to ms",
			opts: []Option{WithCallerClock(), WithMinTTL(1500 * time.Microsecond)},
			req:  core.TakeRequest{Key: "k", Algorithm: core.TokenBucket, Limits: []core.Limit{core.Every(3, time.Second).WithBurst(5)}, Cost: 2, Now: t0},
			keys: []string{"{:k}:t"},
			args: []string{"2", "333334", "1666670", "1700000000123456", "2"},
		},
		{
			name: "several limits: one key per limit, with their number",
			opts: []Option{WithPrefix("p:")},
			req:  core.TakeRequest{Key: "u", Algorithm: core.SlidingWindow, Limits: []core.Limit{core.PerSecond(2), {Rate: 100, Period: time.Hour}}, Cost: 0, Now: t0},
			keys: []string{"p:{:u}:w:2:0", "p:{:u}:w:2:1"},
			args: []string{"0", "2", "1000000", "100", "3600000000"},
		},
		{
			name: "braces, percent and colons escaped",
			req:  core.TakeRequest{Namespace: "a:b#", Key: "}{x:%", Algorithm: core.FixedWindow, Limits: []core.Limit{core.PerMinute(5)}, Cost: 1, Now: t0},
			keys: []string{"{a%3Ab%23:%7D%7Bx:%25}:f"},
			args: []string{"5", "60000000"},
		},
		{
			name: "five limits: more than a frame holds",
			req: core.TakeRequest{Key: "f", Algorithm: core.SlidingLog, Cost: 300, Limits: []core.Limit{
				core.PerSecond(1000), core.PerMinute(1000), core.PerHour(1000), core.Every(1000, 24*time.Hour), core.Every(1000, 2*time.Second),
			}},
			keys: fiveKeys,
			args: []string{"300", "1000", "1000000", "1000", "60000000", "1000", "3600000000", "1000", "86400000000", "1000", "2000000"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, err := encode(t, tt.req, tt.opts...)
			must.NoError(t, err)
			want := scripts[tt.req.Algorithm]
			if len(tt.req.Limits) == 1 && oneScripts[tt.req.Algorithm] != nil &&
				(tt.req.Algorithm.OneWord() || packsWindow(tt.req.Algorithm, call.fig(t, tt.req))) {
				want = oneScripts[tt.req.Algorithm] // one integer for a reply
			}
			expect.Same(t, want, call.script)
			expect.Equal(t, tt.keys, call.keys)
			expect.Equal(t, tt.args, call.args)
			s, err := New(call, append([]Option{WithPrefix("")}, tt.opts...)...)
			must.NoError(t, err)
			keys, err := s.Keys(tt.req)
			must.NoError(t, err)
			expect.Equal(t, tt.keys, keys, "Keys names what Take sends")
		})
	}
}

// TestEncodeParamsMatchCore checks the figures sent against core's: interval
// and tau for the meters, rate and period for the windows.
func TestEncodeParamsMatchCore(t *testing.T) {
	for _, l := range []core.Limit{
		core.PerSecond(3), core.PerMinute(7).WithBurst(100), core.PerHour(1), core.Every(999_983, time.Second),
		{Rate: 1, Period: core.MaxPeriod}, core.Every(100, 10*time.Second),
	} {
		iv := l.EmissionInterval().Microseconds()
		for _, alg := range core.Algorithms() {
			if alg.ValidateLimit(l) != nil {
				continue
			}
			call, err := encode(t, core.TakeRequest{Algorithm: alg, Limits: []core.Limit{l}, Cost: 2})
			must.NoError(t, err, l.String())
			want := []string{itoa(l.Rate), itoa(l.Period.Microseconds())}
			if alg.OneWord() {
				want = []string{itoa(iv), itoa(iv * l.EffectiveBurst())}
			}
			expect.Equal(t, want, call.args[1:], "%s %s", alg, l)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// fig returns the figures of req's first limit.
func (r *recorder) fig(t *testing.T, req core.TakeRequest) figures {
	t.Helper()
	f, err := figuresOf(req.Limits[0])
	must.NoError(t, err)
	return f
}

func TestTagIsInjectiveAndBounded(t *testing.T) {
	s, err := New(&recorder{}, WithPrefix("x:"))
	must.NoError(t, err)
	pairs := [][2]string{
		{"a:b", "c"}, {"a", "b:c"}, {"a%3Ab", "c"}, {"", "a:b:c"}, {"#1", ""}, {"%231", ""},
		{"", "}"}, {"", "%7D"}, {"n", strings.Repeat("k", 200)}, {"n", strings.Repeat("k", 201)},
		{"n" + strings.Repeat("k", 100), strings.Repeat("k", 100)}, {"n", strings.Repeat("k", 200)},
	}
	seen := map[string][2]string{}
	for _, p := range pairs {
		keys, err := s.Keys(core.TakeRequest{Namespace: p[0], Key: p[1], Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1)}})
		must.NoError(t, err)
		k := keys[0]
		if prev, ok := seen[k]; ok {
			expect.Equal(t, prev, p, "same key %q for different identities", k)
		}
		seen[k] = p
		open := strings.IndexByte(k, '{')
		end := strings.IndexByte(k, '}')
		must.Equal(t, len("x:"), open, k)
		expect.Equal(t, -1, strings.IndexAny(k[open+1:end], "{"), k)
		expect.Equal(t, -1, strings.IndexAny(k[end+1:], "{}"), "nothing after the tag may look like one: %q", k)
		expect.LessOrEqual(t, end-open-1, maxTagLen, k)
	}
	expect.Len(t, seen, len(pairs)-1, "only the repeated pair shares a key")

	keys, err := s.Keys(core.TakeRequest{Key: strings.Repeat("z", 10_000), Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1)}})
	must.NoError(t, err)
	expect.Regexp(t, `^x:\{#[0-9a-f]{64}\}:g$`, keys[0])
}

// TestEncodeErrorsMatchCore feeds the same bad requests to Take and to
// core's TakeRequest.Decide and expects the same sentinel, without a call to
// the backend.
func TestEncodeErrorsMatchCore(t *testing.T) {
	ok := core.PerSecond(10)
	tests := []struct {
		name   string
		alg    core.Algorithm
		limits []core.Limit
		cost   int64
		now    time.Time
		want   error
	}{
		{"no limits", core.GCRA, nil, 1, t0, core.ErrInvalidLimit},
		{"bad algorithm", core.Algorithm(9), []core.Limit{ok}, 1, t0, core.ErrInvalidAlgorithm},
		{"refund before the epoch", core.GCRA, []core.Limit{ok}, -1, time.Time{}, core.ErrClock},
		{"refund of a bad limit", core.FixedWindow, []core.Limit{{Rate: 1}}, -1, t0, core.ErrInvalidLimit},
		{"time before the epoch", core.GCRA, []core.Limit{ok}, 1, time.Time{}, core.ErrClock},
		{"time after MaxTime", core.GCRA, []core.Limit{ok}, 1, time.UnixMicro(core.MaxTime + 1), core.ErrClock},
		{"zero rate", core.GCRA, []core.Limit{{Period: time.Second}}, 1, t0, core.ErrInvalidLimit},
		{"zero period", core.GCRA, []core.Limit{{Rate: 1}}, 1, t0, core.ErrInvalidLimit},
		{"period too long", core.GCRA, []core.Limit{{Rate: 1, Period: core.MaxPeriod + time.Microsecond}}, 1, t0, core.ErrInvalidLimit},
		{"negative burst", core.GCRA, []core.Limit{{Rate: 1, Period: time.Second, Burst: -1}}, 1, t0, core.ErrInvalidLimit},
		{"rate above 1/µs", core.GCRA, []core.Limit{{Rate: 2, Period: time.Microsecond}}, 1, t0, core.ErrInvalidLimit},
		{"period not whole µs", core.GCRA, []core.Limit{{Rate: 1, Period: 1500 * time.Nanosecond}}, 1, t0, core.ErrInvalidLimit},
		{"burst too large", core.GCRA, []core.Limit{{Rate: 1, Period: time.Hour, Burst: 1 << 40}}, 1, t0, core.ErrInvalidLimit},
		{"second limit bad", core.SlidingLog, []core.Limit{ok, {Rate: -1, Period: time.Second}}, 1, t0, core.ErrInvalidLimit},
		{"valid", core.SlidingLog, []core.Limit{ok, core.PerMinute(100)}, 1, t0, nil},
		{"valid peek", core.FixedWindow, []core.Limit{ok}, 0, t0, nil},
		{"valid refund", core.SlidingWindow, []core.Limit{ok}, -2, t0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := core.TakeRequest{Key: "k", Algorithm: tt.alg, Limits: tt.limits, Cost: tt.cost, Now: tt.now}
			var d core.Decision
			coreErr := req.Decide(&d, make([]core.State, len(tt.limits)), core.Micros(tt.now))
			_, err := encode(t, req, WithCallerClock())
			if tt.want == nil {
				must.NoError(t, coreErr)
				must.NoError(t, err)
				return
			}
			must.ErrorIs(t, coreErr, tt.want, "core disagrees with the table")
			must.ErrorIs(t, err, tt.want)
			expect.NotErrorIs(t, err, ErrRedis)
		})
	}
}

func TestServerTimeIgnoresNow(t *testing.T) {
	call, err := encode(t, core.TakeRequest{Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1)}, Cost: 1})
	must.NoError(t, err, "the zero Now is fine when the server's clock decides")
	expect.Equal(t, []string{"1000000", "1000000"}, call.args, "no now is sent, nor the cost of 1")
}

// TestShortOneCall: a meter's call of one limit leaves out a cost of 1 when
// nothing follows the figures, and only then.
func TestShortOneCall(t *testing.T) {
	tests := []struct {
		name string
		req  core.TakeRequest
		opts []Option
		args []string
	}{
		{"a spend of 1", core.TakeRequest{Algorithm: core.TokenBucket, Cost: 1}, nil, []string{"100000", "1000000"}},
		{"a spend of 2", core.TakeRequest{Algorithm: core.TokenBucket, Cost: 2}, nil, []string{"2", "100000", "1000000"}},
		{"a peek", core.TakeRequest{Algorithm: core.LeakyBucket, Cost: 0}, nil, []string{"0", "100000", "1000000"}},
		{"a refund of 1", core.TakeRequest{Algorithm: core.GCRA, Cost: -1}, nil,
			[]string{"-1", "100000", "1000000", "0", "-1", "0", "{resets}:announce", announcement(keyAddress("", "k"))}},
		{"a TTL floor", core.TakeRequest{Algorithm: core.GCRA, Cost: 1}, []Option{WithMinTTL(time.Second)}, []string{"1", "100000", "1000000", "-1", "1000"}},
		{"the caller's clock", core.TakeRequest{Algorithm: core.GCRA, Cost: 1, Now: t0}, []Option{WithCallerClock()},
			[]string{"1", "100000", "1000000", "1700000000123456", "0"}},
		{"two limits", core.TakeRequest{Algorithm: core.GCRA, Cost: 1, Limits: []core.Limit{core.PerSecond(10), core.PerSecond(10)}}, nil,
			[]string{"1", "100000", "1000000", "100000", "1000000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Key = "k"
			if tt.req.Limits == nil {
				tt.req.Limits = []core.Limit{core.PerSecond(10)}
			}
			call, err := encode(t, tt.req, tt.opts...)
			must.NoError(t, err)
			expect.Equal(t, tt.args, call.args)
			expect.Equal(t, len(tt.req.Limits) == 1, call.script.IntegerReply)
		})
	}
}

// plainBackend is a Backend that is no IntegerReplier.
type plainBackend struct{ rec *recorder }

func (p plainBackend) Eval(ctx context.Context, script *Script, keys, args []string, dst []int64) ([]int64, error) {
	return p.rec.Eval(ctx, script, keys, args, dst)
}

// declining is an IntegerReplier that reads no integer replies.
type declining struct{ plainBackend }

func (declining) ReadsIntegerReplies() bool { return false }

// TestArraysForPlainBackends: a Backend that does not read one-integer
// replies is sent the scripts that reply with arrays, with the whole ARGV,
// whatever the request; one that does, the one-limit scripts, for the
// windows only when their figures pack.
func TestArraysForPlainBackends(t *testing.T) {
	for _, alg := range core.Algorithms() {
		req := core.TakeRequest{Key: "k", Algorithm: alg, Limits: []core.Limit{core.PerSecond(10)}, Cost: 1, Now: t0}
		plain, decl := &recorder{err: errRecorded}, &recorder{err: errRecorded}
		for rec, b := range map[*recorder]Backend{plain: plainBackend{plain}, decl: declining{plainBackend{decl}}} {
			s, err := New(b, WithLocalCache(0))
			must.NoError(t, err)
			_, err = s.Take(bg, req)
			must.ErrorIs(t, err, errRecorded)
			expect.Same(t, scripts[alg], rec.script, "%T %s", b, alg)
			expect.Equal(t, "1", rec.args[0], "%T %s: the cost is sent", b, alg)
		}
		rec, err := encode(t, req)
		must.NoError(t, err)
		expect.Equal(t, alg != core.SlidingLog, rec.script.IntegerReply, alg)
	}
	wide := core.TakeRequest{Key: "k", Algorithm: core.SlidingWindow, Limits: []core.Limit{core.PerHour(100_000)}, Cost: 1, Now: t0}
	rec, err := encode(t, wide)
	must.NoError(t, err)
	expect.Same(t, scripts[core.SlidingWindow], rec.script, "counts that do not pack: the array reply")
}
