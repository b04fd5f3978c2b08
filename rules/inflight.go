package rules

import (
	"context"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
)

// A policy's in-flight fields: concurrency, at most N requests of a key
// running at once (beside the policy's limits, on every instance sharing the
// store), and lease, how long a slot stays held without renewal (the
// longest a crashed instance keeps its slots; core.DefaultLease, 30s, when
// absent).

// decodeConcurrency reads a concurrency: 1 to core.MaxInFlightSlots.
func decodeConcurrency(d *decoder, v *yaml.Node, at *path, p *Policy) {
	n, ok := d.integer(v, at)
	if !ok {
		return
	}
	if err := (core.InFlight{Slots: n, Lease: core.DefaultLease}).Validate(); err != nil {
		d.fail(deref(v), at, err, "concurrency %d: %v", n, err)
		return
	}
	p.Concurrency.Slots = n
	if p.Concurrency.Lease == 0 {
		p.Concurrency.Lease = core.DefaultLease
	}
}

// decodeLease reads a lease: a Go duration from core.MinLease to
// core.MaxLease, such as 30s.
func decodeLease(d *decoder, v *yaml.Node, at *path, p *Policy) {
	s, ok := d.str(v, at)
	if !ok {
		return
	}
	lease, err := time.ParseDuration(s)
	if err != nil {
		d.fail(deref(v), at, nil, "lease %q is not a duration such as 30s or 2m", s)
		return
	}
	if err := (core.InFlight{Slots: 1, Lease: lease}).Validate(); err != nil {
		d.fail(deref(v), at, err, "%v", err)
		return
	}
	p.Concurrency.Lease = lease
}

// decodeConcurrencyQueue reads a concurrency_queue: how many requests of
// the policy may wait for a slot on an instance, 1 to
// httplimit.MaxInFlightWaiting.
func decodeConcurrencyQueue(d *decoder, v *yaml.Node, at *path, p *Policy) {
	n, ok := d.integer(v, at)
	if !ok {
		return
	}
	if n < 1 || n > httplimit.MaxInFlightWaiting {
		d.fail(deref(v), at, nil, "concurrency_queue %d: from 1 to %d requests may wait for a slot", n, httplimit.MaxInFlightWaiting)
		return
	}
	p.ConcurrencyQueue = int(n)
}

// decodeConcurrencyWait reads a concurrency_wait: how long a queued request
// waits for a slot, a Go duration from 1ms to httplimit.MaxInFlightWait.
func decodeConcurrencyWait(d *decoder, v *yaml.Node, at *path, p *Policy) {
	s, ok := d.str(v, at)
	if !ok {
		return
	}
	wait, err := time.ParseDuration(s)
	if err != nil || wait < time.Millisecond || wait > httplimit.MaxInFlightWait {
		d.fail(deref(v), at, nil, "concurrency_wait %q: want a duration from 1ms to %s, such as 2s", s, httplimit.MaxInFlightWait)
		return
	}
	p.ConcurrencyWait = wait
}

// DefaultConcurrencyWait is how long a request of a policy with a
// concurrency_queue waits for a slot when concurrency_wait is absent.
const DefaultConcurrencyWait = time.Second

// policyInFlight reports, at the field, a lease on a policy with no
// concurrency (the validator reports a concurrency on an unlimited policy).
// It returns the names of the fields with problems.
func (d *decoder) policyInFlight(present map[string]*yaml.Node, at *path, p *Policy) []string {
	if v := present["lease"]; v != nil && present["concurrency"] == nil {
		d.fail(deref(v), at.dot("lease"), nil, "lease applies to an in-flight limit: write concurrency beside it")
		p.Concurrency = core.InFlight{}
		return []string{"lease"}
	}
	if v := present["concurrency_queue"]; v != nil && present["concurrency"] == nil {
		d.fail(deref(v), at.dot("concurrency_queue"), nil, "concurrency_queue applies to an in-flight limit: write concurrency beside it")
		p.ConcurrencyQueue = 0
		return []string{"concurrency_queue"}
	}
	if v := present["concurrency_wait"]; v != nil && present["concurrency_queue"] == nil {
		d.fail(deref(v), at.dot("concurrency_wait"), nil, "concurrency_wait applies to a queue: write concurrency_queue beside it")
		p.ConcurrencyWait = 0
		return []string{"concurrency_wait"}
	}
	return nil
}

// inflight checks a policy's in-flight limit, for a Document built in Go.
func (v *validator) inflight(p *Policy, i int, at *path) {
	if p.Concurrency.IsZero() || v.skip(i, "concurrency") || v.skip(i, "lease") {
		return
	}
	if p.Unlimited {
		v.report(at.dot("concurrency"), p.Pos, nil, "an unlimited policy has no in-flight limit: remove concurrency or unlimited")
		return
	}
	if err := p.Concurrency.Validate(); err != nil {
		v.report(at.dot("concurrency"), p.Pos, err, "%v", err)
	}
	if q := p.ConcurrencyQueue; q < 0 || q > httplimit.MaxInFlightWaiting {
		v.report(at.dot("concurrency_queue"), p.Pos, nil, "concurrency_queue %d: from 1 to %d requests may wait for a slot", q, httplimit.MaxInFlightWaiting)
	}
	if w := p.ConcurrencyWait; w != 0 && (w < time.Millisecond || w > httplimit.MaxInFlightWait || p.ConcurrencyQueue == 0) {
		v.report(at.dot("concurrency_wait"), p.Pos, nil, "concurrency_wait %s: from 1ms to %s, with a concurrency_queue", w, httplimit.MaxInFlightWait)
	}
}

// inflightPolicyOptions returns the HTTP option of p's concurrency_queue:
// none without one.
func inflightPolicyOptions(p *Policy) []httplimit.Option {
	if p.ConcurrencyQueue == 0 || p.Concurrency.IsZero() {
		return nil
	}
	wait := p.ConcurrencyWait
	if wait == 0 {
		wait = DefaultConcurrencyWait
	}
	return []httplimit.Option{httplimit.WithInFlightWait(p.ConcurrencyQueue, wait)}
}

// inflightOption returns the limiter option of p's in-flight limit, nil
// when it has none.
func inflightOption(p *Policy) core.Option {
	if p.Concurrency.IsZero() {
		return nil
	}
	return core.WithInFlight(p.Concurrency)
}

// Policies returns the limiting policies of the rules in force, in the
// document's order (an unlimited policy has none): for the metrics modules'
// gauge of in-flight slots (RegisterInFlight), which calls it at each
// collection and so follows every reload.
func (s *Set) Policies() []*httplimit.Policy {
	c := s.cur.Load()
	out := make([]*httplimit.Policy, 0, len(c.limiting))
	for _, p := range c.limiting {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

// PeekSlots returns how many in-flight slots key holds under the policy
// named policy, on every instance sharing the store, and the policy's
// in-flight limit, changing nothing (the operator's tool shows them); 0 and
// the zero InFlight for a policy without one. It returns an error wrapping
// ErrUnknownPolicy for an unknown or unlimited policy, and the store's.
func (s *Set) PeekSlots(ctx context.Context, policy, key string) (int64, core.InFlight, error) {
	e, err := s.entry(policy)
	if err != nil {
		return 0, core.InFlight{}, err
	}
	lim := e.policy.Limiter()
	f := lim.InFlight()
	if f.IsZero() {
		return 0, f, nil
	}
	held, err := lim.PeekSlots(ctx, key)
	return held, f, err
}
