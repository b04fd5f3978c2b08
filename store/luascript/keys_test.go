package luascript

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendSpec(t *testing.T) {
	tests := []struct {
		limit core.Limit
		want  string
	}{
		{core.PerSecond(10), "10/1s"},
		{core.PerMinute(100), "100/1m"},
		{core.PerHour(5).WithBurst(20), "5/1h/20"},
		{core.Every(1000, 24*time.Hour), "1000/1d"},
		{core.Every(3, 48*time.Hour), "3/2d"},
		{core.Every(1, 90*time.Second), "1/90s"},
		{core.Every(1, 1500*time.Millisecond), "1/1500ms"},
		{core.Every(1, 1001*time.Microsecond), "1/1001us"},
		{core.Every(1, time.Millisecond), "1/1ms"},
		{core.Every(7, 25*time.Hour), "7/25h"},
		{core.PerSecond(10).WithBurst(10), "10/1s"},
		{core.PerSecond(10).WithBurst(0), "10/1s"},
		{core.PerSecond(10).WithBurst(1), "10/1s/1"},
		{core.Limit{Rate: 1, Period: core.MaxPeriod}, "1/" + strconv.FormatInt(core.MaxPeriod.Microseconds(), 10) + "us"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			f, err := figuresOf(tt.limit)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(appendSpec(nil, f)))
		})
	}
}

// specPattern is a spec as appendSpec writes it.
var specPattern = regexp.MustCompile(`^([1-9][0-9]*)/([1-9][0-9]*)(d|h|m|s|ms|us)(?:/([0-9]+))?$`)

// parseSpec reads a spec back, as an operator reading a key would.
func parseSpec(t *testing.T, spec string) figures {
	t.Helper()
	m := specPattern.FindStringSubmatch(spec)
	require.NotNil(t, m, spec)
	num := func(s string) int64 {
		v, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, spec)
		return v
	}
	f := figures{rate: num(m[1]), burst: num(m[1])}
	for _, u := range periodUnits {
		if u.suffix == m[3] {
			f.period = num(m[2]) * u.micros
		}
	}
	if m[4] != "" {
		f.burst = num(m[4])
	}
	return f
}

// Every spec reads back as the limit it names, so two limits that differ in
// rate, period or burst never share a key, and the spec holds no character
// that separates a key's parts.
func TestSpecReadsBack(t *testing.T) {
	periods := []time.Duration{
		time.Microsecond, 999 * time.Microsecond, time.Millisecond, 1001 * time.Millisecond, time.Second,
		59 * time.Second, time.Minute, 61 * time.Minute, time.Hour, 23 * time.Hour, 24 * time.Hour,
		7 * 24 * time.Hour, 36 * time.Hour, core.MaxPeriod,
	}
	seen := map[string]figures{}
	for _, p := range periods {
		for _, rate := range []int64{1, 2, 10, 1000} {
			for _, burst := range []int64{0, 1, rate, 2 * rate, 3*rate + 1} {
				l := core.Limit{Rate: rate, Period: p, Burst: burst}
				f, err := figuresOf(l)
				if err != nil {
					continue // a rate above 1/µs
				}
				spec := string(appendSpec(nil, f))
				got := parseSpec(t, spec)
				got.interval, got.tau = f.interval, f.tau
				require.Equal(t, f, got, "%s reads back as %s", spec, l)
				if prev, ok := seen[spec]; ok {
					require.Equal(t, prev, f, "two limits share %q", spec)
				}
				seen[spec] = f
			}
		}
	}
	assert.Greater(t, len(seen), 150, fmt.Sprint("distinct specs: ", len(seen)))
}

// Every algorithm has its own code, a letter that cannot be read as part of
// a spec or a tag.
func TestAlgorithmCodes(t *testing.T) {
	seen := map[string]core.Algorithm{}
	for _, alg := range core.Algorithms() {
		code := algorithmCodes[alg]
		require.Regexp(t, `^[a-z]$`, code, alg.String())
		_, dup := seen[code]
		require.False(t, dup, "%s and %s share %q", alg, seen[code], code)
		seen[code] = alg
	}
}
