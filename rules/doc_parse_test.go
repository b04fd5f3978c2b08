package rules

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
)

// limits parses limit strings for expected values; a typo in a test is a
// test failure.
func limits(t *testing.T, ss ...string) []core.Limit {
	t.Helper()
	out := make([]core.Limit, len(ss))
	for i, s := range ss {
		l, err := core.ParseLimit(s)
		require.NoError(t, err)
		out[i] = l
	}
	return out
}

// policy returns a policy as the library's defaults leave it, changed by
// set.
func policy(name string, line, col int, set func(p *Policy)) Policy {
	p := libraryDefaults()
	p.Name, p.Pos = name, Pos{Line: line, Column: col}
	if set != nil {
		set(&p)
	}
	return p
}

var (
	ipKey     = Key{Parts: []KeyPart{{Kind: KeyIP}}}
	apiKeyKey = Key{Parts: []KeyPart{{Kind: KeyHeader, Name: "X-API-Key"}}}
)

// exampleDocument is docs/rules.md's example, as Parse reads
// testdata/example.yaml.
func exampleDocument(t *testing.T) *Document {
	return &Document{Schema: 1, Version: 7, Policies: []Policy{
		policy("login", 8, 5, func(p *Policy) {
			p.Match = Match{Methods: []string{"POST"}, Paths: []string{"/login"}}
			p.Limits = limits(t, "5/m")
			p.CountFailuresOnly = true
		}),
		policy("api", 13, 5, func(p *Policy) {
			p.Match = Match{Prefixes: []string{"/api"}}
			p.Key = apiKeyKey
			p.Tiers = &Tiers{By: KeyPart{Kind: KeyHeader, Name: "X-Plan"}, Default: "free", Levels: []Tier{
				{Name: "free", Limits: limits(t, "100/s")},
				{Name: "paid", Limits: limits(t, "1000/s")},
			}}
			p.Limits = limits(t, "100/s")
			p.Overrides = []Override{
				{Key: "key-of-a-partner", Limits: limits(t, "5000/s"), Pos: Pos{23, 9}},
				{Key: "key-of-our-monitoring", Unlimited: true, Pos: Pos{24, 9}},
				{Key: "key-that-leaked", Blocked: true, Pos: Pos{25, 9}},
			}
		}),
		policy("api-writes", 26, 5, func(p *Policy) {
			p.Match = Match{Prefixes: []string{"/api"}, Methods: []string{"POST", "PUT", "PATCH", "DELETE"}}
			p.Key = apiKeyKey
			p.Limits = limits(t, "10/s", "1000/h")
			p.DryRun = true
		}),
		policy("health", 31, 5, func(p *Policy) {
			p.Match = Match{Paths: []string{"/healthz"}}
			p.Unlimited = true
			p.Replaces = []string{"api", "api-writes"}
		}),
	}}
}

// everythingDocument is testdata/everything.yaml as Parse reads it.
func everythingDocument(t *testing.T) *Document {
	admin := Match{
		Paths:    []string{"/api/items/{id}", "/static/{rest...}"},
		Prefixes: []string{"/admin", "/v1/"},
		Methods:  []string{"GET", "POST"},
		Hosts:    []string{"api.example.com", "[2001:db8::1]"},
		Headers:  []HeaderMatch{{Name: "X-Debug", Present: true}, {Name: "X-Env", Value: "staging"}},
	}
	defaults := func(p *Policy) {
		p.Key = Key{Parts: []KeyPart{{Kind: KeyIP}, {Kind: KeyHeader, Name: "X-Tenant"}}}
		p.Algorithm = core.TokenBucket
		p.FailClosed, p.DryRun, p.CountFailuresOnly, p.Cost = true, true, true, 2
	}
	return &Document{Schema: 1, Version: 16, Policies: []Policy{
		policy("everything", 12, 5, func(p *Policy) {
			p.Match = admin
			p.Key = Key{Parts: []KeyPart{{Kind: KeyRoute}, {Kind: KeyMethod}, {Kind: KeyFrameworkIP},
				{Kind: KeyJWTClaim, Name: "sub"}, {Kind: KeyContext, Name: "user"}}}
			p.Algorithm = core.LeakyBucket
			p.Limits = limits(t, "100/m", "10/s burst 20")
			p.Replaces = []string{"defaults-only"}
			p.Overrides = []Override{
				{Key: "12345", Limits: limits(t, "1/s"), Pos: Pos{30, 9}},
				{Key: "monitor", Unlimited: true, Pos: Pos{31, 9}},
				{Key: "abuser", Blocked: true, Pos: Pos{32, 9}},
			}
			p.Cost = 0
		}),
		policy("defaults-only", 33, 5, func(p *Policy) {
			defaults(p)
			p.Limits = limits(t, "1000/h")
		}),
		policy("tiered", 35, 5, func(p *Policy) {
			defaults(p)
			p.Match = admin
			p.Match.Methods = []string{"DELETE"}
			p.Tiers = &Tiers{By: KeyPart{Kind: KeyJWTClaim, Name: "plan"}, Default: "free", Levels: []Tier{
				{Name: "free", Limits: limits(t, "5/30s")},
				{Name: "pro", Limits: limits(t, "100/m", "10/s burst 20")},
			}}
			p.Limits = limits(t, "5/30s")
		}),
	}}
}

func TestParseTestdata(t *testing.T) {
	tests := []struct {
		file string
		want func(*testing.T) *Document
	}{
		{"example.yaml", exampleDocument},
		{"everything.yaml", everythingDocument},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile("testdata/" + tt.file)
			require.NoError(t, err)
			doc, err := Parse(data, tt.file)
			require.NoError(t, err)
			assert.Equal(t, tt.want(t), doc)
			require.NoError(t, doc.Validate(), "what Parse returns passes Validate")
		})
	}
}

// JSON is read as the YAML it is: the JSON example decodes to the YAML
// example's document, positions aside.
func TestParseJSONEqualsYAML(t *testing.T) {
	data, err := os.ReadFile("testdata/example.json")
	require.NoError(t, err)
	doc, err := Parse(data, "example.json")
	require.NoError(t, err)
	want := exampleDocument(t)
	require.Len(t, doc.Policies, len(want.Policies))
	for i := range doc.Policies {
		doc.Policies[i].Pos, want.Policies[i].Pos = Pos{}, Pos{}
		for j := range doc.Policies[i].Overrides {
			doc.Policies[i].Overrides[j].Pos, want.Policies[i].Overrides[j].Pos = Pos{}, Pos{}
		}
	}
	assert.Equal(t, want, doc)
	assert.Equal(t, Pos{Line: 13, Column: 5}, mustParse(t, string(data)).Policies[1].Pos, "JSON has positions too")
}

func mustParse(t *testing.T, doc string) *Document {
	t.Helper()
	d, err := Parse([]byte(doc), "test.yaml")
	require.NoError(t, err)
	return d
}

// head is the start of a valid document, for tests to add policies to.
const head = "schema: 1\nversion: 1\npolicies:\n"

// validForms are policies (flow mappings) Parse reads, and what it reads.
var validForms = []struct {
	name   string
	policy string // one policy, as a flow mapping
	check  func(t *testing.T, p Policy)
}{
	{"library defaults", "{name: a, limits: [1/s]}", func(t *testing.T, p Policy) {
		assert.Equal(t, policy("a", 4, 5, func(p *Policy) { p.Limits = limits(t, "1/s") }), p)
	}},
	{"key word ip", "{name: a, limits: [1/s], key: ip}", func(t *testing.T, p Policy) {
		assert.Equal(t, ipKey, p.Key)
	}},
	{"key word framework_ip", "{name: a, limits: [1/s], key: framework_ip}", func(t *testing.T, p Policy) {
		assert.Equal(t, Key{Parts: []KeyPart{{Kind: KeyFrameworkIP}}}, p.Key)
	}},
	{"key of one header in a list", "{name: a, limits: [1/s], key: [{header: X-K}]}", func(t *testing.T, p Policy) {
		assert.Equal(t, Key{Parts: []KeyPart{{Kind: KeyHeader, Name: "X-K"}}}, p.Key)
	}},
	{"algorithm in any case", "{name: a, limits: [1/s], algorithm: SLIDING_WINDOW}", func(t *testing.T, p Policy) {
		assert.Equal(t, core.SlidingWindow, p.Algorithm)
	}},
	{"odd period and burst", "{name: a, limits: ['100/1m30s burst 7', 5/d]}", func(t *testing.T, p Policy) {
		assert.Equal(t, limits(t, "100/90s burst 7", "5/24h"), p.Limits)
	}},
	{"a name YAML reads as a number", "{name: 2024, limits: [1/s]}", func(t *testing.T, p Policy) {
		assert.Equal(t, "2024", p.Name)
	}},
	{"cost in YAML's integer forms", "{name: a, limits: [1000/s], cost: 1_0}", func(t *testing.T, p Policy) {
		assert.Equal(t, int64(10), p.Cost)
	}},
	{"empty match", "{name: a, limits: [1/s], match: {}}", func(t *testing.T, p Policy) {
		assert.Equal(t, Match{}, p.Match)
	}},
	{"null match and lists", "{name: a, limits: [1/s], match: ~, replaces: ~, overrides: ~}", func(t *testing.T, p Policy) {
		assert.Equal(t, Match{}, p.Match)
		assert.Nil(t, p.Replaces)
		assert.Nil(t, p.Overrides)
	}},
	{"methods upper, hosts lower", "{name: a, limits: [1/s], match: {methods: [get], hosts: [Example.COM, '::1']}}", func(t *testing.T, p Policy) {
		assert.Equal(t, []string{"GET"}, p.Match.Methods)
		assert.Equal(t, []string{"example.com", "::1"}, p.Match.Hosts)
	}},
	{"override key written as a number", "{name: a, limits: [1/s], overrides: [{key: 0042, blocked: true}]}", func(t *testing.T, p Policy) {
		assert.Equal(t, "0042", p.Overrides[0].Key, "the key as written, not the number")
	}},
	{"unlimited false with limits", "{name: a, limits: [1/s], unlimited: false}", func(t *testing.T, p Policy) {
		assert.False(t, p.Unlimited)
	}},
	{"override unlimited false beside limits", "{name: a, limits: [1/s], overrides: [{key: k, limits: [2/s], unlimited: false}]}", func(t *testing.T, p Policy) {
		assert.Equal(t, limits(t, "2/s"), p.Overrides[0].Limits)
	}},
}

func TestParseValidForms(t *testing.T) {
	for _, tt := range validForms {
		t.Run(tt.name, func(t *testing.T) {
			doc := mustParse(t, head+"  - "+tt.policy+"\n")
			require.Len(t, doc.Policies, 1)
			tt.check(t, doc.Policies[0])
			require.NoError(t, doc.Validate())
		})
	}
}

func TestParseDocumentForms(t *testing.T) {
	tests := []struct {
		name string
		doc  string
	}{
		{"a trailing document marker", head + "  - {name: a, limits: [1/s]}\n---\n"},
		{"an end marker", head + "  - {name: a, limits: [1/s]}\n...\n"},
		{"a start marker", "---\n" + head + "  - {name: a, limits: [1/s]}\n"},
		{"comments", "# rules\n" + head + "  # the one policy\n  - {name: a, limits: [1/s]} # here\n"},
		{"fields in any order", "policies: [{limits: [1/s], name: a}]\nversion: 1\nschema: 1\n"},
		{"defaults after policies", "schema: 1\nversion: 1\npolicies: [{name: a, limits: [1/s]}]\ndefaults: {cost: 1}\n"},
		{"a byte order mark", "\ufeff" + head + "  - {name: a, limits: [1/s]}\n"},
		{"CRLF line ends", strings.ReplaceAll(head+"  - {name: a, limits: [1/s]}\n", "\n", "\r\n")},
		{"a quoted flow document", `{"schema": 1, "version": 1, "policies": [{"name": "a", "limits": ["1/s"]}]}`},
		{"tab-free JSON with spaces", "{ \"schema\" : 1 , \"version\" : 1 , \"policies\" : [ { \"name\" : \"a\" , \"limits\" : [ \"1/s\" ] } ] }"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := mustParse(t, tt.doc)
			require.Len(t, doc.Policies, 1)
			assert.Equal(t, "a", doc.Policies[0].Name)
			assert.Equal(t, limits(t, "1/s"), doc.Policies[0].Limits)
		})
	}
}

// Defaults apply to every policy that does not set the field itself, and a
// policy's own value wins.
func TestParseDefaults(t *testing.T) {
	doc := mustParse(t, `schema: 1
version: 1
defaults: {algorithm: fixed-window, key: {header: X-K}, fail: closed, dry_run: true, count: failures, cost: 3}
policies:
  - {name: takes-all, limits: [10/s]}
  - {name: sets-all, limits: [10/s burst 20], algorithm: gcra, key: ip, fail: open, dry_run: false, count: all, cost: 1}
  - {name: takes-all-too, limits: [10/s]}
`)
	takes, sets := doc.Policies[0], doc.Policies[1]
	assert.Equal(t, core.FixedWindow, takes.Algorithm)
	assert.Equal(t, Key{Parts: []KeyPart{{Kind: KeyHeader, Name: "X-K"}}}, takes.Key)
	assert.True(t, takes.FailClosed)
	assert.True(t, takes.DryRun)
	assert.True(t, takes.CountFailuresOnly)
	assert.Equal(t, int64(3), takes.Cost)

	assert.Equal(t, core.GCRA, sets.Algorithm)
	assert.Equal(t, ipKey, sets.Key)
	assert.False(t, sets.FailClosed)
	assert.False(t, sets.DryRun)
	assert.False(t, sets.CountFailuresOnly)
	assert.Equal(t, int64(1), sets.Cost)

	doc.Policies[2].Key.Parts[0].Name = "changed"
	assert.Equal(t, "X-K", doc.Policies[0].Key.Parts[0].Name, "policies do not share the defaults' slices")
}
