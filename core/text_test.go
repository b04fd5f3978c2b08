package core_test

import (
	"encoding"
	"encoding/json"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
)

// The encodings plug into every library that knows the encoding interfaces.
var (
	_ encoding.TextMarshaler   = core.Limit{}
	_ encoding.TextUnmarshaler = (*core.Limit)(nil)
	_ encoding.TextMarshaler   = core.Algorithm(0)
	_ encoding.TextUnmarshaler = (*core.Algorithm)(nil)
)

func TestLimitTextRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		limit core.Limit
		text  string
	}{
		{"per second", core.PerSecond(10), "10/s"},
		{"per minute", core.PerMinute(100), "100/m"},
		{"per hour", core.PerHour(1000), "1000/h"},
		{"per day", core.Every(5000, 24*time.Hour), "5000/d"},
		{"milliseconds", core.Every(1, 250*time.Millisecond), "1/250ms"},
		{"one millisecond", core.Every(1, time.Millisecond), "1/1ms"},
		{"microseconds", core.Every(1, time.Microsecond), "1/1µs"},
		{"thirty seconds", core.Every(5, 30*time.Second), "5/30s"},
		{"a minute and a half", core.Every(100, 90*time.Second), "100/1m30s"},
		{"fractional seconds", core.Every(3, 1500*time.Millisecond), "3/1.5s"},
		{"ninety minutes", core.Every(7, 90*time.Minute), "7/1h30m0s"},
		{"two days", core.Every(9, 48*time.Hour), "9/48h0m0s"},
		{"a week", core.Every(70, 7*24*time.Hour), "70/168h0m0s"},
		{"longest period", core.Every(1, core.MaxPeriod), "1/" + core.MaxPeriod.String()},
		{"burst above rate", core.PerSecond(10).WithBurst(20), "10/s burst 20"},
		{"burst below rate", core.PerMinute(100).WithBurst(5), "100/m burst 5"},
		{"burst with odd period", core.Every(2, 90*time.Second).WithBurst(9), "2/1m30s burst 9"},
		{"one per hour, burst of a day", core.PerHour(1).WithBurst(24), "1/h burst 24"},
		{"largest rate", core.Every(1_000_000, time.Second), "1000000/s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, err := tt.limit.MarshalText()
			must.NoError(t, err)
			expect.Equal(t, tt.text, string(text))

			var back core.Limit
			must.NoError(t, back.UnmarshalText(text))
			expect.Equal(t, tt.limit, back)

			parsed, err := core.ParseLimit(tt.text)
			must.NoError(t, err)
			expect.Equal(t, parsed, back, "UnmarshalText reads as ParseLimit does")
		})
	}
}

// The name is not part of the text; a burst of 0 is written as the rate it
// stands for, and read back as that rate.
func TestLimitTextLeavesOutNameAndZeroBurst(t *testing.T) {
	l := core.Limit{Rate: 3, Period: time.Minute, Name: `a "quoted" name`}
	text, err := l.MarshalText()
	must.NoError(t, err, "the name is not written, so it is not checked")
	expect.Equal(t, "3/m", string(text))

	var back core.Limit
	must.NoError(t, back.UnmarshalText(text))
	expect.Equal(t, core.PerMinute(3), back)
	expect.Empty(t, back.Name)
}

func TestLimitMarshalTextRefusesInvalidLimits(t *testing.T) {
	tests := []struct {
		name  string
		limit core.Limit
	}{
		{"zero", core.Limit{}},
		{"negative rate", core.Limit{Rate: -1, Period: time.Second}},
		{"no period", core.Limit{Rate: 1}},
		{"negative burst", core.Limit{Rate: 1, Period: time.Second, Burst: -2}},
		{"nanosecond period", core.Every(1, 1500*time.Nanosecond)},
		{"period too long", core.Every(1, core.MaxPeriod+time.Second)},
		{"faster than a microsecond", core.Every(2, time.Microsecond)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, err := tt.limit.MarshalText()
			must.ErrorIs(t, err, core.ErrInvalidLimit)
			expect.Nil(t, text)
		})
	}
}

func TestLimitUnmarshalTextRefusesNonsense(t *testing.T) {
	for _, text := range []string{"", "10", "10/x", "x/s", "0/s", "-1/s", "10/s burst 0", "10/s burst x",
		"10/-1s", "1/0s", "99999999999999999999/s", "10/s burst", "\x00/s", "10/s\n/m"} {
		t.Run(text, func(t *testing.T) {
			before := core.PerSecond(42).Named("kept")
			l := before
			err := l.UnmarshalText([]byte(text))
			must.ErrorIs(t, err, core.ErrInvalidLimit)
			expect.Equal(t, before, l, "a failed decode leaves the limit as it was")
		})
	}
}

func TestAlgorithmTextRoundTrip(t *testing.T) {
	for _, a := range core.Algorithms() {
		t.Run(a.String(), func(t *testing.T) {
			text, err := a.MarshalText()
			must.NoError(t, err)
			expect.Equal(t, a.String(), string(text))

			var back core.Algorithm
			must.NoError(t, back.UnmarshalText(text))
			expect.Equal(t, a, back)
		})
	}
}

func TestAlgorithmUnmarshalTextForms(t *testing.T) {
	tests := []struct {
		text string
		want core.Algorithm
	}{
		{"gcra", core.GCRA},
		{"GCRA", core.GCRA},
		{"token_bucket", core.TokenBucket},
		{"Sliding-Window", core.SlidingWindow},
		{" fixed-window ", core.FixedWindow},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			var a core.Algorithm
			must.NoError(t, a.UnmarshalText([]byte(tt.text)))
			expect.Equal(t, tt.want, a)
		})
	}
}

func TestAlgorithmTextRefusesUnknown(t *testing.T) {
	for _, a := range []core.Algorithm{0, core.GCRA + 1, 255} {
		t.Run(a.String(), func(t *testing.T) {
			text, err := a.MarshalText()
			must.ErrorIs(t, err, core.ErrInvalidAlgorithm)
			expect.Nil(t, text)
		})
	}
	for _, text := range []string{"", "leaky", "gcra2", "token bucket", "\xff"} {
		t.Run(text, func(t *testing.T) {
			a := core.SlidingLog
			must.ErrorIs(t, a.UnmarshalText([]byte(text)), core.ErrInvalidAlgorithm)
			expect.Equal(t, core.SlidingLog, a, "a failed decode leaves the algorithm as it was")
		})
	}
}

// jsonConfig is a configuration a user might decode: limits and an algorithm
// as fields, in a slice and as map keys.
type jsonConfig struct {
	Limit     core.Limit                `json:"limit"`
	Algorithm core.Algorithm            `json:"algorithm"`
	More      []core.Limit              `json:"more"`
	PerAlgo   map[core.Algorithm]string `json:"per_algorithm"`
}

func TestTextEncodingsThroughJSON(t *testing.T) {
	in := jsonConfig{
		Limit:     core.PerSecond(10).WithBurst(20),
		Algorithm: core.SlidingWindow,
		More:      []core.Limit{core.PerMinute(100), core.Every(5, 90*time.Second)},
		PerAlgo:   map[core.Algorithm]string{core.GCRA: "exact"},
	}
	data, err := json.Marshal(in)
	must.NoError(t, err)
	expect.JSONEq(t, `{"limit":"10/s burst 20","algorithm":"sliding-window",
		"more":["100/m","5/1m30s"],"per_algorithm":{"gcra":"exact"}}`, string(data))

	var out jsonConfig
	must.NoError(t, json.Unmarshal(data, &out))
	expect.Equal(t, in, out)
}

func TestTextEncodingsThroughJSONRefuseBadValues(t *testing.T) {
	tests := []struct {
		name string
		json string
		want error
	}{
		{"bad limit", `{"limit":"10/x"}`, core.ErrInvalidLimit},
		{"bad limit in a list", `{"more":["1/s","nope"]}`, core.ErrInvalidLimit},
		{"bad algorithm", `{"algorithm":"lru"}`, core.ErrInvalidAlgorithm},
		{"bad algorithm as a key", `{"per_algorithm":{"fifo":"x"}}`, core.ErrInvalidAlgorithm},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out jsonConfig
			must.ErrorIs(t, json.Unmarshal([]byte(tt.json), &out), tt.want)
		})
	}

	var out jsonConfig
	var typeErr *json.UnmarshalTypeError
	must.ErrorAs(t, json.Unmarshal([]byte(`{"limit":5}`), &out), &typeErr, "a limit is text, not a number")

	_, err := json.Marshal(jsonConfig{Algorithm: core.GCRA})
	must.ErrorIs(t, err, core.ErrInvalidLimit, "a zero limit is not written as text that cannot be read back")
}
