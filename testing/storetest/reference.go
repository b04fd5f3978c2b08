package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/ratewarden/ratewarden/core"
)

// Reference is the plain store the suite compares against: a map and a mutex
// around core's TakeRequest.Decide (Algorithm.ApplyAll, and refunds), keyed
// as every store keys its states (namespace, key, algorithm, number of
// limits), with core's TakeRequest.Reexpress for states written under
// other figures. It is correct by construction, slow, and unbounded; use it
// in tests, never in production.
type Reference struct {
	mu     sync.Mutex
	states map[string]*refState
}

// refState is one identity's states and the limits they were written under.
type refState struct {
	states []core.State
	limits []core.Limit
	until  int64 // the penalty box's end (core.TakeRequest.DecideBlocking)
}

// NewReference returns an empty Reference store.
func NewReference() *Reference { return &Reference{states: map[string]*refState{}} }

// Take decides req (or refunds it, for a negative Cost) with core's pure
// algorithms.
func (r *Reference) Take(_ context.Context, req core.TakeRequest) (core.Decision, error) {
	if len(req.Limits) == 0 {
		return core.Decision{}, fmt.Errorf("storetest: no limits: %w", core.ErrInvalidLimit)
	}
	id := identity(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	now := core.Micros(req.Now)
	held, ok := r.states[id]
	st := make([]core.State, len(req.Limits))
	var until int64
	if ok {
		until = held.until
		for i, s := range held.states {
			st[i] = s
			st[i].Log = slices.Clone(s.Log)
		}
		if !core.SameFigures(held.limits, req.Limits) {
			req.Reexpress(st, held.limits, now)
		}
	}
	var d core.Decision
	var err error
	if req.BlockFor != 0 {
		err = req.DecideBlocking(&d, st, &until, now)
	} else {
		err = req.Decide(&d, st, now)
	}
	if err == nil {
		r.states[id] = &refState{states: st, limits: slices.Clone(req.Limits), until: until}
	}
	return d, err
}

// Reset forgets req's key.
func (r *Reference) Reset(_ context.Context, req core.TakeRequest) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.states, identity(req))
	return nil
}

// identity is what a store keys a state by: not the limits' figures (see
// core.TakeRequest.Identity).
func identity(req core.TakeRequest) string {
	return fmt.Sprintf("%q|%q|%s|%d", req.Namespace, req.Key, req.Algorithm, len(req.Limits))
}
