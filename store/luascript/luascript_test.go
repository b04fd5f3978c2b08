package luascript

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.UnixMicro(1_700_000_000_123_456)

func TestScripts(t *testing.T) {
	all := Scripts()
	require.Len(t, all, 6)
	seen := map[string]bool{}
	for i, s := range all {
		assert.Equal(t, core.Algorithms()[i], s.Algorithm)
		sum := sha1.Sum([]byte(s.Source))
		assert.Equal(t, hex.EncodeToString(sum[:]), s.SHA1)
		assert.False(t, seen[s.SHA1], "scripts differ")
		seen[s.SHA1] = true
		got, err := For(s.Algorithm)
		require.NoError(t, err)
		assert.Same(t, s, got)
		assert.Equal(t, s.Algorithm.String()+" "+s.SHA1, s.String())
	}
	_, err := For(core.Algorithm(0))
	assert.ErrorIs(t, err, core.ErrInvalidAlgorithm)
	_, err = For(core.Algorithm(7))
	assert.ErrorIs(t, err, core.ErrInvalidAlgorithm)
}

func TestEncode(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		req  core.TakeRequest
		keys []string
		args []string
	}{
		{
			name: "server time, one limit",
			cfg:  Config{Prefix: "rw:"},
			req:  core.TakeRequest{Namespace: "api", Key: "1.2.3.4", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(10)}, Cost: 1, Now: t0},
			keys: []string{"rw:{api:1.2.3.4}:gcra:10/1000000/10"},
			args: []string{"-1", "1", "0", "100000", "1000000"},
		},
		{
			name: "caller clock, burst, min TTL rounded up to ms",
			cfg:  Config{CallerClock: true, MinTTL: 1500 * time.Microsecond},
			req:  core.TakeRequest{Key: "k", Algorithm: core.TokenBucket, Limits: []core.Limit{core.Every(3, time.Second).WithBurst(5)}, Cost: 2, Now: t0},
			keys: []string{"{:k}:token-bucket:3/1000000/5"},
			args: []string{"1700000000123456", "2", "2", "333334", "1666670"},
		},
		{
			name: "several limits: one key per limit, all naming the set",
			cfg:  Config{Prefix: "p:"},
			req:  core.TakeRequest{Key: "u", Algorithm: core.SlidingWindow, Limits: []core.Limit{core.PerSecond(2), {Rate: 100, Period: time.Hour}}, Cost: 0, Now: t0},
			keys: []string{"p:{:u}:sliding-window:2/1000000/2+100/3600000000/100:0", "p:{:u}:sliding-window:2/1000000/2+100/3600000000/100:1"},
			args: []string{"-1", "0", "0", "2", "1000000", "100", "3600000000"},
		},
		{
			name: "braces, percent and colons escaped",
			cfg:  Config{},
			req:  core.TakeRequest{Namespace: "a:b#", Key: "}{x:%", Algorithm: core.FixedWindow, Limits: []core.Limit{core.PerMinute(5)}, Cost: 1, Now: t0},
			keys: []string{"{a%3Ab%23:%7D%7Bx:%25}:fixed-window:5/60000000/5"},
			args: []string{"-1", "1", "0", "5", "60000000"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, err := tt.cfg.Encode(tt.req)
			require.NoError(t, err)
			assert.Equal(t, tt.req.Algorithm, call.Script.Algorithm)
			assert.Equal(t, tt.keys, call.Keys)
			assert.Equal(t, tt.args, call.Args)
			keys, err := tt.cfg.Keys(tt.req)
			require.NoError(t, err)
			assert.Equal(t, tt.keys, keys)
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
			call, err := Config{}.Encode(core.TakeRequest{Algorithm: alg, Limits: []core.Limit{l}, Cost: 1})
			require.NoError(t, err, l.String())
			want := []string{itoa(l.Rate), itoa(l.Period.Microseconds())}
			if alg.OneWord() {
				want = []string{itoa(iv), itoa(iv * l.EffectiveBurst())}
			}
			assert.Equal(t, want, call.Args[3:], "%s %s", alg, l)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestTagIsInjectiveAndBounded(t *testing.T) {
	cfg := Config{Prefix: "x:"}
	pairs := [][2]string{
		{"a:b", "c"}, {"a", "b:c"}, {"a%3Ab", "c"}, {"", "a:b:c"}, {"#1", ""}, {"%231", ""},
		{"", "}"}, {"", "%7D"}, {"n", strings.Repeat("k", 200)}, {"n", strings.Repeat("k", 201)},
		{"n" + strings.Repeat("k", 100), strings.Repeat("k", 100)}, {"n", strings.Repeat("k", 200)},
	}
	seen := map[string][2]string{}
	for _, p := range pairs {
		call, err := cfg.Encode(core.TakeRequest{Namespace: p[0], Key: p[1], Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1)}})
		require.NoError(t, err)
		k := call.Keys[0]
		if prev, ok := seen[k]; ok {
			assert.Equal(t, prev, p, "same key %q for different identities", k)
		}
		seen[k] = p
		open := strings.IndexByte(k, '{')
		end := strings.IndexByte(k, '}')
		require.Equal(t, len("x:"), open, k)
		assert.Equal(t, -1, strings.IndexAny(k[open+1:end], "{"), k)
		assert.Equal(t, -1, strings.IndexAny(k[end+1:], "{}"), "nothing after the tag may look like one: %q", k)
		assert.LessOrEqual(t, end-open-1, MaxTagLen, k)
	}
	assert.Len(t, seen, len(pairs)-1, "only the repeated pair shares a key")

	call, err := cfg.Encode(core.TakeRequest{Key: strings.Repeat("z", 10_000), Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1)}})
	require.NoError(t, err)
	assert.Regexp(t, `^x:\{#[0-9a-f]{64}\}:gcra:1/1000000/1$`, call.Keys[0])
}

// TestEncodeErrorsMatchCore feeds the same bad requests to Encode and to
// core.ApplyAll and expects the same sentinel.
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
		{"negative cost", core.GCRA, []core.Limit{ok}, -1, t0, core.ErrInvalidCost},
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := core.TakeRequest{Key: "k", Algorithm: tt.alg, Limits: tt.limits, Cost: tt.cost, Now: tt.now}
			_, coreErr := tt.alg.ApplyAll(make([]core.State, len(tt.limits)), tt.limits, tt.cost, core.Micros(tt.now))
			_, err := Config{CallerClock: true}.Encode(req)
			if tt.want == nil {
				require.NoError(t, coreErr)
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, coreErr, tt.want, "core disagrees with the table")
			require.ErrorIs(t, err, tt.want)
		})
	}
}

func TestServerTimeIgnoresNow(t *testing.T) {
	call, err := Config{}.Encode(core.TakeRequest{Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1)}, Cost: 1})
	require.NoError(t, err, "the zero Now is fine when the server's clock decides")
	assert.Equal(t, "-1", call.Args[0])
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"zero", Config{}, true},
		{"prefix", Config{Prefix: "ratewarden:"}, true},
		{"brace in prefix", Config{Prefix: "a{b"}, false},
		{"closing brace", Config{Prefix: "a}"}, false},
		{"long prefix", Config{Prefix: strings.Repeat("p", MaxPrefixLen+1)}, false},
		{"negative TTL", Config{MinTTL: -time.Second}, false},
		{"huge TTL", Config{MinTTL: core.MaxPeriod + time.Second}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			req := core.TakeRequest{Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(1)}}
			_, encErr := tt.cfg.Encode(req)
			_, keysErr := tt.cfg.Keys(req)
			if tt.ok {
				assert.NoError(t, err)
				assert.NoError(t, encErr)
				assert.NoError(t, keysErr)
				return
			}
			assert.ErrorIs(t, err, core.ErrInvalidOption)
			assert.ErrorIs(t, encErr, core.ErrInvalidOption)
			assert.ErrorIs(t, keysErr, core.ErrInvalidOption)
		})
	}
}

func TestDecodeDecision(t *testing.T) {
	limits := []core.Limit{core.PerSecond(10).Named("a"), core.PerHour(100).Named("b")}
	req := core.TakeRequest{Algorithm: core.SlidingLog, Limits: limits}
	tests := []struct {
		name  string
		reply []int64
		want  core.Decision
		err   bool
	}{
		{"allowed", []int64{1, 0, 1, 99, 36_000_000, 0, 250},
			core.Decision{Allowed: true, Limit: limits[1], Index: 1, Remaining: 99, ResetAfter: 36 * time.Second, Delay: 250 * time.Microsecond}, false},
		{"denied", []int64{0, 0, 0, 0, 1_000_000, 100_001, 0},
			core.Decision{Limit: limits[0], Remaining: 0, ResetAfter: time.Second, RetryAfter: 100_001 * time.Microsecond}, false},
		{"exceeds", []int64{0, 1, 0, 10, 0, 1_000_000, 0},
			core.Decision{Exceeds: true, Limit: limits[0], Remaining: 10, RetryAfter: time.Second}, false},
		{"short", []int64{1, 0, 0}, core.Decision{}, true},
		{"long", make([]int64, 8), core.Decision{}, true},
		{"index out of range", []int64{1, 0, 2, 0, 0, 0, 0}, core.Decision{}, true},
		{"negative index", []int64{1, 0, -1, 0, 0, 0, 0}, core.Decision{}, true},
		{"bad flag", []int64{2, 0, 0, 0, 0, 0, 0}, core.Decision{}, true},
		{"negative retry", []int64{0, 0, 0, 0, 0, -5, 0}, core.Decision{}, true},
		{"nil", nil, core.Decision{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Decode(req, tt.reply)
			if tt.err {
				require.ErrorIs(t, err, ErrReply)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, d)
		})
	}
}

// TestDecodeStates: the meter and window replies carry the states the script
// read; Decode must give core's decision on them and refuse a reply whose
// verdict core does not share.
func TestDecodeStates(t *testing.T) {
	now := t0.UnixMicro()
	limits := []core.Limit{core.PerSecond(10).Named("a"), core.PerHour(100).Named("b")}
	check := func(alg core.Algorithm, states []core.State, cost int64) (core.Decision, []int64) {
		t.Helper()
		want, err := alg.ApplyAll(append([]core.State(nil), states...), limits, cost, now)
		require.NoError(t, err)
		reply := []int64{0, now}
		if want.Allowed {
			reply[0] = 1
		}
		for _, s := range states {
			reply = append(reply, s.T)
			if !alg.OneWord() {
				reply = append(reply, s.N, s.P)
			}
		}
		return want, reply
	}
	cases := []struct {
		name   string
		alg    core.Algorithm
		states []core.State
		cost   int64
	}{
		{"fresh leaky bucket", core.LeakyBucket, make([]core.State, 2), 1},
		{"busy leaky bucket queues", core.LeakyBucket, []core.State{{T: now + 300_000}, {T: now}}, 1},
		{"gcra denied by the second limit", core.GCRA, []core.State{{}, {T: now + 3_600_000_000}}, 1},
		{"gcra exceeds", core.GCRA, make([]core.State, 2), 11},
		{"sliding window with a previous window", core.SlidingWindow, []core.State{{T: now - now%1_000_000 - 1_000_000, N: 9}, {}}, 2},
		{"fixed window full", core.FixedWindow, []core.State{{T: now - now%1_000_000, N: 10}, {}}, 1},
		{"peek", core.TokenBucket, []core.State{{T: now + 50_000}, {}}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := core.TakeRequest{Algorithm: c.alg, Limits: limits, Cost: c.cost}
			want, reply := check(c.alg, c.states, c.cost)
			got, err := Decode(req, reply)
			require.NoError(t, err)
			assert.Equal(t, want, got)

			bad := append([]int64(nil), reply...)
			bad[0] = 1 - bad[0]
			_, err = Decode(req, bad)
			assert.ErrorIs(t, err, ErrReply, "a verdict core does not share")
		})
	}
	req := core.TakeRequest{Algorithm: core.SlidingWindow, Limits: limits, Cost: 1}
	for name, reply := range map[string][]int64{
		"nil":            nil,
		"short":          {1, now, 0, 0, 0},
		"long":           {1, now, 0, 0, 0, 0, 0, 0, 0},
		"bad flag":       {2, now, 0, 0, 0, 0, 0, 0},
		"negative time":  {1, -1, 0, 0, 0, 0, 0, 0},
		"time past max":  {1, core.MaxTime + 1, 0, 0, 0, 0, 0, 0},
		"negative state": {1, now, 0, -1, 0, 0, 0, 0},
	} {
		_, err := Decode(req, reply)
		assert.ErrorIs(t, err, ErrReply, name)
	}
}

// TestAppendCallMatchesEncode checks that AppendCall sends what Encode does.
func TestAppendCallMatchesEncode(t *testing.T) {
	reqs := []core.TakeRequest{
		{Namespace: "api", Key: "1.2.3.4", Algorithm: core.GCRA, Limits: []core.Limit{core.PerSecond(10)}, Cost: 1, Now: t0},
		{Key: "u", Algorithm: core.SlidingLog, Limits: []core.Limit{core.PerSecond(2), core.PerHour(100)}, Cost: 3, Now: t0},
		{Key: "u", Algorithm: core.LeakyBucket, Limits: []core.Limit{core.Every(3, time.Second).WithBurst(5)}, Cost: 0, Now: t0},
	}
	for _, cfg := range []Config{{Prefix: "p:"}, {CallerClock: true, MinTTL: time.Second}} {
		for _, req := range reqs {
			call, err := cfg.Encode(req)
			require.NoError(t, err)
			want := []string{strconv.Itoa(len(call.Keys))}
			want = append(append(want, call.Keys...), call.Args...)
			for range 2 { // the second time from the figure cache
				sc, got, err := cfg.AppendCall([]any{"evalsha"}, req)
				require.NoError(t, err)
				assert.Same(t, call.Script, sc)
				require.Equal(t, "evalsha", got[0])
				var gotStr []string
				for _, v := range got[1:] {
					switch v := v.(type) {
					case int:
						gotStr = append(gotStr, strconv.Itoa(v))
					case int64:
						gotStr = append(gotStr, strconv.FormatInt(v, 10))
					case string:
						gotStr = append(gotStr, v)
					default:
						t.Fatalf("unexpected %T", v)
					}
				}
				assert.Equal(t, want, gotStr)
			}
		}
	}
	for _, cfg := range []Config{{Prefix: "p:"}, {CallerClock: true, MinTTL: time.Second}} {
		for _, req := range reqs {
			call, err := cfg.Encode(req)
			require.NoError(t, err)
			var buf [2]string
			sc, nk, got, err := cfg.AppendStrings(append(buf[:0], "keep"), req)
			require.NoError(t, err)
			assert.Same(t, call.Script, sc)
			assert.Equal(t, len(call.Keys), nk)
			assert.Equal(t, append(append([]string{"keep"}, call.Keys...), call.Args...), got, "appended after what dst held")
		}
	}
	_, _, dst, err := Config{}.AppendStrings([]string{"keep"}, core.TakeRequest{Algorithm: core.GCRA, Cost: -1, Limits: []core.Limit{core.PerSecond(1)}})
	assert.ErrorIs(t, err, core.ErrInvalidCost)
	assert.Equal(t, []string{"keep"}, dst, "dst unchanged on error")
	_, _, err = Config{}.AppendCall(nil, core.TakeRequest{Algorithm: core.GCRA})
	assert.ErrorIs(t, err, core.ErrInvalidLimit)
	_, _, err = Config{Prefix: "{"}.AppendCall(nil, reqs[0])
	assert.ErrorIs(t, err, core.ErrInvalidOption)
}
