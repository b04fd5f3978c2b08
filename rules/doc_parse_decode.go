package rules

import (
	"slices"

	"go.yaml.in/yaml/v4"

	"github.com/ratewarden/ratewarden/core"
)

// libraryDefaults is a policy before the document's defaults: the values
// docs/rules.md gives for a field no one sets.
func libraryDefaults() Policy {
	return Policy{
		Key:       Key{Parts: []KeyPart{{Kind: KeyIP}}},
		Algorithm: core.GCRA,
		Cost:      1,
	}
}

// document decodes the top mapping of a document.
func (d *decoder) document(top *yaml.Node) *draft {
	dr := &draft{base: libraryDefaults()}
	present, _, ok := decodeObject(d, top, nil, "a rules document", documentFields, dr)
	if ok {
		d.require(top, nil, present, "schema", "version", "policies")
	}
	return dr
}

// policies decodes the policies list, each policy starting from the
// defaults.
func (d *decoder) policies(v *yaml.Node, at *path, dr *draft) {
	items, ok := d.list(v, at, "policies")
	switch {
	case !ok:
		return
	case len(items) == 0:
		d.fail(deref(v), at, nil, "no policies: a document has at least one")
		return
	case len(items) > MaxPolicies:
		d.fail(deref(v), at, nil, "%d policies: a document may have at most %d", len(items), MaxPolicies)
		return
	}
	dr.doc.Policies = make([]Policy, 0, len(items))
	dr.failed = make([]map[string]bool, 0, len(items))
	for i, it := range items {
		p := dr.base
		p.Key.Parts = slices.Clone(p.Key.Parts)
		p.Pos = posOf(it)
		failed := d.policy(it, at.at(i), &p)
		dr.doc.Policies = append(dr.doc.Policies, p)
		dr.failed = append(dr.failed, failed)
	}
}

// wholePolicy marks a policy that is no mapping: nothing of it is checked
// further.
var wholePolicy = map[string]bool{"*": true}

// policy decodes one policy over the defaults p holds. It returns the
// fields that had problems (nil when none had), which the validator leaves
// alone.
func (d *decoder) policy(n *yaml.Node, at *path, p *Policy) map[string]bool {
	present, failed, ok := decodeObject(d, n, at, "a policy", policyFields, p)
	if !ok {
		return wholePolicy
	}
	mark := func(names ...string) {
		if failed == nil {
			failed = map[string]bool{}
		}
		for _, name := range names {
			failed[name] = true
		}
	}
	if present["name"] == nil {
		d.require(n, at, present, "name")
		mark("name")
	}
	if present["limits"] != nil && present["tiers"] != nil {
		d.fail(deref(present["tiers"]), at.dot("tiers"), nil, "limits and tiers exclude each other: a tiered policy's limits are its tiers'")
		mark("limits", "tiers")
		return failed
	}
	if bad := d.policyCalendar(present, at, p); bad != nil {
		mark(bad...)
	}
	if bad := d.policySettle(present, at, p); bad != nil {
		mark(bad...)
	}
	if bad := d.policyInFlight(present, at, p); bad != nil {
		mark(bad...)
	}
	if bad := d.policyTokenLease(present, at, p); bad != nil {
		mark(bad...)
	}
	if p.Tiers != nil {
		p.Limits = tierLimits(p.Tiers, p.Tiers.Default)
	}
	return failed
}

// keyNames are the keys written as a word.
var keyNames = map[string]KeyKind{"ip": KeyIP, "framework_ip": KeyFrameworkIP, "route": KeyRoute, "method": KeyMethod}

// key decodes a key: a word (ip), a part with a name ({header: X}), or a
// list of those, composed.
func (d *decoder) key(v *yaml.Node, at *path) (Key, bool) {
	n := deref(v)
	if n.Kind != yaml.SequenceNode {
		part, ok := d.keyPart(n, at)
		return Key{Parts: []KeyPart{part}}, ok
	}
	if len(n.Content) == 0 {
		d.fail(n, at, nil, "an empty list composes no key: write ip, {header: NAME} or a list of such parts")
		return Key{}, false
	}
	parts := make([]KeyPart, 0, len(n.Content))
	good := true
	for i, it := range n.Content {
		if deref(it).Kind == yaml.SequenceNode {
			d.fail(deref(it), at.at(i), nil, "a key part cannot be a list")
			good = false
			continue
		}
		part, ok := d.keyPart(it, at.at(i))
		good = good && ok
		parts = append(parts, part)
	}
	return Key{Parts: parts}, good
}

// keyPart decodes one key part: a word, or a mapping with one of header,
// jwt_claim and context.
func (d *decoder) keyPart(v *yaml.Node, at *path) (KeyPart, bool) {
	n := deref(v)
	if n.Kind == yaml.ScalarNode && n.Tag == tagStr {
		if k, ok := keyNames[n.Value]; ok {
			return KeyPart{Kind: k}, true
		}
		if hasField(keyPartFields, n.Value) {
			d.fail(n, at, nil, "%s takes a name: write {%s: NAME}", brief(n.Value), n.Value)
			return KeyPart{}, false
		}
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n, at, nil, "unknown key %s: want ip, framework_ip, route, method, {header: NAME}, {jwt_claim: NAME} or {context: NAME}", describe(n))
		return KeyPart{}, false
	}
	var part KeyPart
	before := d.n
	present, _, ok := decodeObject(d, n, at, "a key", keyPartFields, &part)
	switch {
	case d.n > before:
		ok = false
	case ok && len(present) != 1:
		d.fail(n, at, nil, "a key part has exactly one of header, jwt_claim and context")
		ok = false
	}
	return part, ok
}

// describe quotes a scalar's value, or names what n is.
func describe(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && n.Tag == tagStr {
		return brief(n.Value)
	}
	return kindName(n)
}

// tiers decodes a policy's tiers.
func (d *decoder) tiers(v *yaml.Node, at *path) *Tiers {
	t := &Tiers{}
	present, _, ok := decodeObject(d, v, at, "tiers", tierFields, t)
	if !ok {
		return nil
	}
	d.require(v, at, present, "by", "default", "limits")
	return t
}

// tierLevels decodes tiers.limits: a mapping from tier names to limits.
func (d *decoder) tierLevels(v *yaml.Node, at *path) []Tier {
	n := deref(v)
	if n.Kind != yaml.MappingNode || n.Tag != tagMap {
		d.fail(n, at, nil, "want a mapping of tier names to limits, such as {free: [100/s], paid: [1000/s]}, got %s", kindName(n))
		return nil
	}
	seen := map[string]*yaml.Node{}
	var levels []Tier
	for _, e := range d.entries(n, at) {
		name, ok := d.str(e.key, at)
		if !ok {
			continue
		}
		if first := seen[name]; first != nil {
			d.fail(deref(e.key), at, nil, "duplicate tier %s (first at %s)", brief(name), posOf(first))
			continue
		}
		seen[name] = deref(e.key)
		levels = append(levels, Tier{Name: name, Limits: d.limits(e.value, at.dot(name))})
	}
	if len(levels) == 0 {
		d.fail(n, at, nil, "no tiers: write at least one, such as {free: [100/s]}")
	}
	return levels
}

// headerList decodes a match's header conditions.
func (d *decoder) headerList(v *yaml.Node, at *path) []HeaderMatch {
	items, _ := d.list(v, at, "header conditions")
	if len(items) == 0 {
		return nil
	}
	out := make([]HeaderMatch, 0, len(items))
	before := d.n
	for i, it := range items {
		var h HeaderMatch
		mine := d.n
		present, _, ok := decodeObject(d, it, at.at(i), "a header condition", headerFields, &h)
		if !ok {
			continue
		}
		d.require(it, at.at(i), present, "name")
		_, eq := present["equals"]
		_, pr := present["present"]
		switch {
		case d.n > mine: // a mistake in the condition: what follows would repeat it
		case eq && pr:
			d.fail(deref(it), at.at(i), nil, "equals and present exclude each other")
		case !eq && !pr:
			d.fail(deref(it), at.at(i), nil, "a header condition needs equals: VALUE or present: true")
		}
		out = append(out, h)
	}
	if d.n > before {
		return nil // as strs does: the validator's paths stay right
	}
	return out
}

// overrideList decodes a policy's overrides, counting them against
// MaxOverrides for the whole document.
func (d *decoder) overrideList(v *yaml.Node, at *path) []Override {
	items, ok := d.list(v, at, "overrides")
	if !ok || len(items) == 0 {
		return nil
	}
	if d.overrides+len(items) > MaxOverrides {
		if d.overrides <= MaxOverrides {
			d.fail(deref(v), at, nil, "more than %d overrides in the document", MaxOverrides)
		}
		d.overrides = MaxOverrides + 1
		return nil
	}
	d.overrides += len(items)
	out := make([]Override, 0, len(items))
	for i, it := range items {
		o := Override{Pos: posOf(it)}
		present, _, ok := decodeObject(d, it, at.at(i), "an override", overrideFields, &o)
		if ok {
			d.require(it, at.at(i), present, "key")
		}
		out = append(out, o)
	}
	return out
}
