package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
)

const calendarRules = `schema: 1
version: 1
policies:
  - name: monthly
    match: {prefixes: [/api]}
    key: {header: X-API-Key}
    algorithm: fixed-window
    limits: [10000/month]
    time_zone: America/New_York
    anchor_day: 31
`

// key show reports a calendar quota's remaining count until the calendar
// boundary, and the boundary in the quota's zone (an anchor on the 31st
// falls on a shorter month's last day).
func TestKeyShowCalendar(t *testing.T) {
	t.Parallel()
	tg := targets["single"](t)
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte(calendarRules), 0o600))
	require.Equal(t, exitOK, tg.run(t, "rules", "push", path).code)
	inst := instance(t, tg)
	for range 3 {
		require.True(t, apiRequest(t, inst, "k1"))
	}
	before := time.Now()
	r := tg.run(t, "key", "show", "monthly", "k1")
	require.Equal(t, exitOK, r.code, r.stderr)
	line := strings.TrimSuffix(r.stdout, "\n")
	m := regexp.MustCompile(`^monthly: 10000/month in America/New_York anchor 31: remaining 9997 until the boundary at (\S+) \(in (\S+)\)$`).FindStringSubmatch(line)
	require.NotNil(t, m, line)
	_, end, err := core.Monthly(1).In("America/New_York").AnchoredOn(31).WindowAt(before)
	require.NoError(t, err)
	assert.Equal(t, end.Format(time.RFC3339), m[1], "the boundary in New York's time")
	left, err := time.ParseDuration(m[2])
	require.NoError(t, err)
	assert.InDelta(t, end.Sub(before).Seconds(), left.Seconds(), 5)
}
