package rules

import (
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/ratewarden/ratewarden/core"
)

// objectFields returns the field names of every kind of object a document
// holds, by the name schema.json's $defs give it ("document" for the top
// level): the tables the decoder reads.
func objectFields() map[string][]string {
	return map[string][]string{
		"document":    names(documentFields),
		"defaults":    names(defaultsFields),
		"policy":      names(policyFields),
		"match":       names(matchFields),
		"headerMatch": names(headerFields),
		"keyPart":     names(keyPartFields),
		"tiers":       names(tierFields),
		"override":    names(overrideFields),
		"settle":      names(settleFields),
	}
}

// draft is a document being decoded: the defaults every policy starts from,
// and the fields of each policy that had problems (the validator leaves them
// alone, so that one mistake makes one problem).
type draft struct {
	doc    Document
	base   Policy
	failed []map[string]bool
}

// documentFields are the top level's fields, in the order they are decoded:
// the defaults before the policies that take them.
var documentFields = []field[*draft]{
	{"schema", func(d *decoder, v *yaml.Node, at *path, dr *draft) {
		if s, ok := d.integer(v, at); ok {
			if msg := schemaProblem(s); msg != "" {
				d.fail(deref(v), at, nil, "%s", msg)
				return
			}
			dr.doc.Schema = int(s)
		}
	}},
	{"version", func(d *decoder, v *yaml.Node, at *path, dr *draft) {
		if n, ok := d.integer(v, at); ok {
			if n < 1 {
				d.fail(deref(v), at, nil, "version %d: a document's version is 1 or more", n)
				return
			}
			dr.doc.Version = n
		}
	}},
	{"defaults", func(d *decoder, v *yaml.Node, at *path, dr *draft) {
		decodeObject(d, v, at, "defaults", defaultsFields, &dr.base)
	}},
	{"policies", func(d *decoder, v *yaml.Node, at *path, dr *draft) { d.policies(v, at, dr) }},
}

// policyFields are a policy's fields.
var policyFields = []field[*Policy]{
	{"name", func(d *decoder, v *yaml.Node, at *path, p *Policy) { p.Name, _ = d.str(v, at) }},
	{"match", func(d *decoder, v *yaml.Node, at *path, p *Policy) {
		decodeObject(d, v, at, "a match", matchFields, &p.Match)
	}},
	{"key", func(d *decoder, v *yaml.Node, at *path, p *Policy) {
		if k, ok := d.key(v, at); ok {
			p.Key = k
		}
	}},
	{"algorithm", func(d *decoder, v *yaml.Node, at *path, p *Policy) {
		if s, ok := d.str(v, at); ok {
			a, err := core.ParseAlgorithm(s)
			if err != nil {
				d.fail(deref(v), at, err, "%v", err)
				return
			}
			p.Algorithm = a
		}
	}},
	{"limits", func(d *decoder, v *yaml.Node, at *path, p *Policy) { p.Limits = d.limits(v, at) }},
	{"tiers", func(d *decoder, v *yaml.Node, at *path, p *Policy) { p.Tiers = d.tiers(v, at) }},
	{"cost", func(d *decoder, v *yaml.Node, at *path, p *Policy) {
		if c, ok := d.integer(v, at); ok {
			p.Cost = c
		}
	}},
	{"fail", func(d *decoder, v *yaml.Node, at *path, p *Policy) {
		if c, ok := choice(d, v, at, map[string]bool{"open": false, "closed": true}, `"open" or "closed"`); ok {
			p.FailClosed = c
		}
	}},
	{"dry_run", func(d *decoder, v *yaml.Node, at *path, p *Policy) {
		if b, ok := d.boolean(v, at); ok {
			p.DryRun = b
		}
	}},
	{"count", func(d *decoder, v *yaml.Node, at *path, p *Policy) {
		if c, ok := choice(d, v, at, map[string]bool{"all": false, "failures": true}, `"all" or "failures"`); ok {
			p.CountFailuresOnly = c
		}
	}},
	{"unlimited", func(d *decoder, v *yaml.Node, at *path, p *Policy) {
		if b, ok := d.boolean(v, at); ok {
			p.Unlimited = b
		}
	}},
	{"replaces", func(d *decoder, v *yaml.Node, at *path, p *Policy) {
		p.Replaces = d.strs(v, at, "policy names", nil)
	}},
	{"overrides", func(d *decoder, v *yaml.Node, at *path, p *Policy) { p.Overrides = d.overrideList(v, at) }},
	{"time_zone", decodeTimeZone},                 // calendar.go
	{"anchor_day", decodeAnchorDay},               // calendar.go
	{"block_for", decodeBlockFor},                 // penalty.go
	{"concurrency", decodeConcurrency},            // inflight.go
	{"settle", decodeSettle},                      // settle.go
	{"lease", decodeLease},                        // inflight.go
	{"concurrency_queue", decodeConcurrencyQueue}, // inflight.go
	{"concurrency_wait", decodeConcurrencyWait},   // inflight.go
	{"lease_tokens", decodeLeaseMax},              // lease.go
	{"lease_ttl", decodeLeaseTTL},                 // lease.go
}

// defaultsFields are the policy fields the defaults block may set.
var defaultsFields = pick(policyFields, "algorithm", "key", "fail", "dry_run", "count", "cost")

// matchFields are a match's fields.
var matchFields = []field[*Match]{
	{"paths", func(d *decoder, v *yaml.Node, at *path, m *Match) {
		m.Paths = d.strs(v, at, "route patterns", nil)
	}},
	{"prefixes", func(d *decoder, v *yaml.Node, at *path, m *Match) {
		m.Prefixes = d.strs(v, at, "path prefixes", nil)
	}},
	{"methods", func(d *decoder, v *yaml.Node, at *path, m *Match) {
		m.Methods = d.strs(v, at, "methods", strings.ToUpper)
	}},
	{"hosts", func(d *decoder, v *yaml.Node, at *path, m *Match) {
		m.Hosts = d.strs(v, at, "hosts", strings.ToLower)
	}},
	{"headers", func(d *decoder, v *yaml.Node, at *path, m *Match) { m.Headers = d.headerList(v, at) }},
}

// headerFields are a header condition's fields.
var headerFields = []field[*HeaderMatch]{
	{"name", func(d *decoder, v *yaml.Node, at *path, h *HeaderMatch) { h.Name, _ = d.str(v, at) }},
	{"equals", func(d *decoder, v *yaml.Node, at *path, h *HeaderMatch) { h.Value, _ = d.str(v, at) }},
	{"present", func(d *decoder, v *yaml.Node, at *path, h *HeaderMatch) {
		if b, ok := d.boolean(v, at); ok && !b {
			d.fail(deref(v), at, nil, "present can only be true (to match a value, write equals)")
		}
		h.Present = true
	}},
}

// keyPartFields are the fields of a key part with a name, one of which a
// part has.
var keyPartFields = []field[*KeyPart]{
	{"header", keyPartField(KeyHeader)},
	{"jwt_claim", keyPartField(KeyJWTClaim)},
	{"context", keyPartField(KeyContext)},
}

// keyPartField decodes a key part of kind k, whose value is its name.
func keyPartField(k KeyKind) func(*decoder, *yaml.Node, *path, *KeyPart) {
	return func(d *decoder, v *yaml.Node, at *path, p *KeyPart) {
		if s, ok := d.str(v, at); ok {
			p.Kind, p.Name = k, s
		}
	}
}

// tierFields are the fields of a policy's tiers.
var tierFields = []field[*Tiers]{
	{"by", func(d *decoder, v *yaml.Node, at *path, t *Tiers) {
		if n := deref(v); n.Kind != yaml.MappingNode {
			d.fail(n, at, nil, "tiers are picked by {header: NAME}, {jwt_claim: NAME} or {context: NAME}, not %s", kindName(n))
			return
		}
		t.By, _ = d.keyPart(v, at)
	}},
	{"default", func(d *decoder, v *yaml.Node, at *path, t *Tiers) { t.Default, _ = d.str(v, at) }},
	{"limits", func(d *decoder, v *yaml.Node, at *path, t *Tiers) { t.Levels = d.tierLevels(v, at) }},
}

// overrideFields are an override's fields.
var overrideFields = []field[*Override]{
	{"key", func(d *decoder, v *yaml.Node, at *path, o *Override) { o.Key, _ = d.str(v, at) }},
	{"limits", func(d *decoder, v *yaml.Node, at *path, o *Override) { o.Limits = d.limits(v, at) }},
	{"unlimited", func(d *decoder, v *yaml.Node, at *path, o *Override) {
		if b, ok := d.boolean(v, at); ok {
			o.Unlimited = b
		}
	}},
	{"blocked", func(d *decoder, v *yaml.Node, at *path, o *Override) {
		if b, ok := d.boolean(v, at); ok {
			o.Blocked = b
		}
	}},
}
