package luascript

import (
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

func TestDecodeDecision(t *testing.T) {
	limits := []core.Limit{core.PerSecond(10).Named("a"), core.PerHour(100).Named("b")}
	req := core.TakeRequest{Algorithm: core.SlidingLog, Limits: limits}
	tests := []struct {
		name  string
		reply []int64
		want  core.Decision
		err   bool
	}{
		{"allowed", []int64{1, 0, 1, 99, 36_000_000, 0},
			core.Decision{Allowed: true, Limit: limits[1], Index: 1, Remaining: 99, ResetAfter: 36 * time.Second}, false},
		{"denied", []int64{0, 0, 0, 0, 1_000_000, 100_001},
			core.Decision{Limit: limits[0], Remaining: 0, ResetAfter: time.Second, RetryAfter: 100_001 * time.Microsecond}, false},
		{"exceeds", []int64{0, 1, 0, 10, 0, 1_000_000},
			core.Decision{Exceeds: true, Limit: limits[0], Remaining: 10, RetryAfter: time.Second}, false},
		{"short", []int64{1, 0, 0}, core.Decision{}, true},
		{"long", make([]int64, 7), core.Decision{}, true},
		{"index out of range", []int64{1, 0, 2, 0, 0, 0}, core.Decision{}, true},
		{"negative index", []int64{1, 0, -1, 0, 0, 0}, core.Decision{}, true},
		{"bad flag", []int64{2, 0, 0, 0, 0, 0}, core.Decision{}, true},
		{"bad exceeds flag", []int64{0, 3, 0, 0, 0, 0}, core.Decision{}, true},
		{"negative reset", []int64{0, 0, 0, 0, -1, 0}, core.Decision{}, true},
		{"negative retry", []int64{0, 0, 0, 0, 0, -5}, core.Decision{}, true},
		{"nil", nil, core.Decision{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := decode(req, tt.reply)
			if tt.err {
				must.ErrorIs(t, err, errReply)
				return
			}
			must.NoError(t, err)
			expect.Equal(t, tt.want, d)
		})
	}
}

// TestDecodeStates: the meter and window replies carry the states the script
// read; decode must give core's decision on them and refuse a reply whose
// verdict core does not share.
func TestDecodeStates(t *testing.T) {
	now := t0.UnixMicro()
	limits := []core.Limit{core.PerSecond(10).Named("a"), core.PerHour(100).Named("b")}
	check := func(alg core.Algorithm, states []core.State, cost int64) (core.Decision, []int64) {
		t.Helper()
		want, err := alg.ApplyAll(append([]core.State(nil), states...), limits, cost, now)
		must.NoError(t, err)
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
			got, err := decode(req, reply)
			must.NoError(t, err)
			expect.Equal(t, want, got)

			bad := append([]int64(nil), reply...)
			bad[0] = 1 - bad[0]
			_, err = decode(req, bad)
			expect.ErrorIs(t, err, errReply, "a verdict core does not share")
		})
	}
}

// TestDecodeStatesMalformed: a reply that does not fit the request is refused,
// and requests of more limits than the stack holds are decoded.
func TestDecodeStatesMalformed(t *testing.T) {
	now := t0.UnixMicro()
	limits := []core.Limit{core.PerSecond(10).Named("a"), core.PerHour(100).Named("b")}
	req := core.TakeRequest{Algorithm: core.SlidingWindow, Limits: limits, Cost: 1}
	for name, reply := range map[string][]int64{
		"nil":            nil,
		"short":          {1, now, 0, 0, 0},
		"long":           {1, now, 0, 0, 0, 0, 0, 0, 0},
		"bad flag":       {2, now, 0, 0, 0, 0, 0, 0},
		"negative time":  {1, -1, 0, 0, 0, 0, 0, 0},
		"time past max":  {1, core.MaxTime + 1, 0, 0, 0, 0, 0, 0},
		"negative state": {1, now, 0, -1, 0, 0, 0, 0},
		"a log's reply":  {1, 0, 0, 9, 0, 0},
	} {
		_, err := decode(req, reply)
		expect.ErrorIs(t, err, errReply, name)
	}
	many := make([]core.Limit, 9)
	for i := range many {
		many[i] = core.Every(int64(10+i), time.Second)
	}
	reply := append([]int64{1, now}, make([]int64, 9)...)
	d, err := decode(core.TakeRequest{Algorithm: core.GCRA, Limits: many, Cost: 1}, reply)
	must.NoError(t, err, "more limits than the stack holds")
	expect.Equal(t, 0, d.Index, "the tightest limit governs")
}

func TestCheckResetReply(t *testing.T) {
	for _, ok := range [][]int64{{0}, {1}, {2}} {
		expect.NoError(t, checkResetReply(ok, 2), "%v", ok)
	}
	for _, bad := range [][]int64{nil, {}, {-1}, {3}, {1, 1}} {
		expect.ErrorIs(t, checkResetReply(bad, 2), errReply, "%v", bad)
	}
}

// TestDecodeGapMatchesStates: the one integer of a meter's script of one
// limit decodes to the very Decision the array of its states decodes to
// ({allowed, now, T}), for every meter, a fresh, a stale, a partly spent, a
// full and a rebased (beyond tau) state, and a peek, a spend and a spend
// above what is left.
func TestDecodeGapMatchesStates(t *testing.T) {
	const now = int64(1_700_000_000_000_000)
	limit := core.PerSecond(10).WithBurst(5) // interval 100 ms, tau 500 ms
	for _, alg := range []core.Algorithm{core.TokenBucket, core.LeakyBucket, core.GCRA} {
		for _, T := range []int64{0, now - 5, now + 300_000, now + 500_000, now + 700_000} {
			for _, cost := range []int64{0, 1, 3} {
				req := core.TakeRequest{Algorithm: alg, Limits: []core.Limit{limit}, Cost: cost}
				want, err := req.Algorithm.ApplyAll([]core.State{{T: T}}, req.Limits, cost, now)
				must.NoError(t, err)
				allowed := int64(0)
				if want.Allowed {
					allowed = 1
				}
				fromStates, err := decode(req, []int64{allowed, now, T})
				must.NoError(t, err)
				gap := max(0, T-now)
				if !want.Allowed {
					gap = -1 - gap
				}
				fromGap, err := decodeGap(req, []int64{gap})
				must.NoError(t, err, "%s T=now%+d cost %d", alg, T-now, cost)
				expect.Equal(t, fromStates, fromGap, "%s T=now%+d cost %d", alg, T-now, cost)
				_, err = decodeGap(req, []int64{-1 - gap})
				expect.ErrorIs(t, err, errReply, "%s T=now%+d cost %d: the opposite verdict", alg, T-now, cost)
			}
		}
	}
	two := core.TakeRequest{Algorithm: core.GCRA, Limits: []core.Limit{limit, limit}, Cost: 1}
	_, err := decodeGap(two, []int64{0})
	expect.ErrorIs(t, err, errReply, "a gap answers one limit")
}

// TestDecodeWindowGapMatchesStates: the one integer of a window's script of
// one limit, computed as luaWindowOneInt computes it from the state it read,
// decodes to the very Decision the array of that state decodes to ({allowed,
// now, T, N, P}), for both windows, states of the current, the previous, an
// older and a later window (a clock that stepped back), counts up to the
// scripts' cut, and a peek, a spend and one above what is left.
func TestDecodeWindowGapMatchesStates(t *testing.T) {
	const period = int64(60_000_000)
	const rate = 5
	limit := core.PerMinute(rate)
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		for _, now := range []int64{1_700_000_040_000_000, 1_700_000_040_000_000 + 59_999_999} {
			start := now - now%period
			for _, st := range []int64{start, start - period, start - 5*period, start + period} {
				for _, counts := range [][2]int64{{0, 0}, {3, 2}, {5, 5}, {7, 9}} {
					for _, cost := range []int64{0, 1, 3} {
						req := core.TakeRequest{Algorithm: alg, Limits: []core.Limit{limit}, Cost: cost}
						s := core.State{T: st, N: counts[0], P: counts[1]}
						if alg == core.FixedWindow {
							s.P = 0
						}
						want, err := req.Algorithm.ApplyAll([]core.State{s}, req.Limits, cost, now)
						must.NoError(t, err)
						allowed := int64(0)
						if want.Allowed {
							allowed = 1
						}
						fromStates, err := decode(req, []int64{allowed, now, s.T, s.N, s.P})
						must.NoError(t, err)
						x := windowGap(alg, s, now, period, rate)
						if !want.Allowed {
							x = -1 - x
						}
						fromGap, err := decodeGap(req, []int64{x})
						must.NoError(t, err, "%s %v at %d cost %d", alg, s, now, cost)
						expect.Equal(t, fromStates, fromGap, "%s %v at %d cost %d", alg, s, now, cost)
					}
				}
			}
		}
	}
	req := core.TakeRequest{Algorithm: core.FixedWindow, Limits: []core.Limit{limit}, Cost: 1}
	_, err := decodeGap(req, []int64{2 * rate * period})
	expect.ErrorIs(t, err, errReply, "a count at the cut")
}

// windowGap is luaWindowOneInt's x for the state s read at now.
func windowGap(alg core.Algorithm, s core.State, now, period, rate int64) int64 {
	start := now - now%period
	st := min(s.T, start)
	var cur, prev int64
	switch {
	case st == start:
		cur, prev = s.N, s.P
	case st == start-period && alg == core.SlidingWindow:
		prev = s.N
	}
	q := cur
	if alg == core.SlidingWindow {
		q = cur*2*rate + prev
	}
	return q*period + now - start
}

// TestPacksWindow: a window packs when its counts and period fit below
// core.MaxTime, and never overflows deciding so.
func TestPacksWindow(t *testing.T) {
	tests := []struct {
		alg          core.Algorithm
		rate, period int64
		want         bool
	}{
		{core.FixedWindow, 100, 60_000_000, true},
		{core.SlidingWindow, 1000, 60_000_000, true},
		{core.SlidingWindow, 10_000, 3_600_000_000, false},
		{core.FixedWindow, 10_000, 3_600_000_000, true},
		{core.FixedWindow, 1 << 40, 1 << 40, false},
		{core.SlidingWindow, 1 << 30, 1 << 20, false},
		{core.FixedWindow, 1, core.MaxTime / 2, true},
		{core.FixedWindow, 1, core.MaxTime/2 + 1, false},
	}
	for _, tt := range tests {
		expect.Equal(t, tt.want, packsWindow(tt.alg, figures{rate: tt.rate, period: tt.period}), "%s %d/%d", tt.alg, tt.rate, tt.period)
	}
}
