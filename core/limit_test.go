package core_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

func TestLimitConstructors(t *testing.T) {
	tests := []struct {
		name     string
		got      core.Limit
		rate     int64
		period   time.Duration
		burst    int64
		interval time.Duration
		str      string
	}{
		{"PerSecond", core.PerSecond(10), 10, time.Second, 10, 100 * time.Millisecond, "10/s"},
		{"PerMinute", core.PerMinute(100), 100, time.Minute, 100, 600 * time.Millisecond, "100/m"},
		{"PerHour", core.PerHour(1000), 1000, time.Hour, 1000, 3600 * time.Millisecond, "1000/h"},
		{"Every", core.Every(5, 30*time.Second), 5, 30 * time.Second, 5, 6 * time.Second, "5/30s"},
		{"Every day", core.Every(5000, 24*time.Hour), 5000, 24 * time.Hour, 5000, 17280 * time.Millisecond, "5000/d"},
		{"WithBurst", core.PerSecond(10).WithBurst(20), 10, time.Second, 20, 100 * time.Millisecond, "10/s burst 20"},
		// 60 s / 7 = 8.571428... s, rounded up to a whole microsecond.
		{"interval rounds up", core.PerMinute(7), 7, time.Minute, 7, 8_571_429 * time.Microsecond, "7/m"},
		{"one per microsecond", core.Every(1, time.Microsecond), 1, time.Microsecond, 1, time.Microsecond, "1/1µs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			must.NoError(t, tt.got.Validate())
			expect.Equal(t, tt.rate, tt.got.Rate)
			expect.Equal(t, tt.period, tt.got.Period)
			expect.Equal(t, tt.burst, tt.got.Burst)
			expect.Equal(t, tt.burst, tt.got.EffectiveBurst())
			expect.Equal(t, tt.interval, tt.got.EmissionInterval())
			expect.Equal(t, tt.str, tt.got.String())
		})
	}
}

func TestLimitBurstZeroMeansRate(t *testing.T) {
	l := core.Limit{Rate: 3, Period: time.Second}
	must.NoError(t, l.Validate())
	expect.Equal(t, int64(3), l.EffectiveBurst())
	expect.Equal(t, "3/s", l.String())
}

// A Limit is a plain value: the one a decision names compares equal to the
// same limit written anew.
func TestLimitIsAValue(t *testing.T) {
	st := &captureStore{}
	lim, err := core.NewLimiter(st, core.GCRA, core.PerSecond(10))
	must.NoError(t, err)
	_, err = lim.Allow(context.Background(), "k")
	must.NoError(t, err)
	d, err := st.req.Algorithm.ApplyAll([]core.State{{}}, st.req.Limits, 1, core.Micros(time.Now()))
	must.NoError(t, err)
	expect.True(t, d.Limit == core.PerSecond(10).Named("default"))
	expect.True(t, lim.Limits()[0] == core.Every(10, time.Second).Named("default"))
	expect.False(t, d.Limit == core.PerSecond(10).Named("other"))
}

func TestNamed(t *testing.T) {
	base := core.PerSecond(10)
	named := base.Named("api")
	expect.Equal(t, "api", named.Name)
	expect.Empty(t, base.Name, "Named returns a copy")
	must.NoError(t, named.Validate())
}

// Invalid limits fail Validate (and NewLimit) with an error that wraps
// ErrInvalidLimit and says what is wrong.
func TestLimitValidateRejects(t *testing.T) {
	tests := []struct {
		name string
		l    core.Limit
		msg  string
	}{
		{"zero rate", core.PerSecond(0), "rate must be positive, got 0"},
		{"negative rate", core.PerSecond(-1), "rate must be positive, got -1"},
		{"zero period", core.Every(1, 0), "period must be positive, got 0s"},
		{"negative period", core.Every(1, -time.Second), "period must be positive, got -1s"},
		{"period above MaxPeriod", core.Every(1, core.MaxPeriod+time.Microsecond), "is longer than the maximum"},
		{"period not whole µs", core.Every(1, 1500*time.Nanosecond), "is not a whole number of microseconds"},
		{"negative burst", core.PerSecond(10).WithBurst(-1), "burst must not be negative, got -1"},
		{"above one per µs", core.Every(2, time.Microsecond), "more than one event per microsecond"},
		{"rate above one per µs over a second", core.PerSecond(1_000_001), "more than one event per microsecond"},
		{"burst spans more than MaxPeriod", core.PerSecond(1).WithBurst(1 << 40), "spans more than"},
		{"burst overflows", core.PerHour(1).WithBurst(1 << 62), "spans more than"},
		{"name with quote", core.PerSecond(1).Named(`a"b`), "may not hold quotes"},
		{"name with backslash", core.PerSecond(1).Named(`a\b`), "may not hold quotes"},
		{"name with newline", core.PerSecond(1).Named("a\nb"), "line breaks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.l.Validate()
			must.ErrorIs(t, err, core.ErrInvalidLimit)
			expect.Contains(t, err.Error(), tt.msg)
			expect.True(t, strings.HasPrefix(err.Error(), "ratewarden: invalid limit: "), err.Error())
		})
	}
}

func TestLimitBounds(t *testing.T) {
	// The largest period and the widest burst are accepted.
	must.NoError(t, core.Every(1, core.MaxPeriod).Validate())
	must.NoError(t, core.Every(1, time.Microsecond).WithBurst(1<<48).Validate())
	must.ErrorIs(t, core.Every(1, time.Microsecond).WithBurst(1<<48+1).Validate(), core.ErrInvalidLimit)
}

func TestParseLimit(t *testing.T) {
	tests := []struct {
		in   string
		want core.Limit
	}{
		{"10/s", core.PerSecond(10)},
		{"100/m", core.PerMinute(100)},
		{"1000/h", core.PerHour(1000)},
		{"5000/d", core.Every(5000, 24*time.Hour)},
		{"5/30s", core.Every(5, 30*time.Second)},
		{"10/s burst 20", core.PerSecond(10).WithBurst(20)},
		{"10/s burst 5", core.PerSecond(10).WithBurst(5)},
		{"7/min", core.PerMinute(7)},
		{"7/minute", core.PerMinute(7)},
		{"2/sec", core.PerSecond(2)},
		{"2/second", core.PerSecond(2)},
		{"3/hour", core.PerHour(3)},
		{"4/day", core.Every(4, 24*time.Hour)},
		{"5/ms", core.Every(5, time.Millisecond)},
		{" 3 / 1h30m ", core.Every(3, 90*time.Minute)},
		{"100/1m30s", core.Every(100, 90*time.Second)},
		{"1/1us", core.Every(1, time.Microsecond)},
		{"1/1µs", core.Every(1, time.Microsecond)},
		{"+4/s", core.PerSecond(4)},
		{"10/s  burst  20", core.PerSecond(10).WithBurst(20)},
		{"100/hr", core.PerHour(100)},
		{"100/hours", core.PerHour(100)},
		{"5/15min", core.Every(5, 15*time.Minute)},
		{"5/15m", core.Every(5, 15*time.Minute)},
		{"1000/7d", core.Every(1000, 7*24*time.Hour)},
		{"20/2days", core.Every(20, 48*time.Hour)},
		{"50/500ms", core.Every(50, 500*time.Millisecond)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := core.ParseLimit(tt.in)
			must.NoError(t, err)
			expect.Equal(t, tt.want, got)
		})
	}
}

func TestParseLimitRejects(t *testing.T) {
	tests := []struct {
		in  string
		msg string
	}{
		{"", "no '/'"},
		{"   ", "no '/'"},
		{"garbage", "no '/'"},
		{"10/", "period is not a unit (ms, s, m, h, d, or sec, min, hr, hour, day), a multiple of one (30s, 15min, 7d) or a Go duration (1h30m)"},
		{"/s", "rate is not a whole number"},
		{"ten/s", "rate is not a whole number"},
		{"1.5/s", "rate is not a whole number"},
		{"10/fortnight", "period is not a unit (ms, s, m, h, d, or sec, min, hr, hour, day), a multiple of one (30s, 15min, 7d) or a Go duration (1h30m)"},
		{"10/s burst x", "burst is not a whole number"},
		{"10/s burst ", "period is not a unit (ms, s, m, h, d, or sec, min, hr, hour, day), a multiple of one (30s, 15min, 7d) or a Go duration (1h30m)"}, // TrimSpace eats the trailing space: "burst" is then part of the period
		{"10/s burst 0", "burst must be positive"},
		{"10/s burst -3", "burst must be positive"},
		{"10/s burst 99999999999999999999", "burst is out of range"},
		{"99999999999999999999/s", "rate is out of range"},
		{"0/s", "rate must be positive, got 0"},
		{"-5/s", "rate must be positive, got -5"},
		{"10/0s", "period must be positive"},
		{"10/-1s", "period must be positive"},
		{"2/1us", "more than one event per microsecond"},
		{"2000000/s", "more than one event per microsecond"},
		{"1/1500ns", "not a whole number of microseconds"},
		{"1/90000h", "is longer than the maximum"},
		{"1/9999999999999h", "period is not a unit (ms, s, m, h, d, or sec, min, hr, hour, day), a multiple of one (30s, 15min, 7d) or a Go duration (1h30m)"}, // overflows time.Duration
		{"1/h burst 9223372036854775807", "spans more than"},
		{"10/s/s", "period is not a unit (ms, s, m, h, d, or sec, min, hr, hour, day), a multiple of one (30s, 15min, 7d) or a Go duration (1h30m)"},
		{`10/s "x"`, "period is not a unit (ms, s, m, h, d, or sec, min, hr, hour, day), a multiple of one (30s, 15min, 7d) or a Go duration (1h30m)"},
		{"10 s", "no '/'"},
		{"100/w", "period is not a unit"},
		{"100/fortnight", "period is not a unit"},
		{"100/month in Mars/Olympus", "unknown time zone"},
		{"0/month", "rate must be positive"},
		{"100/month anchor 0", "anchor day"},
		{"100/month anchor 32", "anchor day"},
		{"100/week anchor 8", "ISO weekday"},
		{"100/h in Europe/Berlin", "needs a calendar period"},
		{"100/day anchor 3", "takes no anchor day"},
		{"100/month in UTC in UTC", "given twice"},
		{"100/month in UTC at noon", "only burst N, in ZONE and anchor D"},
		{"100/month burst 200", "a calendar limit takes no burst"},
		{"5/0min", "period must be positive"},
		{"5/15fortnights", "period is not a unit"},
		{"5/99999999999999999999d", "period is not a unit"}, // the multiple overflows
		{"5/9999999999d", "period is not a unit"},           // the product overflows time.Duration
		{"5/-15min", "period is not a unit"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			l, err := core.ParseLimit(tt.in)
			must.ErrorIs(t, err, core.ErrInvalidLimit)
			expect.Contains(t, err.Error(), tt.msg)
			expect.True(t, strings.HasPrefix(err.Error(), "ratewarden: invalid limit: "), err.Error())
			expect.Equal(t, core.Limit{}, l)
		})
	}
}

// A hostile input is quoted, shortened, in the error.
func TestParseLimitErrorIsShort(t *testing.T) {
	_, err := core.ParseLimit(strings.Repeat("x", 10_000))
	must.ErrorIs(t, err, core.ErrInvalidLimit)
	expect.Less(t, len(err.Error()), 200)
}

func TestLimitStringRoundTrips(t *testing.T) {
	limits := []core.Limit{
		core.PerSecond(10), core.PerMinute(100), core.PerHour(1000), core.Every(5000, 24*time.Hour),
		core.Every(5, 30*time.Second), core.Every(3, 90*time.Minute), core.Every(1, time.Microsecond),
		core.Every(9, 1500*time.Microsecond), core.PerSecond(10).WithBurst(20), core.PerSecond(10).WithBurst(1),
		core.Every(1, core.MaxPeriod), {Rate: 4, Period: time.Minute},
	}
	for _, l := range limits {
		t.Run(l.String(), func(t *testing.T) {
			got, err := core.ParseLimit(l.String())
			must.NoError(t, err)
			expect.Equal(t, l.Rate, got.Rate)
			expect.Equal(t, l.Period, got.Period)
			expect.Equal(t, l.EffectiveBurst(), got.Burst)
			expect.Equal(t, l.String(), got.String())
		})
	}
}

func FuzzParseLimit(f *testing.F) {
	for _, s := range []string{"10/s", "100/m", "1000/h", "5/30s", "10/s burst 20", "7/min", " 3 / 1h30m ",
		"", "10/", "/s", "10/s burst x", "99999999999999999999/s", "1/1us", "1/1500ns", "1/h burst 9223372036854775807",
		"10000/month", "500/week anchor 7", "1000/day in Europe/Berlin", "10/month in America/New_York anchor 31", "1/d in UTC"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := core.ParseLimit(s)
		if err != nil {
			must.ErrorIs(t, err, core.ErrInvalidLimit)
			must.Equal(t, core.Limit{}, l)
			return
		}
		must.NoError(t, l.Validate())
		must.Positive(t, l.Burst, "a parsed limit carries its burst")
		back, err := core.ParseLimit(l.String())
		must.NoError(t, err, "%q formats as %q", s, l.String())
		must.Equal(t, l, back)
		alg := core.GCRA
		if l.IsCalendar() {
			alg = core.FixedWindow // the windows take calendar limits, the meters do not
		}
		_, err = core.NewLimiter(&captureStore{}, alg, l)
		must.NoError(t, err, "a parsed limit is enforceable")
	})
}
