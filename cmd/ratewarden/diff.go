package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/rules"
)

// diffDocuments returns the differences between the rules held (nil when
// none are) and the rules wanted, one line each, as rules diff prints them:
// the version, the digest, the policies added ("+"), removed ("-") and
// changed ("~", with each field that changed, old -> new, indented), and the
// order of the policies both have. No line means no difference.
func diffDocuments(held, want *rules.Document) []string {
	if held == nil {
		held = &rules.Document{}
	}
	var out []string
	if held.Version != want.Version && held.Version != 0 {
		out = append(out, fmt.Sprintf("version: %d -> %d", held.Version, want.Version))
	}
	if held.Schema != want.Schema && held.Schema != 0 {
		out = append(out, fmt.Sprintf("schema: %d -> %d", held.Schema, want.Schema))
	}
	if h, w := held.Digest(), want.Digest(); held.Version != 0 && h != w {
		out = append(out, fmt.Sprintf("digest: %s -> %s", rules.ShortDigest(h), rules.ShortDigest(w)))
	}
	old := policiesByName(held)
	for i := range want.Policies {
		p := &want.Policies[i]
		o, ok := old[p.Name]
		if !ok {
			out = append(out, "+ policy "+p.Name)
			for _, f := range policyFields(p) {
				out = append(out, "    "+f.name+": "+f.value)
			}
			continue
		}
		if changes := diffFields(policyFields(o), policyFields(p)); len(changes) > 0 {
			out = append(out, "~ policy "+p.Name)
			out = append(out, changes...)
		}
	}
	kept := policiesByName(want)
	for i := range held.Policies {
		if _, ok := kept[held.Policies[i].Name]; !ok {
			out = append(out, "- policy "+held.Policies[i].Name)
		}
	}
	if o, n := commonOrder(held, kept), commonOrder(want, old); !slices.Equal(o, n) {
		out = append(out, fmt.Sprintf("order: %s -> %s", strings.Join(o, ", "), strings.Join(n, ", ")))
	}
	if len(out) > 0 && held.Version != 0 && want.Version <= held.Version {
		out = append(out, fmt.Sprintf("note: version %d is not newer than the stored %d: raise it, or rules push refuses the file", want.Version, held.Version))
	}
	return out
}

func policiesByName(d *rules.Document) map[string]*rules.Policy {
	m := make(map[string]*rules.Policy, len(d.Policies))
	for i := range d.Policies {
		m[d.Policies[i].Name] = &d.Policies[i]
	}
	return m
}

// commonOrder returns the names of d's policies that other has too, in d's
// order.
func commonOrder(d *rules.Document, other map[string]*rules.Policy) []string {
	var out []string
	for _, p := range d.Policies {
		if _, ok := other[p.Name]; ok {
			out = append(out, p.Name)
		}
	}
	return out
}

// field is one field of a policy, named and written as the document writes
// it (tiers and overrides one field per tier and key).
type field struct{ name, value string }

// diffFields returns a line per field that changed from old to want: in
// want's order, then the fields only old has.
func diffFields(old, want []field) []string {
	had := make(map[string]string, len(old))
	for _, f := range old {
		had[f.name] = f.value
	}
	var out []string
	seen := make(map[string]bool, len(want))
	for _, f := range want {
		seen[f.name] = true
		switch v, ok := had[f.name]; {
		case !ok:
			out = append(out, "    "+f.name+": added: "+f.value)
		case v != f.value:
			out = append(out, "    "+f.name+": "+v+" -> "+f.value)
		}
	}
	for _, f := range old {
		if !seen[f.name] {
			out = append(out, "    "+f.name+": removed (was "+f.value+")")
		}
	}
	return out
}

// policyFields writes p's fields; empty lists are left out.
func policyFields(p *rules.Policy) []field {
	var out []field
	add := func(name, value string) { out = append(out, field{name, value}) }
	addList := func(name string, vals []string) {
		if len(vals) > 0 {
			add(name, "["+strings.Join(vals, ", ")+"]")
		}
	}
	addList("match.paths", p.Match.Paths)
	addList("match.prefixes", p.Match.Prefixes)
	addList("match.methods", p.Match.Methods)
	addList("match.hosts", p.Match.Hosts)
	addList("match.headers", headerTexts(p.Match.Headers))
	if !p.Unlimited {
		add("key", keyText(p.Key))
		add("algorithm", p.Algorithm.String())
		if p.Tiers == nil {
			addList("limits", limitTexts(p.Limits))
		} else {
			add("tiers.by", partText(p.Tiers.By))
			add("tiers.default", p.Tiers.Default)
			for _, t := range p.Tiers.Levels {
				add("tiers."+t.Name, "["+strings.Join(limitTexts(t.Limits), ", ")+"]")
			}
		}
		add("cost", strconv.FormatInt(p.Cost, 10))
		add("fail", map[bool]string{false: "open", true: "closed"}[p.FailClosed])
		add("dry_run", strconv.FormatBool(p.DryRun))
		add("count", map[bool]string{false: "all", true: "failures"}[p.CountFailuresOnly])
	}
	add("unlimited", strconv.FormatBool(p.Unlimited))
	addList("replaces", p.Replaces)
	for _, o := range p.Overrides {
		add("overrides["+strconv.Quote(shorten(o.Key))+"]", overrideText(o))
	}
	return out
}

func headerTexts(hs []rules.HeaderMatch) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		if h.Present {
			out[i] = "{name: " + h.Name + ", present: true}"
		} else {
			out[i] = "{name: " + h.Name + ", equals: " + strconv.Quote(h.Value) + "}"
		}
	}
	return out
}

func limitTexts(ls []core.Limit) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.String()
	}
	return out
}

// keyText writes a key as the document does: ip, {header: X-API-Key}, or a
// list of parts.
func keyText(k rules.Key) string {
	parts := make([]string, len(k.Parts))
	for i, p := range k.Parts {
		parts[i] = partText(p)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func partText(p rules.KeyPart) string {
	switch p.Kind {
	case rules.KeyIP:
		return "ip"
	case rules.KeyFrameworkIP:
		return "framework_ip"
	case rules.KeyHeader:
		return "{header: " + p.Name + "}"
	case rules.KeyJWTClaim:
		return "{jwt_claim: " + p.Name + "}"
	case rules.KeyContext:
		return "{context: " + p.Name + "}"
	case rules.KeyRoute:
		return "route"
	case rules.KeyMethod:
		return "method"
	}
	return fmt.Sprintf("key kind %d", p.Kind)
}

func overrideText(o rules.Override) string {
	switch {
	case o.Blocked:
		return "blocked"
	case o.Unlimited:
		return "unlimited"
	}
	return "[" + strings.Join(limitTexts(o.Limits), ", ") + "]"
}
