package rules

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
)

// digestBase is the document the digest tests edit.
const digestBase = `schema: 1
version: 4
defaults: {algorithm: gcra, key: ip}
policies:
  - name: login
    match: {methods: [POST], paths: [/login], headers: [{name: X-Env, equals: prod}]}
    limits: [5/m]
    count: failures
  - name: api
    match: {prefixes: [/api]}
    key: {header: X-API-Key}
    tiers:
      by: {header: X-Plan}
      default: free
      limits: {free: [10/s], paid: [100/s burst 200]}
    overrides:
      - {key: partner, limits: [1000/s]}
      - {key: leaked, blocked: true}
  - name: health
    match: {paths: [/healthz]}
    unlimited: true
    replaces: [api]
`

func mustDigest(t *testing.T, raw string) string {
	t.Helper()
	doc, err := Parse([]byte(raw), "rules.yaml")
	require.NoError(t, err)
	return doc.Digest()
}

// The digest is the rules', not the text's: comments, layout, key order,
// JSON or YAML, a defaults block or the values written out, a burst written
// as the rate, and the version leave it; every change of what a policy does
// changes it.
func TestDigestIsTheRules(t *testing.T) {
	base := mustDigest(t, digestBase)
	assert.Len(t, base, 64)
	assert.Equal(t, strings.ToLower(base), base)

	same := map[string]string{
		"comments and layout": strings.ReplaceAll(strings.Replace(digestBase, "policies:\n", "# the policies\npolicies:   \n", 1), "    limits: [5/m]\n", "    limits:\n      - 5/m   # five a minute\n"),
		"another version":     strings.Replace(digestBase, "version: 4", "version: 5", 1),
		"key order":           strings.Replace(digestBase, "    limits: [5/m]\n    count: failures\n", "    count: failures\n    limits: [5/m]\n", 1),
		"defaults written out": strings.NewReplacer("defaults: {algorithm: gcra, key: ip}\n", "",
			"  - name: login\n", "  - name: login\n    algorithm: gcra\n    key: ip\n",
			"  - name: api\n", "  - name: api\n    algorithm: gcra\n",
			"  - name: health\n", "  - name: health\n    algorithm: gcra\n    key: ip\n").Replace(digestBase),
		"burst written":  strings.Replace(digestBase, "[10/s]", "[10/s burst 10]", 1),
		"period spelled": strings.Replace(digestBase, "[5/m]", "[5/60s]", 1),
	}
	for name, raw := range same {
		assert.Equal(t, base, mustDigest(t, raw), name)
	}
	differ := map[string]string{
		"a limit":        strings.Replace(digestBase, "[5/m]", "[6/m]", 1),
		"a burst":        strings.Replace(digestBase, "burst 200", "burst 201", 1),
		"the algorithm":  strings.Replace(digestBase, "algorithm: gcra", "algorithm: token-bucket", 1),
		"a match":        strings.Replace(digestBase, "[/login]", "[/signin]", 1),
		"a header value": strings.Replace(digestBase, "equals: prod", "equals: staging", 1),
		"the count":      strings.Replace(digestBase, "    count: failures\n", "", 1),
		"a key":          strings.Replace(digestBase, "{header: X-API-Key}", "{header: X-Key}", 1),
		"a tier":         strings.Replace(digestBase, "default: free", "default: paid", 1),
		"an override":    strings.Replace(digestBase, "blocked: true", "unlimited: true", 1),
		"replaces":       strings.Replace(digestBase, "    replaces: [api]\n", "", 1),
		"policy order": strings.Replace(digestBase, "  - name: login\n    match: {methods: [POST], paths: [/login], headers: [{name: X-Env, equals: prod}]}\n    limits: [5/m]\n    count: failures\n", "", 1) +
			"  - name: login\n    match: {methods: [POST], paths: [/login], headers: [{name: X-Env, equals: prod}]}\n    limits: [5/m]\n    count: failures\n",
		"dry run":  strings.Replace(digestBase, "    count: failures\n", "    count: failures\n    dry_run: true\n", 1),
		"fail":     strings.Replace(digestBase, "    count: failures\n", "    count: failures\n    fail: closed\n", 1),
		"the cost": strings.Replace(digestBase, "    count: failures\n", "    count: failures\n    cost: 2\n", 1),
	}
	seen := map[string]string{base: "base"}
	for name, raw := range differ {
		d := mustDigest(t, raw)
		require.NotContains(t, seen, d, "%s has the digest of %s", name, seen[d])
		seen[d] = name
	}
}

// One document in YAML and in JSON has one digest; the canonical form is
// pinned, since every instance of a fleet (and every version of ratewarden
// in it) must compute the same digest of the same rules.
func TestDigestCanonicalForm(t *testing.T) {
	yml, err := ReadFile("testdata/example.yaml")
	require.NoError(t, err)
	js, err := ReadFile("testdata/example.json")
	require.NoError(t, err)
	assert.Equal(t, yml.Digest(), js.Digest())

	doc, err := Parse([]byte("schema: 1\nversion: 3\npolicies:\n  - name: login\n    match: {methods: [POST], paths: [/login]}\n    limits: [5/m]\n"), "rules.yaml")
	require.NoError(t, err)
	assert.Equal(t, `{"schema":1,"policies":[{"name":"login","match":{"paths":["/login"],"methods":["POST"]},"key":[{"kind":"ip"}],"algorithm":"gcra","limits":[{"rate":5,"period_ns":60000000000,"burst":5}],"cost":1}]}`,
		string(doc.canonical()))
	assert.Equal(t, "9b9ee9f885b80dffd2ff0e6f0971c83da8f23cc4f454423c6a86d77ebb4885d1", doc.Digest())

	built := &Document{Schema: 1, Version: 3, Policies: []Policy{{
		Name: "login", Match: Match{Methods: []string{"POST"}, Paths: []string{"/login"}},
		Key: Key{Parts: []KeyPart{{Kind: KeyIP}}}, Algorithm: core.GCRA, Cost: 1,
		Limits: []core.Limit{{Rate: 5, Period: time.Minute}}, // Burst 0: the rate
	}}}
	assert.Equal(t, doc.Digest(), built.Digest(), "a document built in Go, positions and all left out")
}

// digestFields are the fields of the document's types the canonical form
// writes (or leaves out on purpose: positions). A field added to one of the
// types fails this test until canonical writes it: otherwise two documents
// differing in it would share a digest.
var digestFields = map[reflect.Type][]string{
	reflect.TypeFor[Document]():    {"Schema", "Version", "Policies"},
	reflect.TypeFor[Policy]():      {"Name", "Pos", "Match", "Key", "Algorithm", "Limits", "Tiers", "Cost", "FailClosed", "DryRun", "CountFailuresOnly", "Unlimited", "Replaces", "Overrides", "TimeZone", "AnchorDay", "BlockFor", "Settle", "Concurrency", "ConcurrencyQueue", "ConcurrencyWait", "TokenLease"},
	reflect.TypeFor[Match]():       {"Paths", "Prefixes", "Methods", "Hosts", "Headers"},
	reflect.TypeFor[HeaderMatch](): {"Name", "Value", "Present"},
	reflect.TypeFor[Key]():         {"Parts"},
	reflect.TypeFor[KeyPart]():     {"Kind", "Name"},
	reflect.TypeFor[Tiers]():       {"By", "Default", "Levels"},
	reflect.TypeFor[Tier]():        {"Name", "Limits"},
	reflect.TypeFor[Override]():    {"Key", "Limits", "Unlimited", "Blocked", "Pos"},
	reflect.TypeFor[Settle]():      {"Header", "Reserve", "Debt"},
	reflect.TypeFor[Settle]():      {"Header", "Reserve", "Debt"},
	reflect.TypeFor[core.Limit]():  {"Rate", "Period", "Burst", "Name", "Calendar", "Zone", "AnchorDay"},
}

func TestDigestCoversEveryField(t *testing.T) {
	for typ, want := range digestFields {
		var got []string
		for f := range typ.Fields() {
			got = append(got, f.Name)
		}
		assert.True(t, slices.Equal(want, got), "%s has the fields %v; canonical (doc_digest.go) knows %v: add the new ones to the canonical form", typ, got, want)
	}
	assert.Len(t, keyKindNames, int(KeyMethod), "every key kind has a canonical name")
}

// Every testdata document has a digest, and parsing it again gives the same.
func TestDigestStable(t *testing.T) {
	entries, err := os.ReadDir("testdata")
	require.NoError(t, err)
	for _, e := range entries {
		doc, err := ReadFile("testdata/" + e.Name())
		if err != nil {
			continue // not a valid document
		}
		again, err := ReadFile("testdata/" + e.Name())
		require.NoError(t, err)
		assert.Equal(t, doc.Digest(), again.Digest(), e.Name())
		assert.True(t, isDigest(doc.Digest()), e.Name())
	}
}

// BenchmarkDigest1000 is the digest of a 1,000-policy document: what a
// reload adds to its parse, validation and compile.
func BenchmarkDigest1000(b *testing.B) {
	var src strings.Builder
	src.WriteString("schema: 1\nversion: 1\npolicies:\n")
	for i := range 1000 {
		fmt.Fprintf(&src, "  - {name: p%d, match: {paths: [\"/api/v1/r%d/{id}\"], methods: [GET, HEAD]}, key: {header: X-API-Key}, limits: [10/s, 1000/h]}\n", i, i)
	}
	doc, err := Parse([]byte(src.String()), "bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = doc.Digest()
	}
}
