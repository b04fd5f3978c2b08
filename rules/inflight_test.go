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

func TestParseConcurrency(t *testing.T) {
	doc, err := Parse([]byte(one("{name: a, limits: [100/m], concurrency: 5}")), "t")
	require.NoError(t, err)
	assert.Equal(t, core.Concurrent(5), doc.Policies[0].Concurrency)
	for _, src := range []string{
		"{name: a, limits: [100/m], concurrency: 5, lease: 10s}",
		"{name: a, limits: [100/m], lease: 10s, concurrency: 5}",
	} {
		doc, err = Parse([]byte(one(src)), "t")
		require.NoError(t, err)
		assert.Equal(t, core.InFlight{Slots: 5, Lease: 10 * time.Second}, doc.Policies[0].Concurrency, src)
	}
	queued, err := Parse([]byte(one("{name: a, limits: [100/m], concurrency: 5, concurrency_queue: 10, concurrency_wait: 2s}")), "t")
	require.NoError(t, err)
	assert.Equal(t, 10, queued.Policies[0].ConcurrencyQueue)
	assert.Equal(t, 2*time.Second, queued.Policies[0].ConcurrencyWait)
	assert.NotEqual(t, queued.Digest(), doc.Digest())
	plain, err := Parse([]byte(one("{name: a, limits: [100/m]}")), "t")
	require.NoError(t, err)
	assert.True(t, plain.Policies[0].Concurrency.IsZero())
	assert.NotEqual(t, plain.Digest(), doc.Digest(), "the digest covers the in-flight limit")
}

func TestParseProblemsOfConcurrency(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		wants []want
	}{
		{"no slots", one("{name: a, limits: [1/s], concurrency: 0}"),
			[]want{{"4:43", "policies[0].concurrency", "concurrency 0: ratewarden: invalid limit: in-flight limit of 0 slots: it must be at least 1"}}},
		{"100,000 slots at once", one("{name: a, limits: [1/s], concurrency: 100000}"),
			[]want{{"4:43", "policies[0].concurrency", "above the maximum of 10000"}}},
		{"a string for slots", one("{name: a, limits: [1/s], concurrency: many}"),
			[]want{{"4:43", "policies[0].concurrency", "want a whole number, got a string"}}},
		{"a lease of 0", one("{name: a, limits: [1/s], concurrency: 2, lease: 0s}"),
			[]want{{"4:53", "policies[0].lease", "in-flight lease of 0s: it must be positive"}}},
		{"a lease that is no duration", one("{name: a, limits: [1/s], concurrency: 2, lease: soon}"),
			[]want{{"4:53", "policies[0].lease", `lease "soon" is not a duration such as 30s or 2m`}}},
		{"a lease too long", one("{name: a, limits: [1/s], concurrency: 2, lease: 2h}"),
			[]want{{"4:53", "policies[0].lease", "outside [10ms, 1h0m0s]"}}},
		{"a lease without concurrency", one("{name: a, limits: [1/s], lease: 10s}"),
			[]want{{"4:37", "policies[0].lease", "lease applies to an in-flight limit: write concurrency beside it"}}},
		{"a queue without concurrency", one("{name: a, limits: [1/s], concurrency_queue: 5}"),
			[]want{{"4:49", "policies[0].concurrency_queue", "concurrency_queue applies to an in-flight limit: write concurrency beside it"}}},
		{"a queue of 0", one("{name: a, limits: [1/s], concurrency: 2, concurrency_queue: 0}"),
			[]want{{"4:65", "policies[0].concurrency_queue", "concurrency_queue 0: from 1 to 100000 requests may wait for a slot"}}},
		{"a wait without a queue", one("{name: a, limits: [1/s], concurrency: 2, concurrency_wait: 2s}"),
			[]want{{"4:64", "policies[0].concurrency_wait", "concurrency_wait applies to a queue: write concurrency_queue beside it"}}},
		{"a wait too long", one("{name: a, limits: [1/s], concurrency: 2, concurrency_queue: 5, concurrency_wait: 2m}"),
			[]want{{"4:86", "policies[0].concurrency_wait", `concurrency_wait "2m": want a duration from 1ms to 1m0s, such as 2s`}}},
		{"concurrency on an unlimited policy", one("{name: a, unlimited: true, concurrency: 2}"),
			[]want{{"4:45", "policies[0].concurrency", "an unlimited policy has no in-flight limit"}}},
	}
	runProblems(t, tests)
}

// A Document built in Go is validated too.
func TestValidateConcurrency(t *testing.T) {
	doc := &Document{Schema: 1, Version: 1, Policies: []Policy{{Name: "a", Algorithm: core.GCRA, Limits: []core.Limit{core.PerMinute(10)}, Concurrency: core.InFlight{Slots: 3}}}}
	err := doc.Validate()
	require.ErrorIs(t, err, ErrInvalidRules)
	assert.Contains(t, err.Error(), "policies[0].concurrency: ratewarden: invalid limit: in-flight lease of 0s")
	doc.Policies[0].Concurrency = core.Concurrent(3)
	require.NoError(t, doc.Validate())
}

// A rule set enforces a policy's concurrency: a request beyond it, while
// others of its key run, gets 429; their release makes room.
func TestSetConcurrency(t *testing.T) {
	st, err := memory.New()
	require.NoError(t, err)
	defer st.Close()
	doc, err := Parse([]byte(one("{name: api, limits: [100/m], concurrency: 1}")), "t")
	require.NoError(t, err)
	set, err := New(st, doc)
	require.NoError(t, err)
	ctx := context.Background()
	pass, ok := set.Handle(ctx, fakereq.New("192.0.2.1:1"), httptest.NewRecorder())
	require.True(t, ok)
	w := httptest.NewRecorder()
	_, ok = set.Handle(ctx, fakereq.New("192.0.2.1:1"), w)
	require.False(t, ok)
	assert.Equal(t, 429, w.Code)
	assert.Equal(t, `"api";n=1`, w.Header().Get("X-Concurrency-Limit"))
	held, f, err := set.PeekSlots(ctx, "api", "192.0.2.1")
	require.NoError(t, err)
	assert.Equal(t, core.Concurrent(1), f)
	assert.Equal(t, int64(1), held)
	_, _, err = set.PeekSlots(ctx, "nope", "k")
	assert.ErrorIs(t, err, ErrUnknownPolicy)
	ps := set.Policies()
	require.Len(t, ps, 1)
	assert.Equal(t, int64(1), ps[0].SlotsHeld())
	pass.Release()
	assert.Zero(t, ps[0].SlotsHeld())
	pass, ok = set.Handle(ctx, fakereq.New("192.0.2.1:1"), httptest.NewRecorder())
	require.True(t, ok)
	pass.Release()
}

// A policy's concurrency_queue makes a refused request wait for a slot.
func TestSetConcurrencyQueue(t *testing.T) {
	st, err := memory.New()
	require.NoError(t, err)
	defer st.Close()
	doc, err := Parse([]byte(one("{name: api, limits: [100/m], concurrency: 1, concurrency_queue: 1, concurrency_wait: 1m}")), "t")
	require.NoError(t, err)
	set, err := New(st, doc)
	require.NoError(t, err)
	ctx := context.Background()
	first, ok := set.Handle(ctx, fakereq.New("192.0.2.1:1"), httptest.NewRecorder())
	require.True(t, ok)
	done := make(chan bool, 1)
	go func() {
		pass, ok := set.Handle(ctx, fakereq.New("192.0.2.1:1"), httptest.NewRecorder())
		pass.Release()
		done <- ok
	}()
	for {
		held, _, err := set.PeekSlots(ctx, "api", "192.0.2.1")
		require.NoError(t, err)
		if held == 1 && len(done) == 0 {
			break
		}
	}
	first.Release()
	select {
	case ok := <-done:
		assert.True(t, ok, "the queued request took the released slot")
	case <-time.After(10 * time.Second):
		t.Fatal("the queued request never got a slot")
	}
}
