package httplimit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// tier is one limit set a policy may apply to a request, with what never
// changes for it: its headers and bodies, built once by precompute. The
// policy's own limiter is the default tier.
type tier struct {
	p       *Policy
	lim     *core.Limiter
	name    string
	timeout time.Duration // store call bound: 0 for a store that decides in process
	timed   bool          // an observer is set and the store is not in process: measure its latency
	breaker breakerLog    // what was logged of the limiter's circuit breaker (a Group's header copy copies it too)

	perLimit   []limitHeaders
	policyVals []string        // RateLimit-Policy
	inflight   *[2][2]*outcome // the in-flight refusals (inflight.go); nil without one
}

// maxScannedTiers is the number of tiers up to which a request's tier is
// found by comparing names one by one, faster than a map for a few short
// names; beyond it the policy builds a map.
const maxScannedTiers = 8

// WithTiers applies limits chosen per request: pick names a tier (a plan, a
// customer class) and the request is limited by the tier whose Name() is that
// name. Build each tier from the policy's limiter with core.Limiter.Tier, so
// that it shares the store and algorithm:
//
//	paid, err := lim.Tier("paid", core.PerSecond(100))
//	p, err := httplimit.New(lim, httplimit.WithTiers(keyfuncs.Header("X-Plan"), paid))
//
// Any keyfuncs.Func picks: a header, a context value put there by
// authentication middleware, a JWT claim. The policy's own limiter is the
// default tier: a request whose pick fails, returns "" or a name no tier has
// (including the default's own name) gets it. Such a request is not reported
// apart: the event's Policy names the default tier, and the unknown name,
// which is request data, goes nowhere. A pick that panics is recovered: the
// request gets the default tier, and the panic is logged (see WithLogger).
//
// Headers and problem bodies name the tier that applied
// (RateLimit-Policy: "paid";q=100;w=1). State is kept per limit figures, so
// a client moving between tiers with different limits never mixes counts
// (see core.Limiter.Tier).
//
// WithTiers returns an error wrapping core.ErrInvalidOption for a nil pick,
// no tier, a nil tier, two tiers with one name, or a tier named like the
// policy's limiter. Given twice, the second replaces the first.
func WithTiers(pick keyfuncs.Func, tiers ...*core.Limiter) Option {
	return func(p *Policy) error {
		if pick == nil {
			return nilOption("tier pick function")
		}
		if len(tiers) == 0 {
			return fmt.Errorf("%w: WithTiers without a tier", core.ErrInvalidOption)
		}
		seen := map[string]bool{}
		for i, t := range tiers {
			if t == nil {
				return fmt.Errorf("%w: tier %d is nil", core.ErrInvalidOption, i)
			}
			if seen[t.Name()] {
				return fmt.Errorf("%w: two tiers named %q", core.ErrInvalidOption, truncate(t.Name()))
			}
			seen[t.Name()] = true
		}
		p.pick, p.tierLims = pick, tiers
		return nil
	}
}

// buildTiers makes the tiers of p's limiters once every option is applied,
// when the default's name is known for sure.
func (p *Policy) buildTiers() error {
	p.def = tier{p: p, lim: p.lim, name: p.lim.Name()}
	if err := p.def.precompute(p.timeout); err != nil {
		return err
	}
	p.tiers = make([]*tier, 0, len(p.tierLims))
	for _, lim := range p.tierLims {
		if lim.Name() == p.def.name {
			return fmt.Errorf("%w: tier %q is named like the policy's own limiter, the default tier", core.ErrInvalidOption, truncate(lim.Name()))
		}
		t := &tier{p: p, lim: lim, name: lim.Name()}
		if err := t.precompute(p.timeout); err != nil {
			return err
		}
		p.tiers = append(p.tiers, t)
	}
	if len(p.tiers) > maxScannedTiers {
		p.tierMap = make(map[string]*tier, len(p.tiers))
		for _, t := range p.tiers {
			p.tierMap[t.name] = t
		}
	}
	return nil
}

// tierFor returns the tier that applies to r: the one pick names, or the
// default.
func (p *Policy) tierFor(r keyfuncs.Request) *tier {
	name, err := p.safePick(r)
	if err != nil || name == "" {
		return &p.def
	}
	if p.tierMap != nil {
		if t := p.tierMap[name]; t != nil {
			return t
		}
		return &p.def
	}
	for _, t := range p.tiers {
		if t.name == name {
			return t
		}
	}
	return &p.def
}

// errPickPanicked reports a tier pick function that panicked.
var errPickPanicked = errors.New("ratewarden: tier pick function panicked")

// safePick calls the pick function, turning a panic into an error (logged).
func (p *Policy) safePick(r keyfuncs.Request) (name string, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: %v", errPickPanicked, v)
			p.logs.log(&p.logs.pickPanic, "ratewarden: tier pick function panicked; the request gets the default tier", p.def.name, err)
		}
	}()
	return p.pick(r)
}

// Reset forgets key's state under the policy's limiter, under every tier
// (WithTiers) and under the limiters of overrides (WithOverrides): the
// operator's "unblock this client". key is exactly what the
// policy's key function produced for the client's requests; to get it, call
// the same function on a request view, such as stdhttp.View(r) for an
// *http.Request, or build the key the way the function does (keyfuncs.IP
// gives the IP, or its /64 for IPv6). Resetting a key the store does not
// hold is not an error. The errors of every limiter are joined; a store that
// cannot reset gives one wrapping core.ErrUnsupported.
func (p *Policy) Reset(ctx context.Context, key string) error {
	errs := []error{p.lim.Reset(ctx, key)}
	for _, t := range p.tiers {
		errs = append(errs, t.lim.Reset(ctx, key))
	}
	for _, t := range p.overrideTiers {
		errs = append(errs, t.lim.Reset(ctx, key))
	}
	return errors.Join(errs...)
}

// Peek returns key's decision under the tier named name (the policy's own
// limiter for "" or its name, a WithTiers tier, or an override's limiter)
// without spending anything: what the client could spend now. It returns an
// error wrapping core.ErrInvalidOption for a name no tier has, and the store's
// error.
func (p *Policy) Peek(ctx context.Context, name, key string) (core.Decision, error) {
	if name == "" || name == p.def.name {
		return p.lim.Peek(ctx, key)
	}
	for _, ts := range [][]*tier{p.tiers, p.overrideTiers} {
		for _, t := range ts {
			if t.name == name {
				return t.lim.Peek(ctx, key)
			}
		}
	}
	return core.Decision{}, fmt.Errorf("%w: no tier named %q", core.ErrInvalidOption, truncate(name))
}

// limitHeaders is what never changes for one of a tier's limits.
type limitHeaders struct {
	limitVals []string // X-RateLimit-Limit
	rlPrefix  string   // `"name";r=`
	denied    [2][2]*Response
}
