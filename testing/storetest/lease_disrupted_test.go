package storetest_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/testing/storetest"
)

// TestReferenceLeaseDisrupted runs RunTokenLeaseDisrupted on the Reference,
// which the ten instances share, with a disruption that leaves it alone and
// checks what it is told: once per algorithm, the key the run spends, its
// quota under way.
func TestReferenceLeaseDisrupted(t *testing.T) {
	ref := storetest.NewReference()
	var told []core.TakeRequest
	storetest.RunTokenLeaseDisrupted(t, func(*testing.T) core.Store { return ref }, func(t *testing.T, req core.TakeRequest) {
		told = append(told, req)
		peek := req
		peek.Cost = 0
		d, err := ref.Take(context.Background(), peek)
		must.NoError(t, err)
		expect.Less(t, d.Remaining, req.Limits[0].Rate, "the run spent the key before the disruption")
	})
	must.Len(t, told, 2)
	for i, alg := range []core.Algorithm{core.FixedWindow, core.GCRA} {
		expect.Equal(t, alg, told[i].Algorithm)
		expect.Equal(t, t.Name()+"/"+[]string{"FixedWindow", "GCRA"}[i], told[i].Namespace)
		expect.Equal(t, "hot", told[i].Key)
	}
}

// downStore is a store that fails every call while down is set, as a
// Redis whose master is gone does, and counts the calls it failed.
type downStore struct {
	*storetest.Reference
	down   atomic.Bool
	failed atomic.Int64
}

var errDown = errors.New("store down")

func (s *downStore) Take(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	if s.down.Load() {
		s.failed.Add(1)
		return core.Decision{}, errDown
	}
	return s.Reference.Take(ctx, req)
}

func (s *downStore) LeaseTokens(ctx context.Context, req core.TakeRequest, want int64, ttl time.Duration) (core.TokenGrant, error) {
	if s.down.Load() {
		s.failed.Add(1)
		return core.TokenGrant{}, errDown
	}
	return s.Reference.LeaseTokens(ctx, req, want, ttl)
}

// TestReferenceLeaseOutage runs RunTokenLeaseOutage on the Reference behind
// a store that fails every call until the outage has failed 200 of them.
func TestReferenceLeaseOutage(t *testing.T) {
	st := &downStore{Reference: storetest.NewReference()}
	storetest.RunTokenLeaseOutage(t, func(*testing.T) core.Store { return st }, func(t *testing.T, _ core.TakeRequest) {
		st.down.Store(true)
		defer st.down.Store(false)
		must.Eventually(t, func() bool { return st.failed.Load() >= 200 }, 10*time.Second, time.Millisecond)
	})
	expect.GreaterOrEqual(t, st.failed.Load(), int64(200))
}
