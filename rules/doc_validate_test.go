package rules

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
)

// goDocument is a valid document built in Go, as a user hands one to New.
func goDocument() *Document {
	return &Document{Schema: SchemaVersion, Version: 1, Policies: []Policy{
		{Name: "api", Pos: Pos{3, 5}, Match: Match{Prefixes: []string{"/api"}}, Key: ipKey, Algorithm: core.GCRA,
			Limits: []core.Limit{core.PerSecond(10)}, Cost: 1,
			Overrides: []Override{{Key: "k", Blocked: true, Pos: Pos{9, 9}}}},
		{Name: "health", Pos: Pos{6, 5}, Match: Match{Paths: []string{"/healthz"}}, Algorithm: core.GCRA, Unlimited: true, Replaces: []string{"api"}},
	}}
}

func TestValidateAcceptsAGoDocument(t *testing.T) {
	require.NoError(t, goDocument().Validate())
	doc := goDocument()
	doc.Policies[0].Key = Key{} // no parts: the ip key, as compile reads it
	require.NoError(t, doc.Validate())
}

// goDocumentProblems are changes to goDocument, and the first problem
// Validate reports of each.
var goDocumentProblems = []struct {
	name   string
	change func(d *Document)
	want   want
}{
	{"schema 0", func(d *Document) { d.Schema = 0 }, want{"0:0", "schema", "schema 0: this library reads schema 1"}},
	{"a newer schema", func(d *Document) { d.Schema = 2 }, want{"0:0", "schema", "written for rules schema 2"}},
	{"version 0", func(d *Document) { d.Version = 0 }, want{"0:0", "version", "version 0"}},
	{"no policies", func(d *Document) { d.Policies = nil }, want{"0:0", "policies", "no policies"}},
	{"too many policies", func(d *Document) {
		d.Policies = make([]Policy, MaxPolicies+1)
	}, want{"0:0", "policies", "10001 policies: a document may have at most 10000"}},
	{"too many overrides", func(d *Document) {
		d.Policies[0].Overrides = make([]Override, MaxOverrides+1)
	}, want{"0:0", "policies", "100001 overrides: a document may have at most 100000"}},
	{"no name", func(d *Document) { d.Policies[0].Name = "" }, want{"3:5", "policies[0].name", "a policy needs a name"}},
	{"an invalid algorithm", func(d *Document) { d.Policies[0].Algorithm = 0 }, want{"3:5", "policies[0].algorithm", "ratewarden: invalid algorithm: 0"}},
	{"an invalid limit", func(d *Document) { d.Policies[0].Limits = []core.Limit{{Rate: 0, Period: time.Second}} }, want{"3:5", "policies[0].limits[0]", "rate must be positive"}},
	{"a bad limit name", func(d *Document) { d.Policies[0].Limits[0].Name = `a"b` }, want{"3:5", "policies[0].limits[0]", "may not hold quotes"}},
	{"a lower-case method", func(d *Document) { d.Policies[0].Match.Methods = []string{"get"} }, want{"3:5", "policies[0].match.methods[0]", `method "get": methods are upper case`}},
	{"an upper-case host", func(d *Document) { d.Policies[0].Match.Hosts = []string{"A.example"} }, want{"3:5", "policies[0].match.hosts[0]", "hosts are lower case"}},
	{"a header present and equal", func(d *Document) {
		d.Policies[0].Match.Headers = []HeaderMatch{{Name: "X", Value: "v", Present: true}}
	}, want{"3:5", "policies[0].match.headers[0]", "present or equals a value, not both"}},
	{"a key kind out of range", func(d *Document) { d.Policies[0].Key = Key{Parts: []KeyPart{{Kind: 99}}} }, want{"3:5", "policies[0].key", "unknown key kind 99"}},
	{"a named ip key", func(d *Document) { d.Policies[0].Key = Key{Parts: []KeyPart{{Kind: KeyIP, Name: "x"}}} }, want{"3:5", "policies[0].key", `takes no name (got "x")`}},
	{"a composed key with an empty claim", func(d *Document) {
		d.Policies[0].Key = Key{Parts: []KeyPart{{Kind: KeyIP}, {Kind: KeyJWTClaim}}}
	}, want{"3:5", "policies[0].key[1].jwt_claim", "the jwt_claim name is empty"}},
	{"tiers whose limits are not Limits", func(d *Document) {
		d.Policies[0].Tiers = &Tiers{By: KeyPart{Kind: KeyHeader, Name: "X"}, Default: "f", Levels: []Tier{{Name: "f", Limits: []core.Limit{core.PerSecond(1)}}}}
	}, want{"3:5", "policies[0].tiers.limits", "a tiered policy's Limits are its default tier's"}},
	{"a duplicate tier", func(d *Document) {
		lv := Tier{Name: "f", Limits: d.Policies[0].Limits}
		d.Policies[0].Tiers = &Tiers{By: KeyPart{Kind: KeyContext, Name: "plan"}, Default: "f", Levels: []Tier{lv, lv}}
	}, want{"3:5", "policies[0].tiers.limits.f", `duplicate tier "f"`}},
	{"tiers by the ip", func(d *Document) {
		d.Policies[0].Tiers = &Tiers{By: KeyPart{Kind: KeyIP}, Default: "f", Levels: []Tier{{Name: "f", Limits: d.Policies[0].Limits}}}
	}, want{"3:5", "policies[0].tiers.by", "tiers are picked by a header, a JWT claim or a context value"}},
	{"a tier without limits", func(d *Document) {
		d.Policies[0].Limits = nil
		d.Policies[0].Tiers = &Tiers{By: KeyPart{Kind: KeyHeader, Name: "X"}, Default: "f", Levels: []Tier{{Name: "f"}}}
	}, want{"3:5", "policies[0].tiers.limits.f", "no limits"}},
	{"tiers without levels", func(d *Document) {
		d.Policies[0].Tiers = &Tiers{By: KeyPart{Kind: KeyHeader, Name: "X"}, Default: "f"}
	}, want{"3:5", "policies[0].tiers.limits", "no tiers"}},
	{"an override at its own position", func(d *Document) { d.Policies[0].Overrides[0].Blocked = false }, want{"9:9", "policies[0].overrides[0]", "exactly one of limits"}},
	{"a duplicate override", func(d *Document) {
		d.Policies[0].Overrides = append(d.Policies[0].Overrides, Override{Key: "k", Unlimited: true, Pos: Pos{10, 9}})
	}, want{"10:9", "policies[0].overrides[1].key", `duplicate override key "k" (first at 9:9)`}},
	{"an unreachable policy", func(d *Document) { d.Policies[1].Match = Match{} }, want{"3:5", "policies[0]", `unreachable: policy "health"`}},
	{"a duplicate name", func(d *Document) { d.Policies[1].Name = "api"; d.Policies[1].Replaces = nil }, want{"6:5", "policies[1].name", `duplicate policy name "api" (first at 3:5)`}},
}

// Validate checks what a Go program can get wrong and Parse cannot produce,
// at the positions the policies and overrides hold.
func TestValidateProblemsOfAGoDocument(t *testing.T) {
	for _, tt := range goDocumentProblems {
		t.Run(tt.name, func(t *testing.T) {
			doc := goDocument()
			tt.change(doc)
			err := doc.Validate()
			require.Error(t, err)
			var ps *Problems
			require.ErrorAs(t, err, &ps)
			require.NotEmpty(t, ps.List)
			p := ps.List[0]
			assert.Equal(t, tt.want.pos, p.Pos.String(), err.Error())
			assert.Equal(t, tt.want.path, p.Path, err.Error())
			assert.Contains(t, p.Message, tt.want.msg)
			assert.ErrorIs(t, err, ErrInvalidRules)
			assert.Empty(t, ps.Source)
		})
	}
}

func TestValidateNilDocument(t *testing.T) {
	var doc *Document
	err := doc.Validate()
	require.ErrorIs(t, err, ErrInvalidRules)
	assert.Equal(t, "no document (nil)", err.Error())
}

// Validate and Parse agree: the problems of a document Parse reads are the
// ones Validate finds in its Go twin, when the decoding itself found none.
func TestValidateAgreesWithParse(t *testing.T) {
	for _, p := range []string{
		"{name: a, algorithm: fixed-window, limits: [10/s burst 20]}",
		"{name: a, limits: [1/s], cost: 5}",
		"{name: a, limits: [1/s], match: {paths: ['/a/{x}/{x}']}}",
		"{name: a, limits: [1/s], replaces: [a]}",
		"{name: a, limits: [1/s], overrides: [{key: '', blocked: true}]}",
	} {
		t.Run(p, func(t *testing.T) {
			_, perr := Parse([]byte(one(p)), "")
			require.Error(t, perr)
			var parsed *Problems
			require.ErrorAs(t, perr, &parsed)

			// The same document, decoded without its values' checks, then validated.
			d := &decoder{}
			top, ok := readYAML(d, []byte(one(p)))
			require.True(t, ok)
			dr := d.document(top)
			require.True(t, d.empty(), "the decoding finds nothing")
			verr := dr.doc.Validate()
			var validated *Problems
			require.ErrorAs(t, verr, &validated)
			require.Len(t, validated.List, len(parsed.List))
			for i := range parsed.List {
				assert.Equal(t, parsed.List[i].Path, validated.List[i].Path)
				assert.Equal(t, parsed.List[i].Message, validated.List[i].Message)
				assert.Equal(t, 4, validated.List[i].Pos.Line, "Validate places problems at the policy or override")
			}
		})
	}
}

func ExampleDocument_Validate() {
	doc := &Document{Schema: SchemaVersion, Version: 1, Policies: []Policy{{
		Name:      "search",
		Algorithm: core.SlidingWindow,
		Key:       Key{Parts: []KeyPart{{Kind: KeyIP}}},
		Limits:    []core.Limit{core.PerSecond(10).WithBurst(20)},
		Cost:      1,
	}}}
	fmt.Println(doc.Validate())
	// Output:
	// policies[0].limits[0]: "10/s burst 20": ratewarden: invalid limit: sliding-window counts Rate per window and takes no burst (got burst 20 for rate 10); use token-bucket, leaky-bucket or gcra for bursts
}
