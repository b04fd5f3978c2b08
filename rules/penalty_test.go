package rules

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/store/memory"
)

func TestParseBlockFor(t *testing.T) {
	doc, err := Parse([]byte(one("{name: a, limits: [5/m], block_for: 15m}")), "t")
	require.NoError(t, err)
	assert.Equal(t, 15*time.Minute, doc.Policies[0].BlockFor)
	plain, err := Parse([]byte(one("{name: a, limits: [5/m]}")), "t")
	require.NoError(t, err)
	assert.Zero(t, plain.Policies[0].BlockFor)
	assert.NotEqual(t, plain.Digest(), doc.Digest(), "the digest covers the penalty box")
	other, err := Parse([]byte(one("{name: a, limits: [5/m], block_for: 16m}")), "t")
	require.NoError(t, err)
	assert.NotEqual(t, other.Digest(), doc.Digest())
}

func TestParseProblemsOfBlockFor(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		wants []want
	}{
		{"zero", one("{name: a, limits: [1/s], block_for: 0s}"),
			[]want{{"4:41", "policies[0].block_for", "block_for 0s: a penalty lasts a positive duration"}}},
		{"negative", one("{name: a, limits: [1/s], block_for: -1m}"),
			[]want{{"4:41", "policies[0].block_for", "block_for -1m: a penalty lasts a positive duration"}}},
		{"no duration", one("{name: a, limits: [1/s], block_for: fortnight}"),
			[]want{{"4:41", "policies[0].block_for", `block_for "fortnight" is not a duration such as 30s, 15m or 1h`}}},
		{"a number", one("{name: a, limits: [1/s], block_for: 900}"),
			[]want{{"4:41", "policies[0].block_for", `block_for "900" is not a duration`}}},
		{"absurd", one("{name: a, limits: [1/s], block_for: 100000h}"),
			[]want{{"4:41", "policies[0].block_for", "longer than the longest period a limit may have"}}},
		{"below a microsecond", one("{name: a, limits: [1/s], block_for: 1500ns}"),
			[]want{{"4:41", "policies[0].block_for", "not a whole number of microseconds"}}},
		{"on an unlimited policy", one("{name: a, unlimited: true, block_for: 1m}"),
			[]want{{"4:43", "policies[0].block_for", "an unlimited policy denies nothing, so it blocks no one"}}},
	}
	runProblems(t, tests)
}

// A Document built in Go is validated too.
func TestValidateBlockFor(t *testing.T) {
	doc := &Document{Schema: 1, Version: 1, Policies: []Policy{{Name: "a", Algorithm: core.GCRA, Limits: []core.Limit{core.PerMinute(10)}, BlockFor: -time.Minute}}}
	err := doc.Validate()
	require.ErrorIs(t, err, ErrInvalidRules)
	assert.Contains(t, err.Error(), "policies[0].block_for")
	doc.Policies[0].BlockFor = time.Minute
	require.NoError(t, doc.Validate())
}

// A rule set enforces a policy's block_for: the denial starts the block,
// which refuses the key (with the block's end in Retry-After) until it ends,
// whatever the limit says meanwhile; other keys are not blocked.
func TestSetBlockFor(t *testing.T) {
	st, err := memory.New()
	require.NoError(t, err)
	defer st.Close()
	doc, err := Parse([]byte(one("{name: login, limits: [2/m], block_for: 10m}")), "t")
	require.NoError(t, err)
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	set, err := New(st, doc, WithClock(clk))
	require.NoError(t, err)
	ctx := context.Background()
	do := func(peer string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		if pass, ok := set.Handle(ctx, fakereq.New(peer), w); ok {
			pass.Release()
			w.Code = 200
		}
		return w
	}
	for range 2 {
		assert.Equal(t, 200, do("192.0.2.1:1").Code)
	}
	w := do("192.0.2.1:1")
	assert.Equal(t, 429, w.Code)
	assert.Equal(t, "600", w.Header().Get("Retry-After"))
	clk.Advance(5 * time.Minute)
	w = do("192.0.2.1:1")
	assert.Equal(t, 429, w.Code, "blocked, though the limit would admit")
	assert.Equal(t, "300", w.Header().Get("Retry-After"))
	assert.Equal(t, 200, do("192.0.2.2:1").Code)
	clk.Advance(5 * time.Minute)
	assert.Equal(t, 200, do("192.0.2.1:1").Code, "the block has ended")
}
