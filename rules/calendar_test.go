package rules

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
)

// time_zone and anchor_day reach every calendar limit of the policy that
// names none of its own: its limits, its tiers' and its overrides'; N/day
// becomes a calendar day in the zone; a limit's own zone and anchor stay.
func TestCalendarFields(t *testing.T) {
	doc, err := Parse([]byte(head+
		"  - name: monthly\n"+
		"    algorithm: fixed-window\n"+
		"    time_zone: America/New_York\n"+
		"    anchor_day: 31\n"+
		"    limits: [10000/month, 500/day, 10/s, 20/week anchor 3, 3/month in Asia/Tokyo anchor 2]\n"+
		"    overrides: [{key: big, limits: [50000/month]}]\n"+
		"  - name: tiered\n"+
		"    algorithm: sliding-window\n"+
		"    time_zone: Europe/Berlin\n"+
		"    tiers: {by: {header: X-Plan}, default: free, limits: {free: [100/month], pro: [1000/day]}}\n"), "test")
	require.NoError(t, err)
	ny := func(l core.Limit) core.Limit { return l.In("America/New_York") }
	assert.Equal(t, []core.Limit{
		ny(core.Monthly(10000)).AnchoredOn(31), ny(core.Daily(500)), core.PerSecond(10),
		ny(core.Weekly(20)).AnchoredOn(3), core.Monthly(3).In("Asia/Tokyo").AnchoredOn(2),
	}, doc.Policies[0].Limits)
	assert.Equal(t, []core.Limit{ny(core.Monthly(50000)).AnchoredOn(31)}, doc.Policies[0].Overrides[0].Limits)
	assert.Equal(t, []core.Limit{core.Monthly(100).In("Europe/Berlin")}, doc.Policies[1].Tiers.Levels[0].Limits)
	assert.Equal(t, []core.Limit{core.Daily(1000).In("Europe/Berlin")}, doc.Policies[1].Tiers.Levels[1].Limits)
	assert.Equal(t, doc.Policies[1].Tiers.Levels[0].Limits, doc.Policies[1].Limits, "the default tier's")
}

func TestCalendarProblems(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		wants []want
	}{
		{"unknown zone", one("{name: a, algorithm: fixed-window, limits: [1/month], time_zone: Mars/Olympus}"),
			[]want{{"4:70", "policies[0].time_zone", `unknown time zone "Mars/Olympus"`}}},
		{"anchor 0", one("{name: a, algorithm: fixed-window, limits: [1/month], anchor_day: 0}"),
			[]want{{"4:71", "policies[0].anchor_day", "anchor_day 0 is not a day of the month from 1 to 31"}}},
		{"anchor 32", one("{name: a, algorithm: fixed-window, limits: [1/month], anchor_day: 32}"),
			[]want{{"4:71", "policies[0].anchor_day", "anchor_day 32 is not a day of the month from 1 to 31"}}},
		{"a zone with no calendar limit", one("{name: a, limits: [1/s], time_zone: Europe/Berlin}"),
			[]want{{"4:41", "policies[0].time_zone", "time_zone applies to calendar limits"}}},
		{"an anchor on daily limits", one("{name: a, algorithm: fixed-window, limits: [1/day], time_zone: UTC, anchor_day: 3}"),
			[]want{{"4:85", "policies[0].anchor_day", "anchor_day applies to monthly and weekly limits"}}},
		{"a weekly anchor past Sunday", one("{name: a, algorithm: fixed-window, limits: [1/week], anchor_day: 9}"),
			[]want{{"4:70", "policies[0].anchor_day", "ISO weekday from 1 (Monday) to 7 (Sunday)"}}},
		{"a zone in the limit's text", one("{name: a, algorithm: fixed-window, limits: [1/month in Nowhere/Land]}"),
			[]want{{"4:49", "policies[0].limits[0]", `unknown time zone "Nowhere/Land"`}}},
		{"a billing day that cannot be", one("{name: a, algorithm: fixed-window, limits: [1/month anchor 32]}"),
			[]want{{"4:49", "policies[0].limits[0]", "anchor day \"32\" is not a day from 1 to 31"}}},
		{"0/month", one("{name: a, algorithm: fixed-window, limits: [0/month]}"),
			[]want{{"4:49", "policies[0].limits[0]", "rate must be positive"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc), "test")
			requireProblems(t, err, tt.wants...)
		})
	}
}

// A calendar limit under an algorithm other than the windows is refused
// where the policy names it, with the algorithm.
func TestCalendarAlgorithmProblem(t *testing.T) {
	_, err := Parse([]byte(one("{name: a, algorithm: gcra, limits: [100/month]}")), "test")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "4:")
	assert.Contains(t, err.Error(), "gcra cannot follow calendar months")
}

// The document's digest tells calendar limits apart by zone and anchor.
func TestCalendarDigest(t *testing.T) {
	a, err := Parse([]byte(one("{name: a, algorithm: fixed-window, limits: [100/month], time_zone: Europe/Berlin}")), "a")
	require.NoError(t, err)
	b, err := Parse([]byte(one("{name: a, algorithm: fixed-window, limits: [100/month], time_zone: Europe/Paris}")), "b")
	require.NoError(t, err)
	assert.NotEqual(t, a.Digest(), b.Digest())
}

// A Set built from a document with a calendar policy counts per calendar
// month in the policy's zone: Peek reports what is left until the boundary.
func TestCalendarSet(t *testing.T) {
	doc, err := Parse([]byte(one("{name: monthly, algorithm: fixed-window, limits: [2/month], time_zone: America/New_York, anchor_day: 15}")), "test")
	require.NoError(t, err)
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	clk := core.NewManualClock(time.Date(2026, 5, 14, 23, 0, 0, 0, ny))
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	set, err := New(st, doc, WithClock(clk))
	require.NoError(t, err)
	ctx := context.Background()
	res, err := set.Peek(ctx, "monthly", "k")
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.Equal(t, int64(2), res[0].Decision.Remaining)
	_, end, err := res[0].Decision.Limit.WindowAt(clk.Now())
	require.NoError(t, err)
	assert.Equal(t, time.Date(2026, 5, 15, 0, 0, 0, 0, ny).UnixMicro(), end.UnixMicro())
}
