package httplimit

import (
	"cmp"
	"fmt"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// Override is one key's own treatment under a policy (WithOverrides): at
// most one of its fields is set.
type Override struct {
	// Blocked denies every request of the key at once, without asking the
	// store: 429 with headers that say the quota is 0 (X-RateLimit-Limit: 0,
	// q=0), and a Retry-After of the default limit's period. The observer
	// hears OutcomeDenied (OutcomeDryRunDenied in a dry run, which lets the
	// request go on).
	Blocked bool
	// Unlimited lets every request of the key pass, with no rate-limit
	// headers; the observer hears OutcomeSkipped.
	Unlimited bool
	// Limiter, when set, decides the key's requests instead of the policy's
	// limiter: build it with the policy limiter's Tier, so that it shares its
	// store, algorithm and namespace; headers and events carry its name.
	Limiter *core.Limiter
	// Name is what a Blocked key's answers are named in the RateLimit-Policy
	// and RateLimit fields, the problem body and the observer's events
	// (rules names them "policy/override"); empty, the default tier's name.
	// A Limiter override is named by its limiter.
	Name string
}

// WithOverrides gives named keys their own treatment (see Override): a
// partner's API key its own limits, the monitoring's no limit, a leaked key
// none at all. A key is matched exactly as the key function produced it.
// The map is read once, by New; a request pays one map lookup. It returns an
// error wrapping core.ErrInvalidOption for an override that sets more than
// one field, or none.
func WithOverrides(overrides map[string]Override) Option {
	return func(p *Policy) error {
		for k, o := range overrides {
			n := 0
			for _, set := range []bool{o.Blocked, o.Unlimited, o.Limiter != nil} {
				if set {
					n++
				}
			}
			if n != 1 {
				return fmt.Errorf("%w: the override of key %q must set exactly one of Blocked, Unlimited and Limiter", core.ErrInvalidOption, truncate(k))
			}
			if o.Name != "" && !o.Blocked {
				return fmt.Errorf("%w: the override of key %q has a Name, which only a Blocked override takes", core.ErrInvalidOption, truncate(k))
			}
		}
		p.overrideSpecs = overrides
		return nil
	}
}

// override is an Override made ready for requests.
type override struct {
	blocked, unlimited bool
	t                  *tier // Limiter's tier, or the blocked tier of its name
}

// buildOverrides makes the policy's overrides once its default tier is
// built: one tier per distinct limiter, and the blocked tier.
func (p *Policy) buildOverrides() error {
	if len(p.overrideSpecs) == 0 {
		return nil
	}
	p.overrides = make(map[string]override, len(p.overrideSpecs))
	byLimiter := map[*core.Limiter]*tier{}
	blocked := map[string]*tier{}
	for k, o := range p.overrideSpecs {
		switch {
		case o.Blocked:
			name := cmp.Or(o.Name, p.def.name)
			t := blocked[name]
			if t == nil {
				var err error
				if t, err = p.newBlockedTier(name); err != nil {
					return err
				}
				blocked[name] = t
			}
			p.overrides[k] = override{blocked: true, t: t}
		case o.Unlimited:
			p.overrides[k] = override{unlimited: true}
		default:
			t := byLimiter[o.Limiter]
			if t == nil {
				t = &tier{p: p, lim: o.Limiter, name: o.Limiter.Name()}
				if err := t.precompute(p.timeout); err != nil {
					return err
				}
				byLimiter[o.Limiter] = t
				p.overrideTiers = append(p.overrideTiers, t)
			}
			p.overrides[k] = override{t: t}
		}
	}
	p.overrideSpecs = nil
	return nil
}

// newBlockedTier returns the tier of blocked keys named name: a quota of 0
// over the default limit's period.
func (p *Policy) newBlockedTier(name string) (*tier, error) {
	l := p.lim.Limits()[0]
	t := &tier{p: p, lim: p.lim, name: name}
	return t, t.setLimitHeaders([]core.Limit{{Rate: 0, Period: l.Period, Name: name}})
}

// blockedDecision is the decision of a blocked key's request under t:
// denied, a quota of 0, back after the period (when it will be denied again).
func blockedDecision(t *tier) core.Decision {
	w := t.lim.Limits()[0].Period
	return core.Decision{Limit: core.Limit{Rate: 0, Period: w, Name: t.name}, ResetAfter: w, RetryAfter: w}
}

// overridden answers the request of an unlimited key (it passes, skipped) or
// a blocked one (denied without asking the store).
func (p *Policy) overridden(r keyfuncs.Request, ov override) *outcome {
	if !ov.blocked {
		if p.observer != nil {
			p.observe(Event{Outcome: OutcomeSkipped, Policy: p.def.name, Request: r})
		}
		return p.passOutcome
	}
	d := blockedDecision(ov.t)
	return p.deny(p.newOutcome(ov.t, &d), r, 0)
}
