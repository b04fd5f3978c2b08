package rules

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// aliasBomb is the "billion laughs": nine aliases of nine aliases, nine
// levels deep, 9^9 strings once expanded; yaml.v3 builds it as 90 nodes.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString(head + "  - {name: a, limits: [1/s]}\nx:\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d [", i, i)
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*l%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// many returns n items made by item, one a line.
func many(n int, item func(i int) string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(item(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// TestParseRefusesHostileInput feeds Parse what the issue lists as bad
// input (and more): each gets a clear problem, quickly, and nothing
// panics.
func TestParseRefusesHostileInput(t *testing.T) {
	policy := "  - {name: a, limits: [1/s]}\n"
	big := strings.Repeat("x", 1<<20)
	tests := []struct {
		name string
		doc  string
		pos  string // of the one problem
		msg  string
	}{
		{"10 MB", head + policy + strings.Repeat("#", 10<<20), "1:0", "bytes: the most a rules document may be is 4194304 (4 MiB)"},
		{"one byte too many", head + policy + "#" + strings.Repeat("-", MaxDocumentSize-len(head+policy)), "1:0", "the document is 4194305 bytes"},
		{"10,000 levels deep", head + policy + "x: " + strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000), "5:67", "the document nests mappings and lists more than 64 levels deep"},
		{"100,000 levels deep", head + policy + "x: " + strings.Repeat("{a: ", 100_000) + strings.Repeat("}", 100_000), "5:40004", "not valid YAML: exceeded max depth of 10000"},
		{"65 levels of blocks", head + policy + "x:\n" + many(64, func(i int) string { return strings.Repeat(" ", i+1) + "a:" }), "69:65", "more than 64 levels deep"},
		{"an alias bomb", aliasBomb(), "11:12", "the document's aliases expand to more than 100000 nodes"},
		{"an alias inside its anchor", head + policy + "x: &a [1, *a]\n", "5:11", `an alias of anchor "a" is used inside the node the anchor names`},
		{"a merge key inside its anchor", head + policy + "x: &a {b: 1, <<: *a}\n", "5:18", `an alias of anchor "a" is used inside the node the anchor names`},
		{"a long string used many times", head + policy + "x: [&s " + big + ", *s, *s, *s, *s, *s]\n", "5:1048602", "aliases expand to more than 4194304 bytes of text"},
		{"100,000 policies", "schema: 1\nversion: 1\npolicies: [" + strings.Repeat("{name: p}, ", 100_000) + "]\n", "3:11", "100000 policies: a document may have at most 10000"},
		{"100,001 overrides", head + policy + "  - {name: b, limits: [1/s], overrides: [" + strings.Repeat("{key: k}, ", 100_001) + "]}\n", "5:41", "more than 100000 overrides in the document"},
		{"a newer schema", "schema: 2\nversion: 1\nrules_v2: {}\npolicies: [{name: a, new_field: 1}]\n", "1:9", "written for rules schema 2; this library reads schema 1"},
		{"a 10 KB override key", head + "  - {name: a, limits: [1/s], overrides: [{key: " + strings.Repeat("k", 10<<10) + ", blocked: true}]}\n", "4:48", "a key of 10240 bytes: an override key is at most 256 bytes"},
		{"empty", "", "1:0", "the document is empty"},
		{"blank", " \n\n  \n", "1:0", "the document is empty"},
		{"only comments", "# rules\n# none yet\n", "1:0", "the document is empty"},
		{"only a start marker", "---\n", "1:0", "the document is empty"},
		{"null", "~\n", "1:0", "the document is empty"},
		{"a list", "[schema, version]\n", "1:1", "want a mapping with schema, version and policies, got a list"},
		{"a string", "rules\n", "1:1", "want a mapping with schema, version and policies, got a string"},
		{"two documents", head + policy + "---\n" + head + policy, "6:1", `a second YAML document (after "---")`},
		{"not YAML: an open list", "schema: [1\n", "2:1", "not valid YAML: did not find expected ',' or ']' (while parsing a flow sequence that starts at 1:9)"},
		{"not YAML: an unclosed brace", head + "  - name: a\n    match: {paths: [/a]\n    limits: [1/s]\n", "6:5", "not valid YAML: did not find expected ',' or '}' (while parsing a flow mapping that starts at 5:12)"},
		{"not YAML: a bad indent", head + "  - name: a\n    limits: [1/s]\n     algorithm: gcra\n", "6:6", "not valid YAML: did not find expected key"},
		{"not YAML: a tab", "schema: 1\n\tversion: 1\n", "2:1", "not valid YAML: found a tab character that violates indentation"},
		{"a tab alone", " \n\t\n", "1:0", "the document is empty"},
		{"not YAML: an unknown anchor", "schema: *nothing\n", "1:9", "not valid YAML: unknown anchor 'nothing' referenced"},
		{"not YAML: NUL bytes", "schema: 1\x00\x00", "1:0", "not valid YAML: control characters are not allowed"},
		{"not YAML: not UTF-8", "schema: \xff\xfe\xfd", "1:0", "not valid YAML: invalid leading UTF-8 octet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			doc, err := Parse([]byte(tt.doc), "rules.yaml")
			elapsed := time.Since(start)
			assert.Nil(t, doc)
			var ps *Problems
			require.ErrorAs(t, err, &ps)
			require.ErrorIs(t, err, ErrInvalidRules)
			require.Len(t, ps.List, 1, brief(err.Error()))
			assert.Equal(t, tt.pos, ps.List[0].Pos.String())
			assert.Contains(t, ps.List[0].Message, tt.msg)
			assert.Less(t, len(err.Error()), 1024, "the error stays small whatever the input")
			t.Logf("refused in %v: %s", elapsed, brief(err.Error()))
		})
	}
}

// The bounds are exact: a document at each of them is read (MaxOverrides:
// see TestParseCountsOverridesAcrossPolicies).
func TestParseAcceptsDocumentsAtTheBounds(t *testing.T) {
	policy := "  - {name: a, limits: [1/s]}\n"
	deep := head + "  - name: a\n    limits: [1/s]\n    match: {paths: [/a]}\n" + "x: " // the top mapping and 63 levels in flow
	tests := []struct {
		name string
		doc  string
		err  string // the one problem expected, beside the bound
	}{
		{"exactly MaxDocumentSize", head + policy + strings.Repeat("\n", MaxDocumentSize-len(head+policy)), ""},
		{"64 levels deep", deep + strings.Repeat("[", 63) + strings.Repeat("]", 63), `unknown field "x"`},
		{"MaxPolicies", head + many(MaxPolicies, func(i int) string { return fmt.Sprintf("  - {name: p%d, limits: [1/s]}", i) }), ""},
		{"a key of MaxKeyLength", head + "  - {name: a, limits: [1/s], overrides: [{key: " + strings.Repeat("k", MaxKeyLength) + ", blocked: true}]}\n", ""},
		{"a name of MaxNameLength", head + "  - {name: " + strings.Repeat("n", MaxNameLength) + ", limits: [1/s]}\n", ""},
		{"99,099 nodes through aliases", head + policy + "x: [&n [" + strings.Repeat("1, ", 999) + "1]" + strings.Repeat(", *n", 99) + "]\n", `unknown field "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc), "rules.yaml")
			if tt.err == "" {
				require.NoError(t, err)
				return
			}
			var ps *Problems
			require.ErrorAs(t, err, &ps)
			require.Len(t, ps.List, 1, err.Error())
			assert.Contains(t, ps.List[0].Message, tt.err)
		})
	}
}

// Binary garbage never panics and always yields problems with a line.
func TestParseBinaryGarbage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		buf := make([]byte, 1+rng.IntN(2048))
		for j := range buf {
			buf[j] = byte(rng.UintN(256))
		}
		if i%2 == 1 { // printable garbage gets further into the parser
			for j := range buf {
				buf[j] = " \n-:[]{}&*!|>'\"#%@`,?abcxyz0123456789"[int(buf[j])%37]
			}
		}
		doc, err := Parse(buf, "garbage")
		if err == nil {
			require.NoError(t, doc.Validate())
			continue
		}
		var ps *Problems
		require.ErrorAs(t, err, &ps)
		require.NotEmpty(t, ps.List)
		for _, p := range ps.List {
			require.GreaterOrEqual(t, p.Pos.Line, 1, "%q: %s", buf, p)
		}
	}
}

// A document with more problems than MaxProblems lists MaxProblems and
// counts the rest.
func TestParseCapsTheProblems(t *testing.T) {
	doc := head + many(1500, func(i int) string { return fmt.Sprintf("  - {name: p%d, limits: [1/x]}", i) })
	_, err := Parse([]byte(doc), "rules.yaml")
	var ps *Problems
	require.ErrorAs(t, err, &ps)
	assert.Len(t, ps.List, MaxProblems)
	assert.Equal(t, 500, ps.Omitted)
	assert.True(t, strings.HasSuffix(err.Error(), "\nrules.yaml: and 500 more problems"), err.Error()[len(err.Error())-100:])
}

// MaxOverrides counts the overrides of every policy of the document.
func TestParseCountsOverridesAcrossPolicies(t *testing.T) {
	d := &decoder{overrides: MaxOverrides - 1} // as if earlier policies had that many
	top, ok := readYAML(d, []byte(head+"  - {name: a, limits: [1/s], overrides: [{key: k, blocked: true}]}\n"+
		"  - {name: b, limits: [1/s], overrides: [{key: k, blocked: true}, {key: j, blocked: true}]}\n"))
	require.True(t, ok)
	d.document(top)
	ps := d.problems("rules.yaml")
	require.Len(t, ps.List, 1)
	assert.Equal(t, "5:41: policies[1].overrides: more than 100000 overrides in the document", ps.List[0].String())
}
