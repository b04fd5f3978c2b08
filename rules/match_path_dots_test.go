package rules

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPathForms checks the forms a path is matched in: its normal form, and
// when it has dot segments, the form that keeps them, as Echo, Gin and
// Fiber route it ("/users/.." reaches "/users/:id" there).
func TestPathForms(t *testing.T) {
	cases := []struct{ in, normal, dotted string }{
		{"/users/7", "/users/7", ""},
		{"/users//7/", "/users/7/", ""},
		{"/users/%37", "/users/7", ""},
		{"/users/..", "/", "/users/.."},
		{"/users/%2E%2E", "/", "/users/.."},
		{"/users/%2e", "/users/", "/users/."},
		{"/users/./7", "/users/7", "/users/./7"},
		{"/x/../users/7", "/users/7", "/x/../users/7"},
		{"/users/7/../", "/users/", "/users/7/../"},
		{"//users//..//", "/", "/users/../"},
		{"/a/.../b", "/a/.../b", ""},
		{"/%2E%2E%2F", "/..%2F", ""}, // an encoded '/' makes it a name, not a dot segment
		{"", "/", ""},
	}
	for _, c := range cases {
		normal, dotted := pathForms(c.in)
		assert.Equal(t, c.normal, normal, "normal form of %q", c.in)
		assert.Equal(t, c.dotted, dotted, "dotted form of %q", c.in)
		assert.Equal(t, c.dotted, referenceDotted(c.in), "the reference's dotted form of %q", c.in)
	}
}

// TestPathFormsMatchReference compares pathForms with normalizePath and
// referenceDotted on random paths built from the bytes that matter.
func TestPathFormsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 20000 {
		p := randomRawPath(rng)
		normal, dotted := pathForms(p)
		require.Equal(t, normalizePath(p), normal, "path %q", p)
		require.Equal(t, referenceDotted(p), dotted, "path %q", p)
	}
}

// referenceDotted is the dotted form written the obvious way (split, map,
// join): every segment in normal form, empty ones dropped, "." and ".."
// kept; "" when no segment is a dot segment.
func referenceDotted(p string) string {
	segs := strings.Split(p, "/")
	if strings.HasPrefix(p, "/") {
		segs = segs[1:]
	}
	var out []string
	trailing, dots := true, false
	for _, raw := range segs {
		seg := referenceSegment(raw)
		if seg == "" {
			trailing = true
			continue
		}
		dots = dots || seg == "." || seg == ".."
		out, trailing = append(out, seg), false
	}
	if !dots {
		return ""
	}
	res := "/" + strings.Join(out, "/")
	if trailing {
		res += "/"
	}
	return res
}
