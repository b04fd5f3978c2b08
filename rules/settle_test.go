package rules

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

func TestSettleField(t *testing.T) {
	doc, err := Parse([]byte(one("{name: llm, algorithm: gcra, limits: [1000/h], settle: {header: x-cost, reserve: 5, debt: 200}}")), "test")
	require.NoError(t, err)
	assert.Equal(t, &Settle{Header: "X-Cost", Reserve: 5, Debt: 200}, doc.Policies[0].Settle)
	doc, err = Parse([]byte(one("{name: llm, limits: [10/s], settle: {header: X-Tokens}}")), "test")
	require.NoError(t, err)
	assert.Equal(t, &Settle{Header: "X-Tokens", Reserve: 1}, doc.Policies[0].Settle, "reserve 1 and no debt by default")
	doc, err = Parse([]byte(one("{name: plain, limits: [10/s]}")), "test")
	require.NoError(t, err)
	assert.Nil(t, doc.Policies[0].Settle)
}

func TestSettleProblems(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		wants []want
	}{
		{"no header", one("{name: a, limits: [10/s], settle: {reserve: 1}}"),
			[]want{{"4:39", "policies[0].settle", `missing field "header"`}}},
		{"a bad header", one("{name: a, limits: [10/s], settle: {header: X Cost}}"),
			[]want{{"4:48", "policies[0].settle.header", `settle header "X Cost" is not a header name`}}},
		{"a negative reserve", one("{name: a, limits: [10/s], settle: {header: X-Cost, reserve: -1}}"),
			[]want{{"4:65", "policies[0].settle.reserve", "reserve -1: what a request reserves is 0 or more"}}},
		{"a negative debt", one("{name: a, limits: [10/s], settle: {header: X-Cost, debt: -3}}"),
			[]want{{"4:62", "policies[0].settle.debt", "debt -3: what a key may owe is 0 or more"}}},
		{"a debt above the capacity", one("{name: a, limits: [10/s], settle: {header: X-Cost, debt: 11}}"),
			[]want{{"4:62", "policies[0].settle.debt", `debt 11 exceeds "10/s"'s capacity of 10`}}},
		{"a debt above an override's capacity", one("{name: a, limits: [10/s], overrides: [{key: k, limits: [2/s]}], settle: {header: X-Cost, debt: 3}}"),
			[]want{{"4:100", "policies[0].settle.debt", `debt 3 exceeds "2/s"'s capacity of 2`}}},
		{"a reserve above the capacity", one("{name: a, limits: [10/s], settle: {header: X-Cost, reserve: 11}}"),
			[]want{{"4:65", "policies[0].settle.reserve", `reserve 11 exceeds "10/s"'s capacity of 10: every request would be denied`}}},
		{"with a cost", one("{name: a, limits: [10/s], cost: 2, settle: {header: X-Cost}}"),
			[]want{{"4:37", "policies[0].cost", "a settling policy reserves settle's reserve (default 1): remove cost"}}},
		{"with count: failures", one("{name: a, limits: [10/s], count: failures, settle: {header: X-Cost}}"),
			[]want{{"4:56", "policies[0].settle", "settle and count: failures both settle"}}},
		{"under the sliding log", one("{name: a, algorithm: sliding-log, limits: [10/s], settle: {header: X-Cost}}"),
			[]want{{"4:63", "policies[0].settle", "sliding-log cannot charge a cost after the response"}}},
		{"an unknown field", one("{name: a, limits: [10/s], settle: {header: X-Cost, owe: 3}}"),
			[]want{{"4:56", "policies[0].settle", `unknown field "owe" in a settle`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc), "test")
			requireProblems(t, err, tt.wants...)
		})
	}
}

// The digest tells settles apart.
func TestSettleDigest(t *testing.T) {
	a, err := Parse([]byte(one("{name: a, limits: [10/s], settle: {header: X-Cost}}")), "a")
	require.NoError(t, err)
	b, err := Parse([]byte(one("{name: a, limits: [10/s], settle: {header: X-Cost, debt: 2}}")), "b")
	require.NoError(t, err)
	c, err := Parse([]byte(one("{name: a, limits: [10/s]}")), "c")
	require.NoError(t, err)
	assert.NotEqual(t, a.Digest(), b.Digest())
	assert.NotEqual(t, a.Digest(), c.Digest())
}

// A Set's settling policy reserves its reserve and settles at the response
// header's cost, into the debt the document allows.
func TestSettleSet(t *testing.T) {
	doc, err := Parse([]byte(one("{name: llm, algorithm: gcra, limits: [100/h], settle: {header: X-Cost, reserve: 2, debt: 10}}")), "test")
	require.NoError(t, err)
	st, err := memory.New(memory.WithSweepInterval(0))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	set, err := New(st, doc, WithClock(core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))))
	require.NoError(t, err)
	serve := func(cost string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		w := httptest.NewRecorder()
		pass, ok := set.Handle(context.Background(), stdhttp.View(r), w)
		require.True(t, ok)
		assert.Equal(t, "98", w.Header().Get("X-RateLimit-Remaining")[:2], "a reservation of 2")
		w.Header().Set("X-Cost", cost)
		pass.Settle(http.StatusOK, w)
		pass.Finish(http.StatusOK)
		return w
	}
	w := serve("30")
	assert.Equal(t, "70", w.Header().Get("X-RateLimit-Remaining"))
	res, err := set.Peek(context.Background(), "llm", "192.0.2.1")
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.Equal(t, int64(70), res[0].Decision.Remaining)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	w = httptest.NewRecorder()
	pass, ok := set.Handle(context.Background(), stdhttp.View(r), w)
	require.True(t, ok)
	w.Header().Set("X-Cost", "1000")
	pass.Settle(http.StatusOK, w)
	pass.Finish(http.StatusOK)
	res, err = set.Peek(context.Background(), "llm", "192.0.2.1")
	require.NoError(t, err)
	assert.Equal(t, int64(10), res[0].Decision.Debt, "charged into the document's debt bound")
}
