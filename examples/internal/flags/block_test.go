package flags

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
)

func TestParseBlockFor(t *testing.T) {
	c, err := Parse("ex", []string{"-limit", "5/m", "-block-for", "15m"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, 15*time.Minute, c.BlockFor)
	assert.Contains(t, c.String(), "a client denied once refused for 15m0s")
	assert.Len(t, c.LimiterOptions(), 1)
	lim, err := core.NewLimiter(core.Store(nil), core.GCRA, c.Limit, c.LimiterOptions()...)
	assert.Error(t, err, "a nil store")
	assert.Nil(t, lim)

	c, err = Parse("ex", []string{"-limit", "5/m", "-block-for", "0s"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Zero(t, c.BlockFor, "0: no penalty box")
	assert.Empty(t, c.LimiterOptions())
}

// Every bad -block-for exits 2 with a message naming the flag.
func TestLoadBadBlockFor(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"negative", []string{"-block-for", "-1m"}, "-block-for -1m0s: a penalty lasts a positive duration"},
		{"not a duration", []string{"-block-for", "fortnight"}, `invalid value "fortnight" for flag -block-for`},
		{"a bare number", []string{"-block-for", "900"}, `invalid value "900" for flag -block-for`},
		{"absurd", []string{"-block-for", "100000h"}, "-block-for 100000h0m0s: ratewarden: invalid option: block duration 100000h0m0s is longer than the maximum"},
		{"below a microsecond", []string{"-block-for", "1500ns"}, "not a whole number of microseconds"},
		{"with -rules", []string{"-rules", "../../rules.yaml", "-block-for", "1m"}, "-block-for does not go with -rules: give a policy block_for"},
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

func TestLoadHelpDocumentsBlockFor(t *testing.T) {
	var stderr bytes.Buffer
	_, code := Load("ex", []string{"-h"}, &stderr)
	assert.Equal(t, 0, code)
	for _, want := range []string{"-block-for DURATION", "a penalty box: a client -limit denies once is refused", "nor -block-for, -concurrency and -lease"} {
		assert.Contains(t, stderr.String(), want)
	}
}
