package rules

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// Set is the rules in force: a compiled document that decides every request
// (Handle, which the adapters' Middleware runs), swapped atomically by Load
// and Replace when the document changes. A request sees the old rules or the
// new, never a mix; the counters of a policy whose limits did not change
// carry on across a swap, since they live in the store under the policy's
// name and the limits' figures. A Set is safe for concurrent use.
type Set struct {
	store core.Store
	cfg   config
	cur   atomic.Pointer[compiled]
	id    atomic.Pointer[docIdentity] // the identity of cur's document
	mu    sync.Mutex                  // serialises swaps, so hooks hear them in order
	// leases are the give-backs of replaced policies' leased tokens on
	// their way (lease_return.go).
	leases leaseReturns
}

// ErrUnknownPolicy is returned by Reset and Peek for a policy name the rules
// in force do not have (or one that is unlimited, with no counters).
var ErrUnknownPolicy = errors.New("ratewarden: no such limiting policy")

// New builds the rule set in force from doc, keeping every policy's counters
// in store. It returns an error wrapping core.ErrInvalidOption for a nil store
// or document, or a bad option; the *Problems of a document that fails
// Document.Validate (one built in Go); and the compile error of a document
// that cannot be built with these options (a JWT claim key without
// WithClaimKey).
func New(store core.Store, doc *Document, opts ...Option) (*Set, error) {
	if store == nil {
		return nil, fmt.Errorf("%w: nil store", core.ErrInvalidOption)
	}
	if doc == nil {
		return nil, fmt.Errorf("%w: nil document", core.ErrInvalidOption)
	}
	s := &Set{store: store}
	for _, o := range opts {
		if o == nil {
			return nil, nilOption("option")
		}
		if err := o(&s.cfg); err != nil {
			return nil, err
		}
	}
	if err := doc.Validate(); err != nil {
		return nil, err
	}
	c, err := s.cfg.compile(store, doc, nil)
	if err != nil {
		return nil, err
	}
	s.cur.Store(c)
	id := Identity{Version: doc.Version, Digest: doc.Digest()}
	s.id.Store(&docIdentity{doc: doc, Identity: id})
	s.observeRules(id)
	return s, nil
}

// Handle runs the rules on one request, as httplimit.Policy.Handle does for
// one policy: the rules in force select the policies that apply (as a
// Matcher does), and httplimit.HandleAll runs their compiled policies, the
// unlimited ones left out: every one decides, and the request goes on only
// when all admit it. The adapters' Middleware functions take a Set.
func (s *Set) Handle(ctx context.Context, r keyfuncs.Request, w httplimit.ResponseWriter) (httplimit.Pass, bool) {
	c := s.cur.Load()
	var idx [maxStackPolicies]int
	var buf [maxStackPolicies]*httplimit.Policy
	chosen := buf[:0]
	for _, i := range c.sel.Select(r, idx[:0]) {
		if p := c.limiting[i]; p != nil {
			chosen = append(chosen, p)
		}
	}
	return httplimit.HandleAll(ctx, r, w, chosen)
}

// maxStackPolicies is the number of applying policies Handle keeps on the
// stack; more cost an allocation.
const maxStackPolicies = 16

// Load parses raw (YAML or JSON), validates and compiles it, and swaps it in:
// see Set. On any error (a *Problems wrapping ErrInvalidRules for a document
// that fails validation) the rules in force stay. Either way the reload hook
// hears of it (WithReloadHook), and a refusal is logged. source names where
// raw came from ("rules.yaml", "redis"), for messages.
//
// A document is refused for its identity (Identity) too: one of the version
// in force with another digest (ErrVersionConflict: two documents of one
// version must be the same rules), or, unless opts allow it
// (AllowDowngrade), one older than the document in force (ErrDowngrade).
// Loading the document in force again changes nothing and is no error.
func (s *Set) Load(raw []byte, source string, opts ...LoadOption) error {
	lc, err := newLoadConfig(opts)
	if err == nil {
		var doc *Document
		if doc, err = Parse(raw, source); err == nil {
			return s.swap(doc, source, lc)
		}
	}
	s.report(source, err)
	return err
}

// Replace swaps in a document built in Go or parsed before, as Load does,
// once it passes Document.Validate, and with the same identity rules.
func (s *Set) Replace(doc *Document, source string, opts ...LoadOption) error {
	lc, err := newLoadConfig(opts)
	if err == nil {
		err = fmt.Errorf("%w: nil document", core.ErrInvalidOption)
		if doc != nil {
			err = doc.Validate()
		}
	}
	if err != nil {
		s.report(source, err)
		return err
	}
	return s.swap(doc, source, lc)
}

// swap compiles a valid doc and makes it the rules in force, when its
// identity allows (admit).
func (s *Set) swap(doc *Document, source string, lc loadConfig) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := Identity{Version: doc.Version, Digest: doc.Digest()}
	_, cur := s.identity()
	err := s.admit(doc, next.Digest, source, cur, lc)
	var c *compiled
	if err == nil {
		if c, err = s.cfg.compile(s.store, doc, s.cur.Load()); err != nil {
			err = fmt.Errorf("%s: %w", source, err)
		}
	}
	if err != nil {
		s.report(source, err)
		return err
	}
	s.id.Store(&docIdentity{doc: doc, Identity: next})
	prev := s.cur.Swap(c)
	s.returnDropped(prev, c)
	s.observeRules(next)
	s.report(source, nil)
	return nil
}

// Document returns the document in force.
func (s *Set) Document() *Document { return s.cur.Load().doc }

// Version returns the version of the document in force.
func (s *Set) Version() int64 { return s.cur.Load().doc.Version }

// Reset forgets key's counters under the policy named policy, in every tier
// and its override: the operator's "unblock this client". key is exactly what
// the policy's key produces. It returns an error wrapping ErrUnknownPolicy for
// a name the rules in force have no limiting policy of, and the store's.
func (s *Set) Reset(ctx context.Context, policy, key string) error {
	e, err := s.entry(policy)
	if err != nil {
		return err
	}
	errs := []error{e.policy.Reset(ctx, key)}
	if t := e.overrides[key]; t != nil {
		errs = append(errs, t.Reset(ctx, key))
	}
	return errors.Join(errs...)
}

// PeekResult is key's state under one limit set of a policy.
type PeekResult struct {
	// Name is the limit set's name, as headers carry it: the policy, a
	// policy/tier, or policy/override.
	Name string
	// Decision is what a request of cost 0 would be told now; the zero
	// Decision for a blocked or unlimited key.
	Decision core.Decision
	// Blocked and Unlimited report an override of the key.
	Blocked, Unlimited bool
}

// Peek returns key's state under the policy named policy, without spending:
// one result per tier (the default first), or the key's override. It returns
// an error wrapping ErrUnknownPolicy for an unknown policy, and the store's.
func (s *Set) Peek(ctx context.Context, policy, key string) ([]PeekResult, error) {
	e, err := s.entry(policy)
	if err != nil {
		return nil, err
	}
	for _, o := range e.doc.Overrides {
		if o.Key != key {
			continue
		}
		if o.Blocked || o.Unlimited {
			return []PeekResult{{Name: policy + "/override", Blocked: o.Blocked, Unlimited: o.Unlimited}}, nil
		}
		d, err := e.overrides[key].Peek(ctx, key)
		return []PeekResult{{Name: e.overrides[key].Name(), Decision: d}}, err
	}
	out := make([]PeekResult, 0, len(e.tiers))
	for _, t := range e.tiers {
		d, err := t.Peek(ctx, key)
		if err != nil {
			return nil, err
		}
		out = append(out, PeekResult{Name: t.Name(), Decision: d})
	}
	return out, nil
}

// entry returns the limiting policy named name.
func (s *Set) entry(name string) (*entry, error) {
	e := s.cur.Load().policies[name]
	if e == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownPolicy, keyfuncs.Bounded(name, 64))
	}
	return e, nil
}
