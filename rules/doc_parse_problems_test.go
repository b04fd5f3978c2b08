package rules

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// want is one expected problem: its position ("line:col"), path, and a
// fragment of its message.
type want struct{ pos, path, msg string }

// requireProblems checks that err lists exactly the problems wanted, in
// order.
func requireProblems(t *testing.T, err error, wants ...want) {
	t.Helper()
	require.ErrorIs(t, err, ErrInvalidRules)
	var ps *Problems
	require.ErrorAs(t, err, &ps)
	got := make([]string, len(ps.List))
	for i, p := range ps.List {
		got[i] = p.String()
	}
	require.Len(t, ps.List, len(wants), "problems:\n%s", strings.Join(got, "\n"))
	for i, w := range wants {
		p := ps.List[i]
		assert.Equal(t, w.pos, p.Pos.String(), "problem %d: %s", i, got[i])
		assert.Equal(t, w.path, p.Path, "problem %d: %s", i, got[i])
		assert.Contains(t, p.Message, w.msg, "problem %d: %s", i, got[i])
		assert.GreaterOrEqual(t, p.Pos.Line, 1)
	}
}

// one is a document of one policy, written as a flow mapping on line 4.
func one(policy string) string { return head + "  - " + policy + "\n" }

func TestParseProblemsOfFields(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		wants []want
	}{
		{"unknown top-level field", head + "  - {name: a, limits: [1/s]}\nrules: []\n",
			[]want{{"5:1", "", `unknown field "rules" in a rules document (the fields are schema, version, defaults, policies)`}}},
		{"unknown policy field, close to one", one("{name: a, limits: [1/s], dry_rn: true}"),
			[]want{{"4:30", "policies[0]", `unknown field "dry_rn" in a policy (did you mean "dry_run"?)`}}},
		{"a dash for an underscore", one("{name: a, limits: [1/s], dry-run: true}"),
			[]want{{"4:30", "policies[0]", `unknown field "dry-run" in a policy (did you mean "dry_run"?)`}}},
		{"unknown match field", one("{name: a, limits: [1/s], match: {path: [/a]}}"),
			[]want{{"4:38", "policies[0].match", `unknown field "path" in a match (did you mean "paths"?)`}}},
		{"a policy field in defaults", "schema: 1\nversion: 1\ndefaults: {limits: [1/s]}\npolicies: [{name: a, limits: [1/s]}]\n",
			[]want{{"3:12", "defaults", `unknown field "limits" in defaults (the fields are key, algorithm, cost, fail, dry_run, count)`}}},
		{"unknown override field", one("{name: a, limits: [1/s], overrides: [{key: k, limit: [1/s]}]}"),
			[]want{{"4:51", "policies[0].overrides[0]", `unknown field "limit" in an override (did you mean "limits"?)`}}},
		{"unknown tiers field", one("{name: a, tiers: {by: {header: X}, default: f, limits: {f: [1/s]}, levels: 2}}"),
			[]want{{"4:72", "policies[0].tiers", `unknown field "levels" in tiers (the fields are by, default, limits)`}}},
		{"unknown header condition field", one("{name: a, limits: [1/s], match: {headers: [{name: X, value: v}]}}"),
			[]want{{"4:58", "policies[0].match.headers[0]", `unknown field "value" in a header condition (the fields are name, equals, present)`}}},
		{"unknown key part field", one("{name: a, limits: [1/s], key: {headers: X}}"),
			[]want{{"4:36", "policies[0].key", `unknown field "headers" in a key (did you mean "header"?)`}}},
		{"duplicate field", one("{name: a, limits: [1/s], name: b}"),
			[]want{{"4:30", "policies[0]", `duplicate field "name" (first at 4:6)`}}},
		{"a field name that is no string", one("{name: a, limits: [1/s], 5: x}"),
			[]want{{"4:30", "policies[0]", `a field name must be a string, got an integer`}}},
		{"missing top-level fields", "{}\n",
			[]want{{"1:1", "", `missing field "schema"`},
				{"1:1", "", `missing field "version"`},
				{"1:1", "", `missing field "policies"`}}},
		{"missing name", one("{limits: [1/s]}"),
			[]want{{"4:5", "policies[0]", `missing field "name"`}}},
		{"an empty policy", head + "  -\n",
			[]want{{"4:4", "policies[0]", `missing field "name"`},
				{"4:4", "policies[0]", `no limits: write limits, tiers, or unlimited: true`}}},
		{"missing tiers fields", one("{name: a, tiers: {}}"),
			[]want{{"4:22", "policies[0].tiers", `missing field "by"`},
				{"4:22", "policies[0].tiers", `missing field "default"`},
				{"4:22", "policies[0].tiers", `missing field "limits"`}}},
		{"missing override key", one("{name: a, limits: [1/s], overrides: [{blocked: true}]}"),
			[]want{{"4:42", "policies[0].overrides[0]", `missing field "key"`}}},
		{"missing header name", one("{name: a, limits: [1/s], match: {headers: [{present: true}]}}"),
			[]want{{"4:48", "policies[0].match.headers[0]", `missing field "name"`}}},
	}
	runProblems(t, tests)
}

func TestParseProblemsOfTypes(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		wants []want
	}{
		{"a list for a string", one("{name: [a], limits: [1/s]}"),
			[]want{{"4:12", "policies[0].name", `want a string, got a list`}}},
		{"a boolean for a string", one("{name: true, limits: [1/s]}"),
			[]want{{"4:12", "policies[0].name", `want a string, got a boolean`}}},
		{"null for a string", one("{name: ~, limits: [1/s]}"),
			[]want{{"4:12", "policies[0].name", `want a string, got null`}}},
		{"a custom tag", one("{name: !secret a, limits: [1/s]}"),
			[]want{{"4:12", "policies[0].name", `want a string, got a value tagged "!secret"`}}},
		{"a quoted number for a number", "schema: 1\nversion: \"1\"\npolicies: [{name: a, limits: [1/s]}]\n",
			[]want{{"2:10", "version", `want a whole number, got a string`}}},
		{"a fraction for a number", one("{name: a, limits: [1/s], cost: 1.5}"),
			[]want{{"4:36", "policies[0].cost", `want a whole number, got a number`}}},
		{"a number out of range", one("{name: a, limits: [1/s], cost: 9223372036854775808}"),
			[]want{{"4:36", "policies[0].cost", `"9223372036854775808" is out of range`}}},
		{"yes for a boolean", one("{name: a, limits: [1/s], dry_run: yes}"),
			[]want{{"4:39", "policies[0].dry_run", `want true or false, got a string`}}},
		{"a string for a list", one("{name: a, limits: 1/s}"),
			[]want{{"4:23", "policies[0].limits", `want a list of limits such as [100/m], got a string`}}},
		{"a list for a mapping", one("{name: a, limits: [1/s], match: [/a]}"),
			[]want{{"4:37", "policies[0].match", `want a match (a mapping), got a list`}}},
		{"a mapping for the policies", "schema: 1\nversion: 1\npolicies: {name: a}\n",
			[]want{{"3:11", "policies", `want a list of policies, got a mapping`}}},
		{"a scalar for a policy", head + "  - login\n",
			[]want{{"4:5", "policies[0]", `want a policy (a mapping), got a string`}}},
		{"a list of lists of strings", one("{name: a, limits: [1/s], replaces: [[b]]}"),
			[]want{{"4:41", "policies[0].replaces[0]", `want a string, got a list`}}},
		{"a bad merge key", one("{name: a, limits: [1/s], <<: 5}"),
			[]want{{"4:34", "policies[0]", `a merge key (<<) takes a mapping or a list of mappings, got an integer`}}},
	}
	runProblems(t, tests)
}

func TestParseProblemsOfValues(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		wants []want
	}{
		{"schema 0", "schema: 0\nversion: 1\npolicies: [{name: a, limits: [1/s]}]\n",
			[]want{{"1:9", "schema", `schema 0: this library reads schema 1`}}},
		{"version 0", "schema: 1\nversion: 0\npolicies: [{name: a, limits: [1/s]}]\n",
			[]want{{"2:10", "version", `version 0: a document's version is 1 or more`}}},
		{"no policies", "schema: 1\nversion: 1\npolicies: []\n",
			[]want{{"3:11", "policies", `no policies: a document has at least one`}}},
		{"a limit that does not parse", one("{name: a, limits: [1/s, 100/x]}"),
			[]want{{"4:29", "policies[0].limits[1]", `ratewarden: invalid limit: "100/x": period is not a unit (ms, s, m, h, d, or sec, min, hr, hour, day), a multiple of one (30s, 15min, 7d) or a Go duration (1h30m) (want RATE/PERIOD such as 10/s, 100/m or 5/30s)`}}},
		{"a window's burst", one("{name: a, algorithm: fixed-window, limits: [10/s burst 20]}"),
			[]want{{"4:49", "policies[0].limits[0]", `"10/s burst 20": ratewarden: invalid limit: fixed-window counts Rate per window and takes no burst (got burst 20 for rate 10); use token-bucket, leaky-bucket or gcra for bursts`}}},
		{"a window's burst from the defaults", "schema: 1\nversion: 1\ndefaults: {algorithm: sliding_window}\npolicies: [{name: a, limits: [1/s, 10/s burst 20]}]\n",
			[]want{{"4:36", "policies[0].limits[1]", `"10/s burst 20": ratewarden: invalid limit: sliding-window counts Rate per window and takes no burst (got burst 20 for rate 10); use token-bucket, leaky-bucket or gcra for bursts`}}},
		{"a sliding log too fast", one("{name: a, algorithm: sliding-log, limits: [200000/s]}"),
			[]want{{"4:48", "policies[0].limits[0]", `"200000/s": ratewarden: invalid limit: sliding-log keeps one timestamp per admitted request, so its rate is capped at 100000 (got 200000); use sliding-window or gcra`}}},
		{"an unknown algorithm", one("{name: a, algorithm: lru, limits: [1/s]}"),
			[]want{{"4:26", "policies[0].algorithm", `ratewarden: invalid algorithm: "lru" (want one of token-bucket, leaky-bucket, fixed-window, sliding-log, sliding-window, gcra)`}}},
		{"an unknown key", one("{name: a, limits: [1/s], key: user}"),
			[]want{{"4:35", "policies[0].key", `unknown key "user": want ip, framework_ip, route, method, {header: NAME}, {jwt_claim: NAME} or {context: NAME}`}}},
		{"a key part without its name", one("{name: a, limits: [1/s], key: header}"),
			[]want{{"4:35", "policies[0].key", `"header" takes a name: write {header: NAME}`}}},
		{"a key part of two kinds", one("{name: a, limits: [1/s], key: {header: X, context: y}}"),
			[]want{{"4:35", "policies[0].key", `a key part has exactly one of header, jwt_claim and context`}}},
		{"an empty key list", one("{name: a, limits: [1/s], key: []}"),
			[]want{{"4:35", "policies[0].key", `an empty list composes no key: write ip, {header: NAME} or a list of such parts`}}},
		{"a key list in a key list", one("{name: a, limits: [1/s], key: [ip, [route]]}"),
			[]want{{"4:40", "policies[0].key[1]", `a key part cannot be a list`}}},
		{"an empty header key", one("{name: a, limits: [1/s], key: {header: ''}}"),
			[]want{{"4:44", "policies[0].key.header", `the header name is empty`}}},
		{"a header key that is no token", one("{name: a, limits: [1/s], key: {header: 'X Key'}}"),
			[]want{{"4:44", "policies[0].key.header", `header name "X Key" has " ", which an HTTP token cannot hold`}}},
		{"an unknown fail mode", one("{name: a, limits: [1/s], fail: maybe}"),
			[]want{{"4:36", "policies[0].fail", `"maybe" is not one of "open" or "closed"`}}},
		{"an unknown count", one("{name: a, limits: [1/s], count: some}"),
			[]want{{"4:37", "policies[0].count", `"some" is not one of "all" or "failures"`}}},
		{"a bad policy name", one("{name: 'a b', limits: [1/s]}"),
			[]want{{"4:12", "policies[0].name", `policy name "a b": a name has only letters, digits, '-', '_' and '.'`}}},
		{"a long policy name", one("{name: " + strings.Repeat("n", 41) + ", limits: [1/s]}"),
			[]want{{"4:12", "policies[0].name", `policy name "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn" is 41 bytes: the most is 40`}}},
		{"a negative cost", one("{name: a, limits: [1/s], cost: -1}"),
			[]want{{"4:36", "policies[0].cost", `cost -1: what a request spends is 0 or more`}}},
		{"a cost no limit admits", one("{name: a, limits: [5/s, 2/s], cost: 3}"),
			[]want{{"4:29", "policies[0].limits[1]", `"2/s" admits at most 2 at once under gcra, less than the policy's cost 3: every request would be denied`}}},
		{"no limits", one("{name: a}"),
			[]want{{"4:5", "policies[0]", `no limits: write limits, tiers, or unlimited: true`}}},
		{"an empty limits list", one("{name: a, limits: []}"),
			[]want{{"4:23", "policies[0].limits", `no limits: write at least one, such as [100/m]`}}},
		{"limits and tiers", one("{name: a, limits: [1/s], tiers: {by: {header: X}, default: f, limits: {f: [1/s]}}}"),
			[]want{{"4:37", "policies[0].tiers", `limits and tiers exclude each other: a tiered policy's limits are its tiers'`}}},
	}
	runProblems(t, tests)
}

func runProblems(t *testing.T, tests []struct {
	name  string
	doc   string
	wants []want
}) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Parse([]byte(tt.doc), "rules.yaml")
			assert.Nil(t, doc)
			requireProblems(t, err, tt.wants...)
			assert.True(t, strings.HasPrefix(err.Error(), "rules.yaml:"+tt.wants[0].pos+": "), err.Error())
			assert.False(t, errors.Is(err, errors.New("other")))
		})
	}
}

func TestParseProblemsOfMatches(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		wants []want
	}{
		{"a pattern without its slash", one("{name: a, limits: [1/s], match: {paths: [api]}}"), []want{{"4:46", "policies[0].match.paths[0]", `route pattern "api" must start with "/"`}}},
		{"a brace inside a segment", one("{name: a, limits: [1/s], match: {paths: ['/a/{id}x']}}"), []want{{"4:46", "policies[0].match.paths[0]", `route pattern "/a/{id}x": segment "{id}x" has a "{" or "}" outside a whole {name} segment`}}},
		{"a rest that is not last", one("{name: a, limits: [1/s], match: {paths: ['/a/{rest...}/b']}}"), []want{{"4:46", "policies[0].match.paths[0]", `route pattern "/a/{rest...}/b": "{rest...}" must be the last segment: it takes the rest of the path`}}},
		{"a parameter twice", one("{name: a, limits: [1/s], match: {paths: ['/{id}/{id}']}}"), []want{{"4:46", "policies[0].match.paths[0]", `route pattern "/{id}/{id}": parameter name "id" is used twice`}}},
		{"a dot segment", one("{name: a, limits: [1/s], match: {paths: [/a/./b, /a/../b]}}"), []want{{"4:46", "policies[0].match.paths[0]", `route pattern "/a/./b" has a "." segment, which a normal path never has: write the path it stands for`},
			{"4:54", "policies[0].match.paths[1]", `route pattern "/a/../b" has a ".." segment, which a normal path never has: write the path it stands for`}}},
		{"an empty segment", one("{name: a, limits: [1/s], match: {paths: [/a//b]}}"), []want{{"4:46", "policies[0].match.paths[0]", `route pattern "/a//b" has an empty segment ("//"), which a normal path never has`}}},
		{"a prefix with a parameter", one("{name: a, limits: [1/s], match: {prefixes: ['/a/{x}']}}"), []want{{"4:49", "policies[0].match.prefixes[0]", `prefix "/a/{x}": segment "{x}" has a "{" or "}": a prefix is literal (parameters belong in paths' route patterns)`}}},
		{"a prefix without its slash", one("{name: a, limits: [1/s], match: {prefixes: [api, '']}}"), []want{{"4:49", "policies[0].match.prefixes[0]", `prefix "api" must start with "/"`},
			{"4:54", "policies[0].match.prefixes[1]", `prefix is empty: it must start with "/"`}}},
		{"a method that is no token", one("{name: a, limits: [1/s], match: {methods: ['GE T', '']}}"), []want{{"4:48", "policies[0].match.methods[0]", `method "GE T" has " ", which an HTTP token cannot hold`},
			{"4:56", "policies[0].match.methods[1]", `the method is empty`}}},
		{"a host with a port", one("{name: a, limits: [1/s], match: {hosts: ['api.example.com:443', 'a/b', '', '[::1']}}"), []want{{"4:46", "policies[0].match.hosts[0]", `host "api.example.com:443": a host is written without a port (the request's port is ignored)`},
			{"4:69", "policies[0].match.hosts[1]", `host "a/b" has "/", which a host name cannot hold`},
			{"4:76", "policies[0].match.hosts[2]", `the host is empty`},
			{"4:80", "policies[0].match.hosts[3]", `host "[::1": an IPv6 address is written without a port: 2001:db8::1 or [2001:db8::1]`}}},
		{"a header name that is no token", one("{name: a, limits: [1/s], match: {headers: [{name: 'X:Y', present: true}]}}"), []want{{"4:55", "policies[0].match.headers[0].name", `header name "X:Y" has ":", which an HTTP token cannot hold`}}},
		{"present false", one("{name: a, limits: [1/s], match: {headers: [{name: X, present: false}]}}"), []want{{"4:67", "policies[0].match.headers[0].present", `present can only be true (to match a value, write equals)`}}},
		{"equals and present", one("{name: a, limits: [1/s], match: {headers: [{name: X, equals: v, present: true}]}}"), []want{{"4:48", "policies[0].match.headers[0]", `equals and present exclude each other`}}},
		{"an item of the wrong kind drops the list from the checks", one("{name: a, limits: [1/s], match: {paths: [~, '//']}}"), []want{{"4:46", "policies[0].match.paths[0]", `want a string, got null`}}},
	}
	runProblems(t, tests)
}

func TestParseProblemsOfTiersAndOverrides(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		wants []want
	}{
		{"a default that is no tier", one("{name: a, tiers: {by: {header: X}, default: gold, limits: {free: [1/s], paid: [2/s]}}}"), []want{{"4:49", "policies[0].tiers.default", `the default tier "gold" is no tier (the tiers are "free", "paid")`}}},
		{"a duplicate tier", "schema: 1\nversion: 1\npolicies:\n  - name: a\n    tiers:\n      by: {header: X}\n      default: free\n      limits:\n        free: [1/s]\n        free: [2/s]\n", []want{{"10:9", "policies[0].tiers.limits", `duplicate tier "free" (first at 9:9)`}}},
		{"a bad tier name", one("{name: a, tiers: {by: {header: X}, default: 'a b', limits: {'a b': [1/s]}}}"), []want{{"4:72", `policies[0].tiers.limits["a b"]`, `tier name "a b": a name has only letters, digits, '-', '_' and '.'`}}},
		{"tiers picked by a word", one("{name: a, tiers: {by: ip, default: f, limits: {f: [1/s]}}}"), []want{{"4:27", "policies[0].tiers.by", `tiers are picked by {header: NAME}, {jwt_claim: NAME} or {context: NAME}, not a string`}}},
		{"no tiers", one("{name: a, tiers: {by: {header: X}, default: f, limits: {}}}"), []want{{"4:60", "policies[0].tiers.limits", `no tiers: write at least one, such as {free: [100/s]}`}}},
		{"tiers as a list", one("{name: a, tiers: {by: {header: X}, default: f, limits: [1/s]}}"), []want{{"4:60", "policies[0].tiers.limits", `want a mapping of tier names to limits, such as {free: [100/s], paid: [1000/s]}, got a list`}}},
		{"a tier's window with a burst", one("{name: a, algorithm: fixed-window, tiers: {by: {context: plan}, default: f, limits: {f: [1/s], p: [2/s burst 4]}}}"), []want{{"4:104", "policies[0].tiers.limits.p[0]", `"2/s burst 4": ratewarden: invalid limit: fixed-window counts Rate per window and takes no burst (got burst 4 for rate 2); use token-bucket, leaky-bucket or gcra for bursts`}}},
		{"a duplicate override key", "schema: 1\nversion: 1\npolicies:\n  - name: a\n    limits: [1/s]\n    overrides:\n      - {key: k, blocked: true}\n      - {key: k, unlimited: true}\n", []want{{"8:15", "policies[0].overrides[1].key", `duplicate override key "k" (first at 7:15)`}}},
		{"an override key too long", one("{name: a, limits: [1/s], overrides: [{key: " + strings.Repeat("k", MaxKeyLength+1) + ", blocked: true}]}"), []want{{"4:48", "policies[0].overrides[0].key", `a key of 257 bytes: an override key is at most 256 bytes`}}},
		{"an empty override key", one("{name: a, limits: [1/s], overrides: [{key: '', blocked: true}]}"), []want{{"4:48", "policies[0].overrides[0].key", `an override's key is empty`}}},
		{"an override with nothing", one("{name: a, limits: [1/s], overrides: [{key: k}]}"), []want{{"4:42", "policies[0].overrides[0]", `an override has exactly one of limits, unlimited: true and blocked: true`}}},
		{"an override with two treatments", one("{name: a, limits: [1/s], overrides: [{key: k, blocked: true, unlimited: true}]}"), []want{{"4:42", "policies[0].overrides[0]", `an override has exactly one of limits, unlimited: true and blocked: true`}}},
		{"an override's window with a burst", one("{name: a, algorithm: sliding-log, limits: [1/s], overrides: [{key: k, limits: [1/s burst 3]}]}"), []want{{"4:84", "policies[0].overrides[0].limits[0]", `"1/s burst 3": ratewarden: invalid limit: sliding-log counts Rate per window and takes no burst (got burst 3 for rate 1); use token-bucket, leaky-bucket or gcra for bursts`}}},
		{"unlimited with limits", one("{name: a, unlimited: true, limits: [1/s]}"), []want{{"4:40", "policies[0].limits", `an unlimited policy has no limits: remove limits or unlimited`}}},
		{"unlimited with tiers and overrides", one("{name: a, unlimited: true, tiers: {by: {header: X}, default: f, limits: {f: [1/s]}}, overrides: [{key: k, blocked: true}]}"), []want{{"4:39", "policies[0].tiers", `an unlimited policy has no tiers: remove tiers or unlimited`},
			{"4:101", "policies[0].overrides", `an unlimited policy has no overrides: remove overrides or unlimited`}}},
	}
	runProblems(t, tests)
}

func TestParseProblemsAcrossPolicies(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		wants []want
	}{
		{"a duplicate policy name", head + "  - {name: api, limits: [1/s]}\n  - {name: web, limits: [1/s]}\n  - {name: api, limits: [2/s]}\n", []want{{"6:12", "policies[2].name", `duplicate policy name "api" (first at 4:12)`}}},
		{"replaces an unknown policy", one("{name: a, limits: [1/s], replaces: [b]}"), []want{{"4:41", "policies[0].replaces[0]", `no policy is named "b"`}}},
		{"replaces itself", one("{name: a, limits: [1/s], replaces: [a]}"), []want{{"4:41", "policies[0].replaces[0]", `a policy cannot replace itself`}}},
		{"replaces one twice", head + "  - {name: a, limits: [1/s], match: {methods: [GET]}, replaces: [b, b]}\n  - {name: b, limits: [1/s]}\n", []want{{"4:69", "policies[0].replaces[1]", `"b" is listed twice`}}},
		{"replaces in a cycle of two", head + "  - {name: a, limits: [1/s], match: {methods: [GET]}, replaces: [b]}\n  - {name: b, limits: [1/s], match: {methods: [PUT]}, replaces: [a]}\n", []want{{"5:66", "policies[1].replaces[0]", `replaces forms a cycle: "a" -> "b" -> "a"`}}},
		{"replaces in a cycle of three", head + "  - {name: a, limits: [1/s], match: {methods: [GET]}, replaces: [b]}\n  - {name: b, limits: [1/s], match: {methods: [PUT]}, replaces: [c]}\n  - {name: c, limits: [1/s], match: {methods: [POST]}, replaces: [a]}\n", []want{{"6:67", "policies[2].replaces[0]", `replaces forms a cycle: "a" -> "b" -> "c" -> "a"`}}},
		{"an unknown name beside a policy whose name is broken", head + "  - {name: [x], limits: [1/s]}\n  - {name: b, limits: [1/s], replaces: [x]}\n", []want{{"4:12", "policies[0].name", `want a string, got a list`}}},
	}
	runProblems(t, tests)
}
