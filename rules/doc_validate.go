package rules

import (
	"fmt"
	"strings"

	"github.com/ratewarden/ratewarden/core"
)

// Validate checks d as Parse checks the documents it reads (every check of
// docs/rules.md "Validation" that concerns values: names, patterns, keys,
// limits against the policy's algorithm, tiers, overrides, replaces and
// unreachable policies, the bounds MaxPolicies and the rest), for a Document
// built or changed in Go before it is handed to New. It returns nil, or a
// *Problems wrapping ErrInvalidRules that lists every problem, each at the
// Pos its policy or override holds (the zero Pos when they hold none).
func (d *Document) Validate() error {
	var f findings
	if d == nil {
		f.add(Pos{}, nil, nil, "no document (nil)")
		return f.problems("")
	}
	v := &validator{f: &f}
	v.document(d)
	if f.empty() {
		return nil
	}
	return f.problems("")
}

// validator checks the values of a Document: after the decoder in Parse, or
// alone in Document.Validate.
type validator struct {
	f *findings
	// locate finds a path's position in the parsed document; nil for a
	// Document built in Go, whose problems take their policy's Pos.
	locate func(*path) Pos
	// failed names, per policy, the fields the decoder found problems in:
	// the checks that depend on them are left out, so that one mistake
	// makes one problem ("*" for a policy that is no mapping at all).
	failed []map[string]bool
	// parsed says the decoder checked the document's own fields (schema,
	// version, the number of policies and overrides) already.
	parsed bool
}

// report records a problem about the part at: at its position in the
// parsed document, or at fallback.
func (v *validator) report(at *path, fallback Pos, err error, format string, args ...any) {
	v.f.add(v.where(at, fallback), at, err, format, args...)
}

// where returns the position of at: located in the parsed document, or
// fallback.
func (v *validator) where(at *path, fallback Pos) Pos {
	if v.locate == nil || v.f.full() {
		return fallback
	}
	return v.locate(at)
}

// skip reports whether the decoder found problems in field of policy i,
// so that the checks of its value would only repeat them.
func (v *validator) skip(i int, field string) bool {
	if i >= len(v.failed) {
		return false
	}
	m := v.failed[i]
	return m["*"] || m[field]
}

// document checks a whole document.
func (v *validator) document(doc *Document) {
	var top *path
	if !v.parsed && !v.bounds(doc) {
		return
	}
	at := top.dot("policies")
	for i := range doc.Policies {
		if !v.skip(i, "*") {
			v.policy(&doc.Policies[i], i, at.at(i))
		}
	}
	v.cross(doc.Policies, at)
}

// bounds checks a Go-built document's own fields and sizes (the decoder
// checks a parsed one's as it reads them). It reports false when the
// document is too large to check further.
func (v *validator) bounds(doc *Document) bool {
	var top *path
	if msg := schemaProblem(int64(doc.Schema)); msg != "" {
		v.report(top.dot("schema"), Pos{}, nil, "%s", msg)
	}
	if doc.Version < 1 {
		v.report(top.dot("version"), Pos{}, nil, "version %d: a document's version is 1 or more", doc.Version)
	}
	switch n := len(doc.Policies); {
	case n == 0:
		v.report(top.dot("policies"), Pos{}, nil, "no policies: a document has at least one")
	case n > MaxPolicies:
		v.report(top.dot("policies"), Pos{}, nil, "%d policies: a document may have at most %d", n, MaxPolicies)
		return false
	}
	total := 0
	for i := range doc.Policies {
		total += len(doc.Policies[i].Overrides)
	}
	if total > MaxOverrides {
		v.report(top.dot("policies"), Pos{}, nil, "%d overrides: a document may have at most %d", total, MaxOverrides)
		return false
	}
	return true
}

// policy checks the values of policy i, p, leaving out the checks of the
// fields the decoder found problems in.
func (v *validator) policy(p *Policy, i int, at *path) {
	if msg := nameProblem("policy", p.Name); msg != "" && !v.skip(i, "name") {
		v.report(at.dot("name"), p.Pos, nil, "%s", msg)
	}
	v.match(&p.Match, at.dot("match"), p.Pos)
	if !v.skip(i, "key") {
		v.key(p.Key.Parts, at.dot("key"), p.Pos)
	}
	if p.Cost < 0 {
		v.report(at.dot("cost"), p.Pos, nil, "cost %d: what a request spends is 0 or more", p.Cost)
	}
	v.replaces(p, at.dot("replaces"))
	v.blockFor(p, i, at)
	v.inflight(p, i, at)
	v.tokenLease(p, i, at)
	if err := p.Algorithm.Validate(); err != nil {
		v.report(at.dot("algorithm"), p.Pos, err, "%v", err)
		return // every limit would be refused for it
	}
	if v.skip(i, "algorithm") || v.skip(i, "unlimited") {
		return // the limits' checks depend on them
	}
	if p.Unlimited {
		v.unlimited(p, at)
		return
	}
	switch {
	case v.skip(i, "tiers"):
	case p.Tiers != nil:
		v.tiers(p, at.dot("tiers"))
	case len(p.Limits) == 0:
		if !v.skip(i, "limits") {
			v.report(at, p.Pos, nil, "no limits: write limits, tiers, or unlimited: true")
		}
	default:
		v.limits(p, p.Limits, at.dot("limits"), p.Pos)
	}
	if !v.skip(i, "overrides") {
		v.overrides(p, at.dot("overrides"))
	}
}

// unlimited checks that an unlimited policy sets nothing it would ignore.
func (v *validator) unlimited(p *Policy, at *path) {
	if p.Tiers != nil {
		v.report(at.dot("tiers"), p.Pos, nil, "an unlimited policy has no tiers: remove tiers or unlimited")
	} else if len(p.Limits) > 0 {
		v.report(at.dot("limits"), p.Pos, nil, "an unlimited policy has no limits: remove limits or unlimited")
	}
	if len(p.Overrides) > 0 {
		v.report(at.dot("overrides"), p.Pos, nil, "an unlimited policy has no overrides: remove overrides or unlimited")
	}
}

// limits checks limits against the policy's algorithm and cost.
func (v *validator) limits(p *Policy, ls []core.Limit, at *path, pos Pos) {
	for i, l := range ls {
		if err := p.Algorithm.ValidateLimit(l); err != nil {
			v.report(at.at(i), pos, err, "%q: %v", l.String(), err)
			continue
		}
		if c := p.Algorithm.Capacity(l); p.Cost > c {
			v.report(at.at(i), pos, nil, "%q admits at most %d at once under %s, less than the policy's cost %d: every request would be denied",
				l.String(), c, p.Algorithm, p.Cost)
		}
	}
}

// tiers checks a tiered policy's tiers.
func (v *validator) tiers(p *Policy, at *path) {
	t := p.Tiers
	switch t.By.Kind {
	case KeyHeader, KeyJWTClaim, KeyContext:
		v.key([]KeyPart{t.By}, at.dot("by"), p.Pos)
	default:
		v.report(at.dot("by"), p.Pos, nil, "tiers are picked by a header, a JWT claim or a context value")
	}
	levels := at.dot("limits")
	if len(t.Levels) == 0 {
		v.report(levels, p.Pos, nil, "no tiers: write at least one, such as {free: [100/s]}")
	}
	seen := make(map[string]bool, len(t.Levels))
	var found bool
	for _, lvl := range t.Levels {
		lat := levels.dot(lvl.Name)
		if msg := nameProblem("tier", lvl.Name); msg != "" {
			v.report(lat, p.Pos, nil, "%s", msg)
		}
		if seen[lvl.Name] {
			v.report(lat, p.Pos, nil, "duplicate tier %s", brief(lvl.Name))
		}
		seen[lvl.Name] = true
		found = found || lvl.Name == t.Default
		if len(lvl.Limits) == 0 {
			v.report(lat, p.Pos, nil, "no limits: write at least one, such as [100/m]")
		}
		v.limits(p, lvl.Limits, lat, p.Pos)
	}
	switch {
	case !found && len(t.Levels) > 0:
		v.report(at.dot("default"), p.Pos, nil, "the default tier %s is no tier (the tiers are %s)", brief(t.Default), tierList(t))
	case found && !sameLimits(p.Limits, tierLimits(t, t.Default)):
		v.report(at.dot("limits"), p.Pos, nil, "a tiered policy's Limits are its default tier's")
	}
}

// tierList lists a policy's tier names for a message.
func tierList(t *Tiers) string {
	var b strings.Builder
	for i, lvl := range t.Levels {
		if i == 8 {
			fmt.Fprintf(&b, " and %d more", len(t.Levels)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(brief(lvl.Name))
	}
	return b.String()
}

// sameLimits reports whether two limit lists are equal.
func sameLimits(a, b []core.Limit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// overrides checks a policy's overrides.
func (v *validator) overrides(p *Policy, at *path) {
	seen := make(map[string]int, len(p.Overrides))
	for i := range p.Overrides {
		o := &p.Overrides[i]
		oat := at.at(i)
		switch first, dup := seen[o.Key]; {
		case o.Key == "":
			v.report(oat.dot("key"), o.Pos, nil, "an override's key is empty")
		case len(o.Key) > MaxKeyLength:
			v.report(oat.dot("key"), o.Pos, nil, "a key of %d bytes: an override key is at most %d bytes", len(o.Key), MaxKeyLength)
		case dup:
			v.report(oat.dot("key"), o.Pos, nil, "duplicate override key %s (first at %s)",
				brief(o.Key), v.where(at.at(first).dot("key"), p.Overrides[first].Pos))
		default:
			seen[o.Key] = i
		}
		if n := btoi(len(o.Limits) > 0) + btoi(o.Unlimited) + btoi(o.Blocked); n != 1 {
			v.report(oat, o.Pos, nil, "an override has exactly one of limits, unlimited: true and blocked: true")
		}
		v.limits(p, o.Limits, oat.dot("limits"), o.Pos)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// replaces checks a policy's replaces list on its own: no empty name, no
// name twice, not its own name (the names' existence is checked across
// policies).
func (v *validator) replaces(p *Policy, at *path) {
	seen := make(map[string]bool, len(p.Replaces))
	for i, name := range p.Replaces {
		switch {
		case name == "":
			v.report(at.at(i), p.Pos, nil, "an empty policy name")
		case name == p.Name:
			v.report(at.at(i), p.Pos, nil, "a policy cannot replace itself")
		case seen[name]:
			v.report(at.at(i), p.Pos, nil, "%s is listed twice", brief(name))
		}
		seen[name] = true
	}
}
