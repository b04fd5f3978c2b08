package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/ratewarden/ratewarden/core"
)

// Reference is the plain store the suite compares against: a map and a mutex
// around core's TakeRequest.Decide (Algorithm.ApplyAll, and refunds). It is correct by construction, slow, and
// unbounded; use it in tests, never in production.
type Reference struct {
	mu     sync.Mutex
	states map[string][]core.State
}

// NewReference returns an empty Reference store.
func NewReference() *Reference { return &Reference{states: map[string][]core.State{}} }

// Take decides req (or refunds it, for a negative Cost) with core's pure
// algorithms.
func (r *Reference) Take(_ context.Context, req core.TakeRequest) (core.Decision, error) {
	if len(req.Limits) == 0 {
		return core.Decision{}, fmt.Errorf("storetest: no limits: %w", core.ErrInvalidLimit)
	}
	id := identity(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.states[id]
	if !ok {
		st = make([]core.State, len(req.Limits))
	}
	var d core.Decision
	err := req.Decide(&d, st, core.Micros(req.Now))
	if err == nil {
		r.states[id] = st
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

func identity(req core.TakeRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q|%q|%s", req.Namespace, req.Key, req.Algorithm)
	for _, l := range req.Limits {
		fmt.Fprintf(&b, "|%d/%d/%d", l.Rate, l.Period, l.EffectiveBurst())
	}
	return b.String()
}
