package rules

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// compiled is one document made ready to decide requests: what a Set swaps
// atomically on a reload.
type compiled struct {
	doc      *Document
	sel      *selector           // which of doc's policies apply to a request
	limiting []*httplimit.Policy // by index in doc.Policies; nil for an unlimited one
	policies map[string]*entry   // the limiting policies, by name
}

// entry is one limiting policy of a compiled document, with the limiters an
// operator reaches through Set.Reset and Set.Peek.
type entry struct {
	doc       *Policy
	policy    *httplimit.Policy
	tiers     []*core.Limiter          // the default tier first
	overrides map[string]*core.Limiter // keys with limits of their own
}

// compile builds doc's policies on st. Unlimited policies decide nothing: the
// Set drops them once the selector applied their replaces. A policy written exactly
// as in prev (the rules in force, or nil), but for its position, keeps the
// policy prev compiled: a reload compiles only what changed.
func (c *config) compile(st core.Store, doc *Document, prev *compiled) (*compiled, error) {
	sel, err := newSelector(doc.Policies)
	if err != nil {
		return nil, err
	}
	out := &compiled{doc: doc, sel: sel, limiting: make([]*httplimit.Policy, len(doc.Policies)),
		policies: make(map[string]*entry, len(doc.Policies))}
	for i := range doc.Policies {
		p := &doc.Policies[i]
		if p.Unlimited {
			continue
		}
		e := prev.unchanged(p)
		if e == nil {
			var err error
			if e, err = c.compilePolicy(st, p); err != nil {
				return nil, fmt.Errorf("policy %q: %w", p.Name, err)
			}
		}
		out.limiting[i] = e.policy
		out.policies[p.Name] = e
	}
	return out, nil
}

// unchanged returns the entry prev compiled for a policy written as p, but
// for positions, or nil.
func (prev *compiled) unchanged(p *Policy) *entry {
	if prev == nil {
		return nil
	}
	e := prev.policies[p.Name]
	if e == nil || !samePolicy(e.doc, p) {
		return nil
	}
	return &entry{doc: p, policy: e.policy, tiers: e.tiers, overrides: e.overrides}
}

// samePolicy reports whether a and b say the same, wherever they are written.
func samePolicy(a, b *Policy) bool {
	x, y := *a, *b
	x.Pos, y.Pos = Pos{}, Pos{}
	x.Overrides, y.Overrides = withoutPos(x.Overrides), withoutPos(y.Overrides)
	return reflect.DeepEqual(x, y)
}

// withoutPos returns overrides with their positions cleared.
func withoutPos(overrides []Override) []Override {
	out := make([]Override, len(overrides))
	for i, o := range overrides {
		o.Pos = Pos{}
		out[i] = o
	}
	return out
}

// compilePolicy builds one limiting policy: its limiter (namespaced by the
// policy's name, so that two policies never share a counter), tiers and
// overrides, and the HTTP behaviour the document gives it.
func (c *config) compilePolicy(st core.Store, p *Policy) (*entry, error) {
	e := &entry{doc: p}
	name, limits := p.Name, p.Limits
	if p.Tiers != nil {
		name, limits = tierName(p, p.Tiers.Default), tierLimits(p.Tiers, p.Tiers.Default)
	}
	lim, err := c.newLimiter(st, p, name, limits)
	if err != nil {
		return nil, err
	}
	e.tiers = []*core.Limiter{lim}
	key, err := c.keyFunc(p.Key)
	if err != nil {
		return nil, err
	}
	opts := append([]httplimit.Option{}, c.httpOpts...)
	opts = append(opts, httplimit.WithKey(key), httplimit.WithLogger(c.log()))
	for _, o := range c.observers {
		opts = append(opts, httplimit.WithObserver(o))
	}
	more, err := c.tierOptions(e, p, lim)
	if err != nil {
		return nil, err
	}
	opts = append(opts, more...)
	opts = append(opts, behaviourOptions(p)...)
	opts = append(opts, inflightPolicyOptions(p)...) // inflight.go
	ov, err := c.overrideOption(e, p, lim)
	if err != nil {
		return nil, err
	}
	if ov != nil {
		opts = append(opts, ov)
	}
	e.policy, err = httplimit.New(lim, opts...)
	return e, err
}

// newLimiter makes the limiter of limits, named name: the first limit takes
// the name, the others the name and their own text ("api 1000/h").
func (c *config) newLimiter(st core.Store, p *Policy, name string, limits []core.Limit) (*core.Limiter, error) {
	if len(limits) == 0 {
		return nil, fmt.Errorf("%w: no limits", core.ErrInvalidLimit)
	}
	opts := []core.Option{core.WithNamespace(p.Name)}
	if c.clock != nil {
		opts = append(opts, core.WithClock(c.clock))
	}
	for _, l := range limits[1:] {
		opts = append(opts, core.WithLimit(l.Named(name+" "+l.String())))
	}
	if o := inflightOption(p); o != nil {
		opts = append(opts, o)
	}
	if o := tokenLeaseOption(p); o != nil {
		opts = append(opts, o)
	}
	if p.Settle != nil {
		opts = append(opts, core.WithDebt(p.Settle.Debt))
	}
	if o := blockForOption(p); o != nil {
		opts = append(opts, o)
	}
	return core.NewLimiter(st, p.Algorithm, limits[0].Named(name), opts...)
}

// tierOptions builds the tiers of a tiered policy (each from lim, so they
// share its store, algorithm and namespace) and the option that picks one per
// request.
func (c *config) tierOptions(e *entry, p *Policy, lim *core.Limiter) ([]httplimit.Option, error) {
	if p.Tiers == nil {
		return nil, nil
	}
	by, err := c.partFunc(p.Tiers.By)
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(p.Tiers.Levels))
	var tiers []*core.Limiter
	for _, lvl := range p.Tiers.Levels {
		full := tierName(p, lvl.Name)
		names[lvl.Name] = full
		if lvl.Name == p.Tiers.Default {
			continue
		}
		t, err := lim.Tier(full, lvl.Limits[0], lvl.Limits[1:]...)
		if err != nil {
			return nil, fmt.Errorf("tier %q: %w", lvl.Name, err)
		}
		tiers = append(tiers, t)
		e.tiers = append(e.tiers, t)
	}
	if len(tiers) == 0 {
		return nil, nil // only the default tier: nothing to pick
	}
	pick := func(r keyfuncs.Request) (string, error) {
		v, err := by(r)
		if err != nil {
			return "", err
		}
		return names[v], nil // "" (the default) for a value no tier has
	}
	return []httplimit.Option{httplimit.WithTiers(pick, tiers...)}, nil
}

// behaviourOptions are the document's switches: cost, dry run, fail mode,
// counting only failures, settling.
func behaviourOptions(p *Policy) []httplimit.Option {
	var opts []httplimit.Option
	if cost := settleCost(p); cost != 1 {
		opts = append(opts, httplimit.WithCost(func(keyfuncs.Request) int64 { return cost }))
	}
	if p.DryRun {
		opts = append(opts, httplimit.WithDryRun())
	}
	if p.FailClosed {
		opts = append(opts, httplimit.WithFailClosed())
	}
	if p.CountFailuresOnly {
		opts = append(opts, httplimit.WithRefund(func(status int) bool { return status < 400 }))
	}
	if p.Settle != nil {
		opts = append(opts, httplimit.WithSettleHeader(p.Settle.Header))
	}
	return opts
}

// overrideOption builds the policy's per-key overrides; nil when it has none.
func (c *config) overrideOption(e *entry, p *Policy, lim *core.Limiter) (httplimit.Option, error) {
	if len(p.Overrides) == 0 {
		return nil, nil
	}
	m := make(map[string]httplimit.Override, len(p.Overrides))
	byFigures := map[string]*core.Limiter{} // one limiter per distinct limits
	e.overrides = map[string]*core.Limiter{}
	for _, o := range p.Overrides {
		switch {
		case o.Blocked:
			m[o.Key] = httplimit.Override{Blocked: true, Name: p.Name + "/override"}
		case o.Unlimited:
			m[o.Key] = httplimit.Override{Unlimited: true}
		default:
			sig := limitsText(o.Limits)
			t := byFigures[sig]
			if t == nil {
				var err error
				if t, err = lim.Tier(p.Name+"/override", o.Limits[0], o.Limits[1:]...); err != nil {
					return nil, fmt.Errorf("override %q: %w", keyfuncs.Bounded(o.Key, 64), err)
				}
				byFigures[sig] = t
			}
			m[o.Key] = httplimit.Override{Limiter: t}
			e.overrides[o.Key] = t
		}
	}
	return httplimit.WithOverrides(m), nil
}

// limitsText is a limit list's text, to find overrides with the same limits.
func limitsText(ls []core.Limit) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.String())
		b.WriteByte(',')
	}
	return b.String()
}

// tierName is the name a tier's headers and metrics carry: policy/tier.
func tierName(p *Policy, tier string) string { return p.Name + "/" + tier }

// tierLimits returns the limits of the tier named name.
func tierLimits(t *Tiers, name string) []core.Limit {
	for _, l := range t.Levels {
		if l.Name == name {
			return l.Limits
		}
	}
	return nil
}

// keyFunc returns the key function of k: its parts composed, or "ip".
func (c *config) keyFunc(k Key) (keyfuncs.Func, error) {
	if len(k.Parts) == 0 {
		return c.partFunc(KeyPart{Kind: KeyIP})
	}
	parts := make([]keyfuncs.Func, len(k.Parts))
	for i, p := range k.Parts {
		f, err := c.partFunc(p)
		if err != nil {
			return nil, err
		}
		parts[i] = f
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return keyfuncs.Compose(parts...)
}

// partFunc returns the key function of one key part.
func (c *config) partFunc(p KeyPart) (keyfuncs.Func, error) {
	switch p.Kind {
	case KeyIP:
		if c.ipKey != nil {
			return c.ipKey, nil
		}
		return keyfuncs.IP()
	case KeyFrameworkIP:
		return keyfuncs.FrameworkIP()
	case KeyHeader:
		return keyfuncs.Header(p.Name)
	case KeyJWTClaim:
		if c.claimKey == nil {
			return nil, fmt.Errorf("%w: the document keys by the JWT claim %q, but no rules.WithClaimKey says how to verify the token", core.ErrInvalidOption, p.Name)
		}
		return c.claimKey(p.Name)
	case KeyContext:
		key, ok := c.contextKeys[p.Name]
		if !ok {
			key = p.Name
		}
		return keyfuncs.ContextValue(key)
	case KeyRoute:
		return keyfuncs.Route(), nil
	case KeyMethod:
		return keyfuncs.Method(), nil
	}
	return nil, fmt.Errorf("%w: unknown key kind %d", core.ErrInvalidOption, p.Kind)
}
