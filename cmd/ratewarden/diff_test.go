package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/rules"
)

func parseDoc(t *testing.T, src string) *rules.Document {
	t.Helper()
	doc, err := rules.Parse([]byte(src), "test")
	require.NoError(t, err)
	return doc
}

// The diff names every field that changed, old -> new, in the document's
// own words.
func TestDiffDocuments(t *testing.T) {
	t.Parallel()
	const base = "schema: 1\nversion: 1\npolicies:\n"
	tests := []struct {
		name      string
		old, want string // the policies, after base
		lines     []string
	}{
		{"same", "  - {name: a, limits: [1/s]}\n", "  - {name: a, limits: [1/s]}\n", nil},
		{"limits and algorithm", "  - {name: a, limits: [1/s]}\n", "  - {name: a, limits: [2/s, 10/m], algorithm: sliding-window}\n",
			[]string{"~ policy a", "    algorithm: gcra -> sliding-window", "    limits: [1/s] -> [2/s, 10/m]"}},
		{"burst", "  - {name: a, limits: [1/s]}\n", "  - {name: a, limits: [1/s burst 5]}\n",
			[]string{"~ policy a", "    limits: [1/s] -> [1/s burst 5]"}},
		{"match", "  - {name: a, limits: [1/s], match: {hosts: [x.example], methods: [GET]}}\n",
			"  - {name: a, limits: [1/s], match: {methods: [GET, POST], headers: [{name: X-Beta, present: true}, {name: X-Plan, equals: gold}]}}\n",
			[]string{"~ policy a", "    match.methods: [GET] -> [GET, POST]",
				`    match.headers: added: [{name: X-Beta, present: true}, {name: X-Plan, equals: "gold"}]`,
				"    match.hosts: removed (was [x.example])"}},
		{"key", "  - {name: a, limits: [1/s], key: ip}\n", "  - {name: a, limits: [1/s], key: [ip, {header: X-Tenant}, {jwt_claim: sub}, {context: user}, route, method, framework_ip]}\n",
			[]string{"~ policy a", "    key: ip -> [ip, {header: X-Tenant}, {jwt_claim: sub}, {context: user}, route, method, framework_ip]"}},
		{"behaviour", "  - {name: a, limits: [1/s]}\n", "  - {name: a, limits: [1/s burst 2], cost: 2, fail: closed, dry_run: true, count: failures}\n",
			[]string{"~ policy a", "    limits: [1/s] -> [1/s burst 2]", "    cost: 1 -> 2", "    fail: open -> closed", "    dry_run: false -> true", "    count: all -> failures"}},
		{"tiers", "  - {name: a, tiers: {by: {header: P}, default: f, limits: {f: [1/s], g: [2/s]}}}\n",
			"  - {name: a, tiers: {by: {context: plan}, default: h, limits: {f: [1/s], h: [3/s]}}}\n",
			[]string{"~ policy a", "    tiers.by: {header: P} -> {context: plan}", "    tiers.default: f -> h", "    tiers.h: added: [3/s]", "    tiers.g: removed (was [2/s])"}},
		{"unlimited and replaces", "  - {name: a, limits: [1/s]}\n  - {name: h, limits: [1/s]}\n",
			"  - {name: a, limits: [1/s]}\n  - {name: h, unlimited: true, replaces: [a], match: {paths: [/h]}}\n",
			[]string{"~ policy h", "    match.paths: added: [/h]", "    unlimited: false -> true", "    replaces: added: [a]",
				"    key: removed (was ip)", "    algorithm: removed (was gcra)", "    limits: removed (was [1/s])", "    cost: removed (was 1)",
				"    fail: removed (was open)", "    dry_run: removed (was false)", "    count: removed (was all)"}},
		{"overrides", "  - {name: a, limits: [1/s], overrides: [{key: x, blocked: true}, {key: y, unlimited: true}]}\n",
			"  - {name: a, limits: [1/s], overrides: [{key: x, limits: [9/s]}, {key: \"z\\\"\", blocked: true}]}\n",
			[]string{"~ policy a", `    overrides["x"]: blocked -> [9/s]`, `    overrides["z\""]: added: blocked`, `    overrides["y"]: removed (was unlimited)`}},
		{"order", "  - {name: a, limits: [1/s]}\n  - {name: b, limits: [1/s]}\n", "  - {name: b, limits: [1/s]}\n  - {name: a, limits: [1/s]}\n",
			[]string{"order: a, b -> b, a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, want := parseDoc(t, base+tt.old), parseDoc(t, base+tt.want)
			got := diffDocuments(old, want)
			if tt.lines != nil {
				digests := "digest: " + rules.ShortDigest(old.Digest()) + " -> " + rules.ShortDigest(want.Digest())
				tt.lines = append(append([]string{digests}, tt.lines...), "note: version 1 is not newer than the stored 1: raise it, or rules push refuses the file")
			}
			assert.Equal(t, tt.lines, got)
		})
	}
}

// Versions and schema differences lead; nothing held means every policy is
// added.
func TestDiffDocumentsVersions(t *testing.T) {
	t.Parallel()
	v1 := parseDoc(t, "schema: 1\nversion: 1\npolicies:\n  - {name: a, limits: [1/s]}\n")
	v2 := parseDoc(t, "schema: 1\nversion: 2\npolicies:\n  - {name: a, limits: [1/s]}\n")
	assert.Equal(t, []string{"version: 1 -> 2"}, diffDocuments(v1, v2), "the same rules: the same digest")
	assert.Equal(t, []string{"version: 2 -> 1", "note: version 1 is not newer than the stored 2: raise it, or rules push refuses the file"}, diffDocuments(v2, v1))
	assert.Equal(t, []string{"+ policy a", "    key: ip", "    algorithm: gcra", "    limits: [1/s]", "    cost: 1",
		"    fail: open", "    dry_run: false", "    count: all", "    unlimited: false"}, diffDocuments(nil, v1))
}
