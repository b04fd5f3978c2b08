package flags

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
)

func TestParseCalendar(t *testing.T) {
	jwt := []string{"-key", "jwt", "-jwt-secret", secret32, "-tier-claim", "plan"}
	tests := []struct {
		name  string
		args  []string
		want  core.Limit
		tiers []Tier
	}{
		{"a month in UTC", []string{"-algorithm", "fixed-window", "-limit", "10000/month"}, core.Monthly(10000), nil},
		{"a week in a zone", []string{"-algorithm", "sliding-window", "-limit", "500/week", "-tz", "Europe/Berlin"}, core.Weekly(500).In("Europe/Berlin"), nil},
		{"a billing day", []string{"-algorithm", "fixed-window", "-limit", "10000/month", "-tz", "America/New_York", "-anchor-day", "31"},
			core.Monthly(10000).In("America/New_York").AnchoredOn(31), nil},
		{"N/day with -tz is a calendar day", []string{"-algorithm", "fixed-window", "-limit", "1000/day", "-tz", "Asia/Tokyo"}, core.Daily(1000).In("Asia/Tokyo"), nil},
		{"-tz UTC makes N/day a calendar day in UTC", []string{"-algorithm", "fixed-window", "-limit", "1000/d", "-tz", "UTC"}, core.Daily(1000), nil},
		{"N/day alone stays 24 hours", []string{"-algorithm", "gcra", "-limit", "1000/day"}, core.Every(1000, 24*60*60*1e9), nil},
		{"a limit's own zone wins", []string{"-algorithm", "fixed-window", "-limit", "5/month in Asia/Tokyo", "-tz", "Europe/Berlin"}, core.Monthly(5).In("Asia/Tokyo"), nil},
		{"tiers take the zone", append(append([]string{}, jwt...), "-algorithm", "fixed-window", "-tier", "free=100/month", "-tier", "pro=100/day", "-tz", "Europe/Paris"),
			core.Monthly(100).In("Europe/Paris"), []Tier{{"free", core.Monthly(100).In("Europe/Paris")}, {"pro", core.Daily(100).In("Europe/Paris")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("ex", tt.args, &bytes.Buffer{})
			require.NoError(t, err)
			assert.Equal(t, tt.want, c.Limit)
			assert.Equal(t, tt.tiers, c.Tiers)
		})
	}
}

// Every bad calendar flag exits 2 with a message naming the flag.
func TestLoadBadCalendarFlags(t *testing.T) {
	fixed := []string{"-algorithm", "fixed-window"}
	with := func(args ...string) []string { return append(append([]string{}, fixed...), args...) }
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown zone", with("-limit", "5/month", "-tz", "Mars/Olympus"), `-tz "Mars/Olympus": unknown time zone`},
		{"the local zone", with("-limit", "5/month", "-tz", "Local"), `-tz "Local": unknown time zone`},
		{"0/month", with("-limit", "0/month"), "-limit"},
		{"anchor 0", with("-limit", "5/month", "-anchor-day", "0"), "-anchor-day 0: want a day of the month from 1 to 31"},
		{"anchor 32", with("-limit", "5/month", "-anchor-day", "32"), "-anchor-day 32"},
		{"anchor 8 on a week", with("-limit", "5/week", "-anchor-day", "8"), "ISO weekday"},
		{"anchor on a day", with("-limit", "5/day", "-anchor-day", "3"), "-anchor-day applies to N/month and N/week"},
		{"zone on a plain limit", with("-limit", "5/m", "-tz", "Europe/Berlin"), "-tz and -anchor-day apply to calendar limits"},
		{"a month under gcra", []string{"-limit", "5/month"}, "gcra cannot follow calendar months"},
		{"a zoned day under the token bucket", []string{"-algorithm", "token-bucket", "-limit", "5/day", "-tz", "Europe/Berlin"}, "token-bucket cannot follow calendar days"},
		{"-tz with -rules", []string{"-rules", "../../rules.yaml", "-tz", "Europe/Berlin"}, "-rules and -tz"},
		{"-anchor-day with -rules", []string{"-rules", "../../rules.yaml", "-anchor-day", "3"}, "-rules and -anchor-day"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			s, code := Load("ex", tt.args, &stderr)
			assert.Nil(t, s)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr.String(), tt.want)
		})
	}
}

func TestLoadHelpDocumentsCalendar(t *testing.T) {
	var stderr bytes.Buffer
	_, code := Load("ex", []string{"-h"}, &stderr)
	assert.Equal(t, 0, code)
	for _, want := range []string{"-tz ZONE", "-anchor-day D", "N/month, N/week or\n", "-tz and -anchor-day do not go with -rules"} {
		assert.Contains(t, stderr.String(), want)
	}
}
