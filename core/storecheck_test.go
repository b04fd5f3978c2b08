package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

// checkingStore is a memory store that says, as a core.StoreChecker, it
// cannot decide a penalty box, and records what it was asked.
type checkingStore struct {
	*memory.Store
	asked []core.TakeRequest
}

var errNoBlocks = errors.New("no penalty boxes here")

func (s *checkingStore) CheckRequest(req core.TakeRequest) error {
	s.asked = append(s.asked, req)
	if req.BlockFor != 0 {
		return errNoBlocks
	}
	return nil
}

func newCheckingStore(t *testing.T) *checkingStore {
	st, err := memory.New()
	must.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return &checkingStore{Store: st}
}

func TestNewLimiterAsksTheStoreChecker(t *testing.T) {
	st := newCheckingStore(t)
	_, err := core.NewLimiter(st, core.GCRA, core.PerMinute(10), core.WithBlockFor(time.Minute))
	expect.ErrorIs(t, err, errNoBlocks)
	expect.Len(t, st.asked, 1)
	expect.Equal(t, time.Minute, st.asked[0].BlockFor, "the request carries the limiter's options")
	expect.Equal(t, int64(1), st.asked[0].Cost)

	st.asked = nil
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(10), core.WithDebt(3))
	must.NoError(t, err)
	must.Len(t, st.asked, 2, "a decision, and a settle's charge under a debt bound")
	expect.False(t, st.asked[0].Charge)
	expect.True(t, st.asked[1].Charge)
	expect.Equal(t, int64(3), st.asked[1].MaxDebt)

	st.asked = nil
	_, err = lim.Tier("paid", core.PerMinute(100))
	must.NoError(t, err)
	expect.Len(t, st.asked, 2, "a tier is checked as its limiter is")
	expect.Equal(t, []core.Limit{core.PerMinute(100).Named("paid")}, st.asked[0].Limits)

	d, err := lim.Allow(context.Background(), "k")
	must.NoError(t, err)
	expect.True(t, d.Allowed, "a limiter the store accepted decides")
}
