package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse feeds Parse anything: it never panics; a document it returns
// passes Validate again and builds a selector; an error is a *Problems whose
// every problem has a line, and whose text stays bounded.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("testdata/*")
	require.NoError(f, err)
	for _, name := range files {
		data, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"~",
		"[]",
		head + "  - {name: a, limits: [1/s]}\n",
		head + "  - {name: a, tiers: {by: {header: X}, default: f, limits: {f: [1/s], g: [2/m]}}}\n",
		head + "  - {name: a, unlimited: true, replaces: [b]}\n  - {name: b, limits: [1/s], match: {paths: ['/a/{id}']}}\n",
		head + "  - {name: a, limits: [1/s], replaces: [b]}\n  - {name: b, limits: [1/s], replaces: [a]}\n",
		head + "  - {name: a, limits: &l [1/s], overrides: [{key: k, limits: *l}, {key: j, blocked: true}]}\n",
		head + "  - &p {name: a, limits: [1/s]}\n  - {<<: *p, name: b}\n",
		"schema: 2\nversion: 1\n",
		"x: &a [*a]\n",
		"a: &a [1,1]\nb: &b [*a,*a]\nc: &c [*b,*b]\n",
		head + "  - {name: a, limits: [1/s], match: {hosts: ['[::1]'], headers: [{name: X, present: true}]}}\n",
		"{\"schema\": 1, \"version\": 1, \"policies\": [{\"name\": \"a\", \"limits\": [\"1/s burst 3\"]}]}",
		"schema: 1\nversion: 1\npolicies:\n- name: a\n  limits: [1/s]\n---\n- b\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Parse(data, "fuzz.yaml")
		if err == nil {
			require.NotNil(t, doc)
			require.NoError(t, doc.Validate(), "what Parse returns passes Validate")
			_, err := newSelector(doc.Policies)
			require.NoError(t, err, "what Parse returns, the matcher takes")
			return
		}
		require.Nil(t, doc)
		require.ErrorIs(t, err, ErrInvalidRules)
		var ps *Problems
		require.ErrorAs(t, err, &ps)
		require.NotEmpty(t, ps.List)
		require.LessOrEqual(t, len(ps.List), MaxProblems)
		for _, p := range ps.List {
			require.GreaterOrEqual(t, p.Pos.Line, 1, "%s", p)
			require.LessOrEqual(t, len(p.Message), maxMessage+3)
			require.NotContains(t, p.Message, "\n"+"fuzz.yaml:", "one problem, one line")
		}
		require.True(t, strings.HasPrefix(err.Error(), "fuzz.yaml:"))
	})
}
