package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
)

// The seed's promise: an admitted rate of min(offered, 10) within 1%. The
// sliding window counter promises less: under sustained overload its estimate
// (prev weighted by the overlap, plus cur) reaches Rate only at the end of a
// window, so it admits Rate-1 per window, 9/s at 10/s.
func TestDriverRates(t *testing.T) {
	tests := []struct {
		alg     core.Algorithm
		ceiling float64
	}{
		{core.TokenBucket, 10},
		{core.LeakyBucket, 10},
		{core.FixedWindow, 10},
		{core.SlidingLog, 10},
		{core.SlidingWindow, 9},
		{core.GCRA, 10},
	}
	for _, tt := range tests {
		t.Run(tt.alg.String(), func(t *testing.T) {
			rows, err := driver(tt.alg, core.PerSecond(10), 100*time.Second)
			require.NoError(t, err)
			require.Len(t, rows, len(offeredRates))
			for i, r := range rows {
				assert.Equal(t, offeredRates[i], r.Offered)
				assert.Equal(t, 100*r.Offered, r.Requests)
				want := min(float64(r.Offered), tt.ceiling)
				assert.InEpsilon(t, want, r.Rate, 0.01, "offered %d/s: rate %.3f", r.Offered, r.Rate)
			}
		})
	}
}

// With the seed's 10-second phases, the burst of 10 left in a full bucket at
// the start of the 20/s phase shows: 200 requests in 19 s.
func TestDriverSeedPhases(t *testing.T) {
	rows, err := driver(core.TokenBucket, core.PerSecond(10), 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, int64(200), rows[4].Requests)
	assert.InDelta(t, 19.0, rows[4].Seconds, 1e-9)
	assert.InDelta(t, 10.0, rows[3].Rate, 1e-9)
}

func TestDriverRejectsPhase(t *testing.T) {
	for _, d := range []time.Duration{0, 500 * time.Millisecond, 1500 * time.Millisecond, -time.Second} {
		_, err := driver(core.GCRA, core.PerSecond(10), d)
		assert.Error(t, err, d.String())
	}
}

func TestFlood(t *testing.T) {
	lim := core.PerSecond(10)
	tests := []struct {
		alg      core.Algorithm
		admitted int
		busiest  int
	}{
		// Burst of 10, then one per 100 ms: 10 + 23 by 3.2 s; 19 in the busiest second.
		{core.TokenBucket, 33, 19},
		{core.GCRA, 33, 19},
		// Passed on at one per 100 ms from 0.8 s: 24 before 3.2 s.
		{core.LeakyBucket, 24, 10},
		// 10 in each of the windows [0.8,1), [1,2), [2,3), [3,3.2).
		{core.FixedWindow, 40, 20},
		// 10 at 0.8 s, 1.8 s and 2.8 s.
		{core.SlidingLog, 30, 10},
		{core.SlidingWindow, 30, 17},
	}
	for _, tt := range tests {
		t.Run(tt.alg.String(), func(t *testing.T) {
			passed, err := flood(tt.alg, lim)
			require.NoError(t, err)
			assert.Len(t, passed, tt.admitted)
			assert.Equal(t, tt.busiest, busiest(passed, time.Second))
			for i := 1; i < len(passed); i++ {
				require.LessOrEqual(t, passed[i-1], passed[i], "instants out of order")
			}
		})
	}
}

func TestFixedWindowBoundaryBurst(t *testing.T) {
	passed, err := flood(core.FixedWindow, core.PerSecond(10))
	require.NoError(t, err)
	span, ok := tightest(passed, 20)
	require.True(t, ok)
	assert.Equal(t, 290*time.Millisecond, span)
}

func TestBusiestAndTightest(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		name    string
		times   []time.Duration
		busiest int
		n       int
		span    time.Duration
		ok      bool
	}{
		{"empty", nil, 0, 1, 0, false},
		{"one", ms(5), 1, 1, 0, true},
		{"window is half-open", ms(0, 1000), 1, 2, time.Second, true},
		{"cluster", ms(0, 900, 950, 999, 1500), 4, 3, 99 * time.Millisecond, true},
		{"too few", ms(0, 1), 2, 3, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.busiest, busiest(tt.times, time.Second))
			span, ok := tightest(tt.times, tt.n)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.span, span)
		})
	}
}

func TestRunWritesTablesAndChart(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "chart.svg")
	var out, errOut bytes.Buffer
	start := time.Now()
	code := run([]string{"-svg", svg}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	assert.Less(t, time.Since(start), 5*time.Second, "the simulation must not sleep")
	assert.Empty(t, errOut.String())
	for _, alg := range core.Algorithms() {
		assert.Contains(t, out.String(), "\n"+alg.String()+"\n")
	}
	assert.Contains(t, out.String(), "     20      2000    199.000    10.050")

	data, err := os.ReadFile(svg)
	require.NoError(t, err)
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "the chart must be well-formed XML")
	}
	s := string(data)
	assert.True(t, strings.HasPrefix(s, "<svg "))
	for _, alg := range core.Algorithms() {
		assert.Contains(t, s, ">"+alg.String()+"</text>")
	}
	assert.Contains(t, s, "20 within 290ms")
}

// The committed chart is what the program draws today.
func TestCommittedChartIsCurrent(t *testing.T) {
	committed, err := os.ReadFile(filepath.Join("..", "..", "docs", "algorithms.svg"))
	require.NoError(t, err)
	svg := filepath.Join(t.TempDir(), "chart.svg")
	require.Equal(t, 0, run([]string{"-svg", svg}, io.Discard, io.Discard))
	fresh, err := os.ReadFile(svg)
	require.NoError(t, err)
	assert.Equal(t, string(fresh), string(committed), "run go run ./examples/simulate from the repository root to redraw docs/algorithms.svg")
}

func TestRunBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"garbage limit", []string{"-limit", "fast"}, "-limit"},
		{"zero rate", []string{"-limit", "0/s"}, "-limit"},
		{"burst", []string{"-limit", "10/s burst 20"}, "no burst"},
		{"fractional phase", []string{"-phase", "1500ms"}, "whole number of seconds"},
		{"short phase", []string{"-phase", "0s"}, "whole number of seconds"},
		{"unknown flag", []string{"-nope"}, "-nope"},
		{"stray argument", []string{"extra"}, "unexpected argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(append(tt.args, "-svg", ""), &out, &errOut)
			assert.Equal(t, 2, code)
			assert.Contains(t, errOut.String(), tt.want)
		})
	}
}

func TestRunUnwritableChart(t *testing.T) {
	var errOut bytes.Buffer
	code := run([]string{"-svg", filepath.Join(t.TempDir(), "missing", "chart.svg")}, io.Discard, &errOut)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut.String(), "writing the chart")
}
