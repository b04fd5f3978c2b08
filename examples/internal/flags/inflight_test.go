package flags

import (
	"bytes"
	"errors"
	"flag"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
)

func TestParseConcurrency(t *testing.T) {
	c, err := Parse("ex", []string{"-concurrency", "3"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, int64(3), c.Concurrency)
	assert.Contains(t, c.String(), "at most 3 requests of a client running at once")
	require.Len(t, c.LimiterOptions(), 1)
	st, closer, err := c.newStore()
	require.NoError(t, err)
	defer closer.Close()
	lim, err := core.NewLimiter(st, c.Algorithm, c.Limit, c.LimiterOptions()...)
	require.NoError(t, err)
	assert.Equal(t, core.Concurrent(3), lim.InFlight())

	c, err = Parse("ex", []string{"-concurrency", "0"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Zero(t, c.Concurrency, "0 is no limit")
	assert.Empty(t, c.LimiterOptions())
}

func TestParseConcurrencyBad(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-concurrency", "-1"}, "-concurrency -1: ratewarden: invalid limit: in-flight limit of -1 slots: it must be at least 1"},
		{[]string{"-concurrency", "100000"}, "above the maximum of 10000"},
		{[]string{"-concurrency", "two"}, `invalid value "two" for flag -concurrency`},
		{[]string{"-concurrency", "2", "-rules", "../../rules.yaml"}, "-concurrency does not go with -rules"},
	} {
		_, err := Parse("ex", tc.args, &bytes.Buffer{})
		require.ErrorIs(t, err, errUsage, "%v", tc.args)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// -h names the flag and the route.
func TestHelpNamesConcurrency(t *testing.T) {
	var out bytes.Buffer
	_, err := Parse("ex", []string{"-h"}, &out)
	require.True(t, errors.Is(err, flag.ErrHelp))
	assert.Contains(t, out.String(), "-concurrency N")
	assert.Contains(t, out.String(), "GET  /slow?ms=N")
	assert.Contains(t, out.String(), "nor -block-for, -concurrency and -lease")
}

type queryOnly map[string]string

func (q queryOnly) Header(string) string     { return "" }
func (q queryOnly) FormValue(string) string  { return "" }
func (q queryOnly) PathValue(string) string  { return "" }
func (q queryOnly) Query(name string) string { return q[name] }

// Both route lists have /slow; a bad ms is a 400 at once.
func TestSlowRoute(t *testing.T) {
	for _, args := range [][]string{nil, {"-rules", "../../rules.yaml"}} {
		c, err := Parse("ex", args, &bytes.Buffer{})
		require.NoError(t, err)
		var found *Route
		for _, r := range c.Routes() {
			if r.Pattern == SlowPath {
				found = &r
			}
		}
		require.NotNil(t, found, "%v", args)
		assert.Equal(t, http.MethodGet, found.Method)
		for _, bad := range []string{"", "x", "-5", "10001", "+1", " 1"} {
			assert.Equal(t, http.StatusBadRequest, found.Answer(queryOnly{"ms": bad}).Status, "ms=%q", bad)
		}
		assert.Equal(t, Reply{Status: http.StatusOK, Body: "slept 0 ms\n"}, found.Answer(queryOnly{"ms": "0"}))
	}
}
