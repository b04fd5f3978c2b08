package core_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/store/memory"
)

// deadlineStore is an InFlightStore whose leases have deadlines on the
// caller's clock, as a shared store's do: a map of lease deadlines per key.
type deadlineStore struct {
	core.Store
	mu     sync.Mutex
	leases map[string]map[string]time.Time
	next   int
	fail   error // what Renew returns, when set
	renews int   // Renew calls
}

func (s *deadlineStore) drop(key string, now time.Time) {
	for id, dl := range s.leases[key] {
		if !dl.After(now) {
			delete(s.leases[key], id)
		}
	}
}

func (s *deadlineStore) Acquire(_ context.Context, req core.LeaseRequest) (core.LeaseDecision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop(req.Key, req.Now)
	held := int64(len(s.leases[req.Key]))
	if held >= req.InFlight.Slots {
		return core.Refused(req.InFlight, held, 0), nil
	}
	if s.leases[req.Key] == nil {
		s.leases[req.Key] = map[string]time.Time{}
	}
	s.next++
	l := core.Lease{Key: req.Key, ID: strconv.Itoa(s.next), Deadline: req.Now.Add(req.InFlight.Lease), Duration: req.InFlight.Lease}
	s.leases[req.Key][l.ID] = l.Deadline
	return core.LeaseDecision{Allowed: true, Lease: l, InFlight: req.InFlight, Held: held + 1}, nil
}

func (s *deadlineStore) Renew(_ context.Context, now time.Time, leases []core.Lease, expired []bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.renews++
	if s.fail != nil {
		return s.fail
	}
	for i := range leases {
		s.drop(leases[i].Key, now)
		_, ok := s.leases[leases[i].Key][leases[i].ID]
		expired[i] = !ok
		if ok {
			leases[i].Deadline = now.Add(leases[i].Duration)
			s.leases[leases[i].Key][leases[i].ID] = leases[i].Deadline
		}
	}
	return nil
}

func (s *deadlineStore) Release(_ context.Context, l core.Lease) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.leases[l.Key], l.ID)
	return nil
}

func (s *deadlineStore) renewCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.renews
}

func (s *deadlineStore) held(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.leases[key])
}

func newDeadlineLimiter(t *testing.T, clk core.Clock) (*core.Limiter, *deadlineStore) {
	t.Helper()
	mem, err := memory.New()
	must.NoError(t, err)
	t.Cleanup(func() { _ = mem.Close() })
	st := &deadlineStore{Store: mem, leases: map[string]map[string]time.Time{}}
	lim, err := core.NewLimiter(st, core.GCRA, core.PerSecond(10), core.WithClock(clk),
		core.WithInFlight(core.InFlight{Slots: 2, Lease: 30 * time.Second}))
	must.NoError(t, err)
	return lim, st
}

// Renewal moves the deadlines of held slots; a slot renewed too late is
// gone, its release gives back nothing, and nothing is counted twice.
func TestRenewAndExpire(t *testing.T) {
	ctx := context.Background()
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, st := newDeadlineLimiter(t, clk)
	a, d, err := lim.Acquire(ctx, "k")
	must.NoError(t, err)
	must.True(t, d.Allowed)
	b, _, err := lim.Acquire(ctx, "k")
	must.NoError(t, err)

	clk.Advance(20 * time.Second)
	renewed, expired, err := lim.RenewSlots(ctx)
	must.NoError(t, err)
	expect.Equal(t, 2, renewed)
	expect.Zero(t, expired)

	clk.Advance(25 * time.Second) // 45s after acquiring, 25s after renewing: both still held
	_, d, err = lim.Acquire(ctx, "k")
	must.NoError(t, err)
	expect.False(t, d.Allowed, "renewed leases still hold their slots")

	must.NoError(t, b.Release(ctx))
	clk.Advance(10 * time.Second) // a's deadline (50s) passed unrenewed: its slot is back
	c, d, err := lim.Acquire(ctx, "k")
	must.NoError(t, err)
	must.True(t, d.Allowed)
	expect.Equal(t, int64(1), d.Held, "a's expired slot was dropped")

	renewed, expired, err = lim.RenewSlots(ctx)
	must.NoError(t, err)
	expect.Equal(t, 1, renewed, "c")
	expect.Equal(t, 1, expired, "a")
	expect.Equal(t, int64(1), lim.SlotsExpired(), "a's slot was lost under its running request")
	must.ErrorIs(t, a.Release(ctx), core.ErrLeaseExpired)
	expect.Equal(t, 1, st.held("k"), "a's late release freed nothing of c's")
	expect.ErrorIs(t, a.Release(ctx), core.ErrLeaseReleased)
	must.NoError(t, c.Release(ctx))
	expect.Zero(t, st.held("k"))
	expect.Zero(t, lim.SlotsHeld())
}

// A failed renewal keeps a lease whose deadline has not passed, and gives up
// one whose deadline has.
func TestRenewFailure(t *testing.T) {
	ctx := context.Background()
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, st := newDeadlineLimiter(t, clk)
	a, _, err := lim.Acquire(ctx, "k")
	must.NoError(t, err)
	st.fail = errors.New("redis down")
	clk.Advance(10 * time.Second)
	renewed, expired, err := lim.RenewSlots(ctx)
	expect.Error(t, err)
	expect.Zero(t, renewed+expired)
	clk.Advance(30 * time.Second)
	_, expired, err = lim.RenewSlots(ctx)
	expect.Error(t, err)
	expect.Equal(t, 1, expired)
	expect.ErrorIs(t, a.Release(ctx), core.ErrLeaseExpired)
}
