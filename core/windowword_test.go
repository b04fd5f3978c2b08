package core_test

import (
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// packs reports whether alg's state under l packs into a word.
func packs(alg core.Algorithm, l core.Limit) bool {
	_, ok := (&core.TakeRequest{Algorithm: alg, Limits: []core.Limit{l}}).WindowPacking()
	return ok
}

// fitsWord is the packing's condition, computed apart with big integers:
// the largest word a limit's window can need, index MaxTime/Period with both
// counts at their widest, is below 2^63.
func fitsWord(l core.Limit, sliding bool) bool {
	b := uint(bits.Len64(uint64(l.Rate)))
	counts := b
	if sliding {
		counts *= 2
	}
	top := new(big.Int).SetInt64(core.MaxTime / l.Period.Microseconds())
	top.Lsh(top.Add(top, big.NewInt(1)), counts) // (I+1) << counts: above every word of index I
	return top.Cmp(new(big.Int).Lsh(big.NewInt(1), 63)) <= 0
}

// boundaryRate is the largest sliding-window rate per period that packs:
// one below a power of two, or the most the period allows.
func boundaryRate(t *testing.T, period time.Duration) int64 {
	t.Helper()
	rate := int64(1)
	for {
		next := min(2*rate+1, period.Microseconds())
		if next == rate || !packs(core.SlidingWindow, core.Every(next, period)) {
			break
		}
		rate = next
	}
	must.True(t, packs(core.SlidingWindow, core.Every(rate, period)))
	return rate
}

// edgePeriods are periods from the shortest to nearly the longest (only
// powers of two are valid rates over MaxPeriod itself, which the tests give
// apart).
var edgePeriods = []time.Duration{
	time.Microsecond, 7 * time.Microsecond, time.Millisecond, time.Second, 1500 * time.Millisecond,
	time.Minute, time.Hour, 24 * time.Hour, 365 * 24 * time.Hour, (1 << 47) * time.Microsecond,
}

func TestWindowPackingBounds(t *testing.T) {
	maxPeriod := core.MaxPeriod
	cases := []struct {
		name  string
		alg   core.Algorithm
		limit core.Limit
		packs bool
	}{
		{"fixed 1/s", core.FixedWindow, core.PerSecond(1), true},
		{"fixed one a µs for the longest period", core.FixedWindow, core.Every(maxPeriod.Microseconds(), maxPeriod), true},
		{"fixed 1/µs", core.FixedWindow, core.Every(1, time.Microsecond), true},
		{"fixed 2^40 a 2^40 µs", core.FixedWindow, core.Every(1<<40, (1<<40)*time.Microsecond), true},
		{"sliding 1/µs", core.SlidingWindow, core.Every(1, time.Microsecond), true},
		{"sliding 32767/s", core.SlidingWindow, core.PerSecond(32767), true},
		{"sliding 32768/s", core.SlidingWindow, core.PerSecond(32768), false},
		{"sliding 262143/min", core.SlidingWindow, core.PerMinute(262143), true},
		{"sliding 262144/min", core.SlidingWindow, core.PerMinute(262144), false},
		{"sliding 2097151/h", core.SlidingWindow, core.PerHour(2097151), true},
		{"sliding 2097152/h", core.SlidingWindow, core.PerHour(2097152), false},
		{"sliding 8388607/day", core.SlidingWindow, core.Every(8388607, 24*time.Hour), true},
		{"sliding 8388608/day", core.SlidingWindow, core.Every(8388608, 24*time.Hour), false},
		{"sliding 2^28 a MaxPeriod", core.SlidingWindow, core.Every(1<<28, maxPeriod), true},
		{"sliding 2^29 a MaxPeriod", core.SlidingWindow, core.Every(1<<29, maxPeriod), false},
		{"sliding 2^40 a 2^40 µs", core.SlidingWindow, core.Every(1<<40, (1<<40)*time.Microsecond), false},
		{"gcra", core.GCRA, core.PerSecond(1), false},
		{"sliding log", core.SlidingLog, core.PerSecond(1), false},
		{"unknown algorithm", core.Algorithm(99), core.PerSecond(1), false},
		{"zero rate", core.FixedWindow, core.Limit{Period: time.Second}, false},
		{"negative period", core.SlidingWindow, core.Limit{Rate: 1, Period: -time.Second}, false},
		{"period too long", core.FixedWindow, core.Every(1, maxPeriod+time.Microsecond), false},
		{"more than one a µs", core.FixedWindow, core.Every(2, time.Microsecond), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expect.Equal(t, c.packs, packs(c.alg, c.limit))
			if c.limit.Validate() == nil && (c.alg == core.FixedWindow || c.alg == core.SlidingWindow) {
				expect.Equal(t, c.packs, fitsWord(c.limit, c.alg == core.SlidingWindow), "the packing's own condition")
				req := prepared(t, c.alg, c.limit)
				_, ok := req.WindowPacking()
				expect.Equal(t, c.packs, ok, "a Limiter's request gets the same answer")
			}
		})
	}
	for _, ls := range [][]core.Limit{nil, {core.PerSecond(1), core.PerMinute(10)}} {
		_, ok := (&core.TakeRequest{Algorithm: core.FixedWindow, Limits: ls}).WindowPacking()
		expect.False(t, ok, "%d limits", len(ls))
	}
	for _, period := range edgePeriods {
		rate := boundaryRate(t, period)
		expect.True(t, fitsWord(core.Every(rate, period), true), "%d per %s", rate, period)
		if next := rate + 1; next <= period.Microseconds() {
			expect.False(t, packs(core.SlidingWindow, core.Every(next, period)), "%d per %s", next, period)
			expect.False(t, fitsWord(core.Every(next, period), true), "%d per %s", next, period)
		}
	}
}

// windowStep is one request of a random sequence: a spend, a peek or a
// refund of a cost admitted at an earlier instant.
type windowStep struct {
	now, cost, admitted int64
}

// randomWindowSteps makes a sequence for l that bursts, crawls, crosses
// windows, steps the clock back, and jumps to the first and the last windows
// the algorithms accept (the largest window index a packing holds).
func randomWindowSteps(rng *rand.Rand, l core.Limit, n int) []windowStep {
	period := l.Period.Microseconds()
	now := int64(1_773_500_966_535_897) + rng.Int64N(period)
	var past []int64
	steps := make([]windowStep, 0, n)
	for range n {
		switch r := rng.IntN(100); {
		case r < 40: // the same instant
		case r < 70:
			now += rng.Int64N(max(1, period/max(1, l.Rate)*3))
		case r < 85:
			now += rng.Int64N(3 * period)
		case r < 93:
			now -= rng.Int64N(2*period + 1) // the clock steps back
		case r < 96:
			now = core.MaxTime - rng.Int64N(3*period) // the last windows
		default:
			now = rng.Int64N(3 * period) // the first windows
		}
		now = min(max(now, 0), core.MaxTime)
		past = append(past, now)
		step := windowStep{now: now}
		switch r := rng.IntN(100); {
		case r < 45:
			step.cost = 1
		case r < 60:
			step.cost = rng.Int64N(l.Rate + 1)
		case r < 67:
			step.cost = l.Rate
		case r < 74:
			step.cost = l.Rate + 1
		case r < 77:
			step.cost = math.MaxInt64
		case r < 85:
			step.cost = 0
		default:
			step.cost = -1 - rng.Int64N(l.Rate)
			step.admitted = past[len(past)-1-rng.IntN(min(len(past), 30))]
		}
		steps = append(steps, step)
	}
	return steps
}

// reference decides step on the unpacked state: Algorithm.ApplyAll for a
// spend or a peek, Decide (the refund rules, then a peek) for a refund.
func reference(t *testing.T, req core.TakeRequest, st *core.State, step windowStep) core.Decision {
	t.Helper()
	states := []core.State{*st}
	var d core.Decision
	var err error
	if step.cost < 0 {
		err = req.Decide(&d, states, step.now)
	} else {
		d, err = req.Algorithm.ApplyAll(states, req.Limits, step.cost, step.now)
	}
	must.NoError(t, err)
	*st = states[0]
	return d
}

// The packed form decides as the unpacked State does, and leaves the state
// the algorithm leaves, step by step, on random sequences under limits at the
// edge of what packs, from the first window to the last, for requests built by
// a Limiter and by hand.
func TestWindowWordAgreesWithApplyAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	var limits []core.Limit
	for _, period := range edgePeriods {
		edge := boundaryRate(t, period)
		limits = append(limits, core.Every(edge, period), core.Every(max(1, edge/2+1), period), core.Every(3, max(period, 3*time.Microsecond)))
	}
	limits = append(limits, core.Every(1, core.MaxPeriod), core.Every(1<<28, core.MaxPeriod), core.Every(1<<29, core.MaxPeriod),
		core.Every(core.MaxPeriod.Microseconds(), core.MaxPeriod), core.Every(1<<40, (1<<40)*time.Microsecond))
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		for _, l := range limits {
			if !packs(alg, l) {
				must.Equal(t, core.SlidingWindow, alg, "the fixed window always packs: %s", l)
				continue
			}
			steps := randomWindowSteps(rng, l, 600)
			for _, req := range []core.TakeRequest{{Algorithm: alg, Limits: []core.Limit{l}}, prepared(t, alg, l)} {
				t.Run(alg.String()+" "+l.String(), func(t *testing.T) {
					checkWindowSteps(t, req, steps)
				})
			}
		}
	}
}

func checkWindowSteps(t *testing.T, req core.TakeRequest, steps []windowStep) {
	pk, ok := req.WindowPacking()
	must.True(t, ok)
	var st core.State
	var word int64
	for n, step := range steps {
		req.Cost, req.Admitted = step.cost, time.Time{}
		if step.cost < 0 {
			req.Admitted = time.UnixMicro(step.admitted)
		}
		next := req.AdvanceWindowWord(word, step.now)
		var got core.Decision
		must.NoError(t, req.DecideWindowWord(&got, word, step.now), "step %d", n)
		want := reference(t, req, &st, step)
		must.Equal(t, want, got, "step %d: cost %d at %d", n, step.cost, step.now)
		must.Equal(t, st, pk.Unpack(next), "step %d: the state the algorithm leaves", n)
		packed, ok := pk.Pack(st)
		must.True(t, ok, "step %d: %+v packs", n, st)
		must.Equal(t, packed, next, "step %d", n)
		must.GreaterOrEqual(t, next, int64(0), "step %d: a word is never negative", n)
		must.Equal(t, req.FreshAt([]core.State{st}), pk.FreshAt(next), "step %d", n)
		word = next
	}
}

func TestWindowPackRejectsWhatIsNoState(t *testing.T) {
	pk, ok := (&core.TakeRequest{Algorithm: core.SlidingWindow, Limits: []core.Limit{core.PerMinute(100)}}).WindowPacking()
	must.True(t, ok)
	fixed, ok := (&core.TakeRequest{Algorithm: core.FixedWindow, Limits: []core.Limit{core.PerMinute(100)}}).WindowPacking()
	must.True(t, ok)
	minute := time.Minute.Microseconds()
	cases := map[string]struct {
		pk core.WindowPacking
		s  core.State
	}{
		"zero packing":           {0, core.State{}},
		"forged packing":         {pk | 1<<6, core.State{}},
		"packing that overflows": {core.WindowPacking(1<<8 | 40), core.State{}},
		"unaligned start":        {pk, core.State{T: minute + 1, N: 1}},
		"negative start":         {pk, core.State{T: -minute, N: 1}},
		"start after MaxTime":    {pk, core.State{T: (core.MaxTime/minute + 1) * minute, N: 1}},
		"count beyond bits":      {pk, core.State{T: minute, N: 128}},
		"negative count":         {pk, core.State{T: minute, N: -1}},
		"previous beyond bits":   {pk, core.State{T: minute, P: 128}},
		"previous for fixed":     {fixed, core.State{T: minute, N: 1, P: 1}},
		"a log":                  {pk, core.State{T: minute, Log: []int64{1}}},
		"a head":                 {pk, core.State{T: minute, Head: 1}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, ok := c.pk.Pack(c.s)
			expect.False(t, ok)
		})
	}
	word, ok := pk.Pack(core.State{T: 5 * minute, N: 127, P: 3})
	must.True(t, ok)
	expect.Equal(t, core.State{T: 5 * minute, N: 127, P: 3}, pk.Unpack(word))
	expect.Equal(t, 7*minute, pk.FreshAt(word))
	expect.Equal(t, core.State{}, pk.Unpack(-1), "a store's marker unpacks to a fresh state")
	expect.Equal(t, int64(0), pk.FreshAt(-2))
	expect.Equal(t, core.State{}, core.WindowPacking(0).Unpack(12345), "the zero packing holds nothing")
}

// Any packing and any word, forged or not, unpack without a panic, and a
// state that packs again unpacks to itself, with the same FreshAt.
func TestWindowPackingOfAnyWord(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	packings := []core.WindowPacking{0, math.MaxUint64}
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		for _, l := range []core.Limit{core.PerSecond(1), core.PerMinute(100), core.Every(1<<28, core.MaxPeriod)} {
			pk, ok := (&core.TakeRequest{Algorithm: alg, Limits: []core.Limit{l}}).WindowPacking()
			must.True(t, ok)
			packings = append(packings, pk)
		}
	}
	for range 20_000 {
		pk := packings[rng.IntN(len(packings))]
		if rng.IntN(4) == 0 {
			pk = core.WindowPacking(rng.Uint64())
		}
		word := int64(rng.Uint64() >> rng.IntN(64))
		var s core.State
		var at int64
		must.NotPanics(t, func() { s, at = pk.Unpack(word), pk.FreshAt(word) })
		if packed, ok := pk.Pack(s); ok {
			must.Equal(t, s, pk.Unpack(packed), "%#x %#x", pk, word)
			must.Equal(t, at, pk.FreshAt(packed), "%#x %#x", pk, word)
		}
	}
}

func TestWindowWordLeavesInvalidRequestsAlone(t *testing.T) {
	l := core.PerSecond(10)
	const t0 = int64(1_700_000_000_000_000)
	cases := map[string]struct {
		alg       core.Algorithm
		limits    []core.Limit
		cost, now int64
		decides   bool // DecideWindowWord decides (a peek or a denial)
	}{
		"meter":            {core.GCRA, []core.Limit{l}, 1, t0, false},
		"sliding log":      {core.SlidingLog, []core.Limit{l}, 1, t0, false},
		"unknown":          {core.Algorithm(200), []core.Limit{l}, 1, t0, false},
		"peek":             {core.FixedWindow, []core.Limit{l}, 0, t0, true},
		"over capacity":    {core.SlidingWindow, []core.Limit{l}, 11, t0, true},
		"overflowing cost": {core.FixedWindow, []core.Limit{l}, math.MaxInt64, t0, true},
		"negative time":    {core.FixedWindow, []core.Limit{l}, 1, -5, false},
		"time past max":    {core.SlidingWindow, []core.Limit{l}, 1, core.MaxTime + 1, false},
		"refund, bad time": {core.SlidingWindow, []core.Limit{l}, -1, -5, false},
		"invalid limit":    {core.FixedWindow, []core.Limit{{Rate: -1, Period: time.Second}}, 1, t0, false},
		"does not pack":    {core.SlidingWindow, []core.Limit{core.PerSecond(1 << 20)}, 1, t0, false},
		"two limits":       {core.FixedWindow, []core.Limit{l, l}, 1, t0, false},
		"no limits":        {core.FixedWindow, nil, 1, t0, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			req := core.TakeRequest{Algorithm: c.alg, Limits: c.limits, Cost: c.cost}
			word := int64(42)
			if pk, ok := req.WindowPacking(); ok { // this second's window, 3 counted
				word, ok = pk.Pack(core.State{T: t0 - t0%time.Second.Microseconds(), N: 3})
				must.True(t, ok)
			}
			expect.Equal(t, word, req.AdvanceWindowWord(word, c.now))
			expect.Equal(t, int64(-1), req.AdvanceWindowWord(-1, c.now), "a store's marker is left alone")
			var d core.Decision
			err := req.DecideWindowWord(&d, word, c.now)
			if c.decides {
				must.NoError(t, err)
				expect.False(t, d.Allowed && c.cost > 0)
				return
			}
			must.Error(t, err)
			if c.alg == core.FixedWindow || c.alg == core.SlidingWindow {
				expect.False(t, d.Allowed)
			} else {
				expect.ErrorIs(t, err, core.ErrInvalidLimit)
			}
		})
	}
}

// A decision on a packed window allocates nothing, for a Limiter's request.
func TestWindowWordAllocatesNothing(t *testing.T) {
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		req := prepared(t, alg, core.PerMinute(1000))
		now := int64(1_700_000_000_000_000)
		var word int64
		var d core.Decision
		allocs := testing.AllocsPerRun(1000, func() {
			now += 997
			next := req.AdvanceWindowWord(word, now)
			if err := req.DecideWindowWord(&d, word, now); err != nil {
				t.Fatal(err)
			}
			word = next
		})
		expect.Zero(t, allocs, alg.String())
	}
}
