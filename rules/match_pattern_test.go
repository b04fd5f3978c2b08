package rules

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePatternValid(t *testing.T) {
	lit := func(s string) segment { return segment{kind: segLiteral, text: s} }
	param := func(s string) segment { return segment{kind: segParam, text: s} }
	cases := []struct {
		in       string
		segments []segment
		tail     tailKind
		restName string
	}{
		{"/", []segment{lit("")}, tailNone, ""},
		{"/api/items/{id}", []segment{lit("api"), lit("items"), param("id")}, tailNone, ""},
		{"/api/", []segment{lit("api"), lit("")}, tailNone, ""},
		{"/static/{rest...}", []segment{lit("static")}, tailRest, "rest"},
		{"/{all...}", nil, tailRest, "all"},
		{"/u/{user_id}/posts/{post2}/", []segment{lit("u"), param("user_id"), lit("posts"), param("post2"), lit("")}, tailNone, ""},
		{"/{_}", []segment{param("_")}, tailNone, ""},
		{"/{ñame}", []segment{param("ñame")}, tailNone, ""},
		{"/a%2Fb/%C3%A9/x;y=z@:!", []segment{lit("a%2Fb"), lit("%C3%A9"), lit("x;y=z@:!")}, tailNone, ""},
		{"/v1.2/.../~x", []segment{lit("v1.2"), lit("..."), lit("~x")}, tailNone, ""},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			p, err := parsePattern(c.in)
			require.NoError(t, err)
			assert.Equal(t, c.in, p.String())
			assert.Equal(t, c.segments, p.segments)
			assert.Equal(t, c.tail, p.tail)
			assert.Equal(t, c.restName, p.restName)
		})
	}
}

func TestParsePatternInvalid(t *testing.T) {
	cases := []struct {
		in, want string // want: a part of the error
	}{
		{"", `route pattern is empty: it must start with "/"`},
		{"api/items", `route pattern "api/items" must start with "/"`},
		{"*", `route pattern "*" must start with "/"`},
		{"/api//items", `route pattern "/api//items" has an empty segment ("//")`},
		{"//", `has an empty segment`},
		{"/api/./items", `route pattern "/api/./items" has a "." segment`},
		{"/api/..", `has a ".." segment`},
		{"/api/{id", `segment "{id" has a "{" or "}" outside a whole {name} segment`},
		{"/api/id}", `segment "id}" has a "{" or "}"`},
		{"/api/x{id}", `segment "x{id}" has a "{" or "}"`},
		{"/api/{id}x", `segment "{id}x" has a "{" or "}"`},
		{"/{}", `parameter "{}": "" is not a name`},
		{"/{...}", `parameter "{...}": "" is not a name`},
		{"/{1d}", `"1d" is not a name`},
		{"/{a-b}", `"a-b" is not a name`},
		{"/{a b}", `"a b" is not a name`},
		{"/{a.b}", `"a.b" is not a name`},
		{"/{a}/{b}/{a}", `parameter name "a" is used twice`},
		{"/{a}/{a...}", `parameter name "a" is used twice`},
		{"/{rest...}/x", `"{rest...}" must be the last segment`},
		{"/{rest...}/", `"{rest...}" must be the last segment`},
		{"/%69tems", `segment "%69tems" has "%69", an encoded "i", which paths are matched decoded: write "i"`},
		{"/a%2fb", `has "%2f": write its hex digits in upper case, "%2F"`},
		{"/100%", `has a "%" that starts no escape`},
		{"/a%zz", `has a "%" that starts no escape`},
		{"/a b", `has " ", which a path carries percent-encoded: write "%20"`},
		{"/caf\xc3\xa9", `write "%C3"`},
		{"/a?b", `write "%3F"`},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			_, err := parsePattern(c.in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestCheckPrefix(t *testing.T) {
	cases := []struct {
		in, want string // want: "" for a valid prefix, else a part of the error
	}{
		{"/", ""},
		{"/api", ""},
		{"/api/", ""},
		{"/api/v1.2/%2F", ""},
		{"", `prefix is empty`},
		{"api", `prefix "api" must start with "/"`},
		{"/api//x", `has an empty segment`},
		{"/api/../x", `has a ".." segment`},
		{"/api/.", `has a "." segment`},
		{"/api/{id}", `a prefix is literal`},
		{"/api/{rest...}", `a prefix is literal`},
		{"/%7Eme", `an encoded "~"`},
		{"/a b", `write "%20"`},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			err := checkPrefix(c.in)
			if c.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestPatternMatch(t *testing.T) {
	cases := []struct {
		pattern string
		prefix  bool
		match   []string // raw request paths, normalised before matching
		noMatch []string
	}{
		{pattern: "/api/items/{id}",
			// A trailing "/" and ASCII case do not matter: frameworks route
			// those spellings to the same handler (docs/rules.md).
			match:   []string{"/api/items/7", "/api/x/../items/1", "/api//items/1", "/api/%69tems/1", "/api/items/%2F", "/api/items/7/", "/api/Items/7", "/API/ITEMS/7/", "/api/items/%2f"},
			noMatch: []string{"/api/items", "/api/items/", "/api/items/7/x", "/api/items/7//x", "/apis/items/7", "/api%2Fitems/7"}},
		{pattern: "/", match: []string{"/", "", "/.."}, noMatch: []string{"/a", "/a/"}},
		{pattern: "/api/", match: []string{"/api/", "/api//", "/api/x/.."}, noMatch: []string{"/api", "/api/x"}},
		{pattern: "/static/{rest...}",
			match:   []string{"/static/", "/static/a", "/static/a/b/c", "/static/a/"},
			noMatch: []string{"/static", "/statics/a", "/"}},
		{pattern: "/{rest...}", match: []string{"/", "/a", "/a/b/"}},
		{pattern: "/u/{id}/posts", match: []string{"/u/7/posts", "/u/%41/posts", "/u/7/posts/", "/U/7/Posts"}, noMatch: []string{"/u//posts", "/u/posts", "/u/7/posts/x"}},
		{pattern: "/api", prefix: true,
			match:   []string{"/api", "/api/", "/api/items", "/api/items/7/x", "/x/../api/y"},
			noMatch: []string{"/apis", "/ap", "/", "/v1/api", "/api%2Fx"}},
		{pattern: "/api/", prefix: true, match: []string{"/api/", "/api/items"}, noMatch: []string{"/api", "/apis"}},
		{pattern: "/", prefix: true, match: []string{"/", "/a", "/a/b/", ""}},
	}
	for _, c := range cases {
		t.Run(c.pattern, func(t *testing.T) {
			p := mustPattern(t, c.pattern, c.prefix)
			for _, path := range c.match {
				assert.True(t, p.match(normalizePath(path)), "%q should match %q", c.pattern, path)
			}
			for _, path := range c.noMatch {
				assert.False(t, p.match(normalizePath(path)), "%q should not match %q", c.pattern, path)
			}
		})
	}
}

// TestPatternCovers checks covers against match: whenever p covers q, p
// matches every path q matches, and on the pairs it should prove, it does.
func TestPatternCovers(t *testing.T) {
	proven := []struct {
		p, q             string
		pPrefix, qPrefix bool
	}{
		{"/", "/api/items/{id}", true, false},
		{"/{rest...}", "/api/items/{id}", false, false},
		{"/api", "/api/x", true, true},
		{"/api/", "/api/x", true, true},
		{"/api/", "/api/", true, true},
		{"/api/{rest...}", "/api/", false, true},
		{"/", "/a", true, false},
		{"/{a}/{b}", "/{c}/{d}", false, false},
		{"/api/{x}", "/api/{y}", false, false},
	}
	for _, c := range proven {
		p, q := mustPattern(t, c.p, c.pPrefix), mustPattern(t, c.q, c.qPrefix)
		assert.True(t, p.covers(&q), "%q should cover %q", c.p, c.q)
	}
	notCovered := []struct {
		p, q             string
		pPrefix, qPrefix bool
	}{
		{"/api/", "/api", false, false}, {"/api/{x}", "/api/", false, false},
		{"/api/items/{id}", "/api/items/{id}/x", false, false},
		// A request routed to q's route may have any path: only q's route or
		// every path covers it.
		{"/api", "/api/items/{id}", true, false}, {"/api/items/{id}", "/api/items/7", false, false},
		{"/api/{x}", "/api/{x}/", false, false}, {"/api/", "/api/{rest...}", true, false},
	}
	for _, c := range notCovered {
		p, q := mustPattern(t, c.p, c.pPrefix), mustPattern(t, c.q, c.qPrefix)
		assert.False(t, p.covers(&q), "%q should not cover %q", c.p, c.q)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		p, q := randomPattern(rng), randomPattern(rng)
		if !p.covers(&q) {
			continue
		}
		if q.route { // a request routed to q's route, whatever its path
			sameKey := p.route && string(appendPatternKey(nil, &p)) == string(appendPatternKey(nil, &q))
			require.True(t, sameKey || p.matchesEveryPath(), "%q covers the route %q, yet is another route", p.text, q.text)
		}
		for range 50 {
			path := randomMatchingPath(rng, &q)
			require.True(t, q.match(path), "%q should match its own %q", q.text, path)
			require.True(t, p.match(path), "%q covers %q, yet misses %q", p.text, q.text, path)
		}
	}
}

// mustPattern parses a route pattern or, with prefix, a prefix.
func mustPattern(t *testing.T, s string, prefix bool) pattern {
	t.Helper()
	parse := parsePattern
	if prefix {
		parse = parsePrefix
	}
	p, err := parse(s)
	require.NoError(t, err, s)
	return p
}

// randomPattern returns a random valid pattern or prefix over a small
// alphabet, so that pairs often overlap.
func randomPattern(rng *rand.Rand) pattern {
	for {
		var b strings.Builder
		prefix := rng.IntN(3) == 0
		n := rng.IntN(4)
		for i := range n {
			b.WriteByte('/')
			switch k := rng.IntN(5); {
			case k == 0 && !prefix:
				b.WriteString("{p" + string(rune('0'+i)) + "}")
			case k == 1 && !prefix && i == n-1:
				b.WriteString("{rest...}")
			default:
				b.WriteString([]string{"a", "b"}[rng.IntN(2)])
			}
		}
		if n == 0 || rng.IntN(4) == 0 {
			b.WriteByte('/')
		}
		parse := parsePattern
		if prefix {
			parse = parsePrefix
		}
		if p, err := parse(b.String()); err == nil {
			return p
		}
	}
}

// randomMatchingPath returns a normal path that p matches.
func randomMatchingPath(rng *rand.Rand, p *pattern) string {
	var b strings.Builder
	for _, s := range p.segments {
		b.WriteByte('/')
		if s.kind == segLiteral {
			b.WriteString(s.text)
		} else {
			b.WriteString([]string{"a", "b", "x"}[rng.IntN(3)])
		}
	}
	extra := 0
	switch p.tail {
	case tailRest:
		extra = 1 + rng.IntN(3)
	case tailAny:
		extra = rng.IntN(3)
	}
	for k := range extra {
		b.WriteByte('/')
		if k < extra-1 || rng.IntN(3) > 0 {
			b.WriteString([]string{"a", "b", "x"}[rng.IntN(3)])
		}
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}

// FuzzPattern parses any text as a route pattern and as a prefix: no panic,
// and what parses is in the normal form paths are matched in, and matches
// the path its own segments spell.
func FuzzPattern(f *testing.F) {
	for _, s := range []string{"/", "/api/items/{id}", "/static/{rest...}", "/a//b", "/{a}/{a}", "/%69", "/a%2Fb/", "/{x...}/y", "{", "/{}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if err := checkPrefix(s); err == nil && !isNormalPath(s) {
			t.Fatalf("prefix %q accepted, but a path would be normalised to %q", s, normalizePath(s))
		}
		p, err := parsePattern(s)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, seg := range p.segments {
			b.WriteByte('/')
			if seg.kind == segParam {
				b.WriteString("x")
			} else {
				b.WriteString(seg.text)
			}
		}
		if p.tail == tailRest || b.Len() == 0 {
			b.WriteByte('/')
		}
		path := b.String()
		if !isNormalPath(path) || !p.match(path) {
			t.Fatalf("pattern %q: its own path %q is not normal or not matched", s, path)
		}
	})
}
