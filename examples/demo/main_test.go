package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDemo(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		admitted string
		body     string
	}{
		{"gcra, all at once", []string{"-n", "8", "-every", "0", "-limit", "5/m"}, "admitted 5 of 8 requests sent at once", "Too Many Requests"},
		{"fixed window, json", []string{"-n", "4", "-every", "0", "-limit", "3/m", "-algorithm", "fixed-window", "-json"}, "admitted 3 of 4", `"violated-policies":["default"]`},
		{"leaky bucket holds, then refuses", []string{"-n", "9", "-every", "0", "-limit", "600/m", "-burst", "3", "-algorithm", "leaky-bucket"}, "admitted 3 of 9", "Too Many Requests"},
		{"sliding log, paced", []string{"-n", "3", "-every", "1ms", "-limit", "2/m", "-algorithm", "sliding-log"}, "admitted 2 of 3 requests offered over 3ms", "Too Many Requests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(append(tt.args, "-reload=false"), &out, &errOut)
			require.Equal(t, 0, code, errOut.String())
			s := out.String()
			assert.Contains(t, s, tt.admitted)
			assert.Contains(t, s, "HTTP/1.1 429 Too Many Requests\n")
			assert.Contains(t, s, "Retry-After: ")
			assert.Contains(t, s, "Ratelimit-Policy: \"default\";q=")
			assert.Contains(t, s, tt.body)
			assert.NotContains(t, s, "Date:")
		})
	}
}

func TestDemoNoDenial(t *testing.T) {
	var out bytes.Buffer
	require.Equal(t, 0, run([]string{"-n", "2", "-every", "0", "-limit", "10/m", "-reload=false"}, &out, &bytes.Buffer{}))
	assert.Contains(t, out.String(), "admitted 2 of 2")
	assert.NotContains(t, out.String(), "the first 429")
	assert.Equal(t, 2, strings.Count(out.String(), " 200 "))
}

func TestDemoBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"algorithm", []string{"-algorithm", "bucket"}, "-algorithm"},
		{"limit", []string{"-limit", "5"}, "-limit"},
		{"burst negative", []string{"-burst", "-2"}, "-burst"},
		{"burst on a window", []string{"-algorithm", "sliding-log", "-burst", "9"}, "takes no burst"},
		{"n zero", []string{"-n", "0"}, "-n must be"},
		{"n too many", []string{"-n", "5000"}, "-n must be"},
		{"every negative", []string{"-every", "-1s"}, "-every"},
		{"unknown flag", []string{"-x"}, "-x"},
		{"stray argument", []string{"go"}, "unexpected argument"},
		{"reload with a value", []string{"-reload=often"}, "-reload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errOut bytes.Buffer
			assert.Equal(t, 2, run(tt.args, &bytes.Buffer{}, &errOut))
			assert.Contains(t, errOut.String(), tt.want)
		})
	}
}

// The reload step: a rules file edited while the server runs; the new limit
// takes effect without a restart, and RateLimit-Policy says so before and
// after.
func TestDemoReload(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"-n", "2", "-every", "0", "-limit", "10/m"}, &out, &errOut), errOut.String())
	s := out.String()
	before, after, found := strings.Cut(s, "the file saved as version 2")
	require.True(t, found, s)
	assert.Contains(t, before, "admitted 2 of 2 requests sent at once", "the burst step comes first")
	assert.Contains(t, before, "rules from a file, edited while the server runs (rules.WatchFile)")
	assert.Contains(t, before, "version 1: policy api, limits: [3/m]")
	assert.Contains(t, before, ": 200 200 200 429 429 429 429 429\nadmitted 3 of 8; RateLimit-Policy: \"api\";q=3;w=60\n")
	assert.Contains(t, after, "the reload hook heard: rules.yaml version 2 loaded")
	assert.Contains(t, after, "the 3 requests this client spent under 3/m stay spent")
	assert.Contains(t, after, ": 200 200 200 429 429 429 429 429\nadmitted 3 of 8; RateLimit-Policy: \"api\";q=6;w=60\n", "an edit keeps what was used")
	assert.Empty(t, errOut.String())
}

// Without -reload, the demo ends after the burst.
func TestDemoWithoutReload(t *testing.T) {
	var out bytes.Buffer
	require.Equal(t, 0, run([]string{"-n", "2", "-every", "0", "-reload=false"}, &out, &bytes.Buffer{}))
	assert.NotContains(t, out.String(), "rules from a file")
}
