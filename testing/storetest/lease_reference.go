package storetest

import (
	"context"
	"slices"
	"time"

	"github.com/ratewarden/ratewarden/core"
)

var _ core.TokenLeaser = (*Reference)(nil)

// LeaseTokens grants a token lease (core.TokenLeaser) with core's
// TakeRequest.DecideGrant on the states Take keeps: what RunTokenLease
// compares every store's grants with.
func (r *Reference) LeaseTokens(_ context.Context, req core.TakeRequest, want int64, ttl time.Duration) (core.TokenGrant, error) {
	if err := req.CheckLease(want, ttl); err != nil {
		return core.TokenGrant{}, err
	}
	id := identity(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	now := core.Micros(req.Now)
	st := make([]core.State, len(req.Limits))
	held, ok := r.states[id]
	var until int64
	if ok {
		until = held.until
		copy(st, held.states)
		if !core.SameFigures(held.limits, req.Limits) {
			req.Reexpress(st, held.limits, now)
		}
	}
	g, err := req.DecideGrant(st, want, ttl, now)
	if err == nil {
		r.states[id] = &refState{states: st, limits: slices.Clone(req.Limits), until: until}
	}
	return g, err
}
