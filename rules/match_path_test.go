package rules

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNormalizePath(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"empty is the root", "", "/"},
		{"root", "/", "/"},
		{"already normal", "/api/items/1", "/api/items/1"},
		{"trailing slash kept", "/api/items/", "/api/items/"},
		{"no leading slash", "api/items", "/api/items"},
		{"double slash", "/api//items/1", "/api/items/1"},
		{"leading double slash", "//api", "/api"},
		{"trailing double slash", "/api//", "/api/"},
		{"many slashes", "///", "/"},
		{"dot segment", "/api/./items", "/api/items"},
		{"dot-dot segment", "/api/x/../items/1", "/api/items/1"},
		{"dot-dot above the root", "/../../api", "/api"},
		{"dot-dot at the end", "/a/b/..", "/a/"},
		{"dot at the end", "/a/.", "/a/"},
		{"only dot-dot", "/..", "/"},
		{"three dots are a name", "/a/.../b", "/a/.../b"},
		{"dot in a name", "/a/v1.2/b", "/a/v1.2/b"},
		{"encoded unreserved letter", "/api/%69tems/1", "/api/items/1"},
		{"encoded unreserved, lower-case hex", "/%7e%41", "/~A"},
		{"encoded dot-dot resolved", "/api/x/%2e%2E/items", "/api/items"},
		{"encoded slash stays encoded", "/a%2Fb", "/a%2Fb"},
		{"encoded slash upper-cased", "/a%2fb", "/a%2Fb"},
		{"encoded reserved stays", "/a%3Bb%40", "/a%3Bb%40"},
		{"reserved kept raw", "/a;b=c/@x:y/!$&'()*+,", "/a;b=c/@x:y/!$&'()*+,"},
		{"space encoded", "/a b", "/a%20b"},
		{"non-ASCII encoded", "/caf\xc3\xa9", "/caf%C3%A9"},
		{"control byte encoded", "/a\x00b", "/a%00b"},
		{"braces encoded", "/{x}", "/%7Bx%7D"},
		{"percent that starts no escape", "/100%", "/100%25"},
		{"percent with one hex digit", "/a%4", "/a%254"},
		{"percent with non-hex", "/a%zz", "/a%25zz"},
		{"encoded percent stays", "/a%25", "/a%25"},
		{"backslash encoded, not a separator", `/a\..\b`, "/a%5C..%5Cb"},
		{"query characters encoded", "/a?b#c", "/a%3Fb%23c"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, normalizePath(c.in))
			assert.Equal(t, c.want, referenceNormalize(c.in), "the reference disagrees")
			assert.Equal(t, c.want, normalizePath(c.want), "not idempotent")
		})
	}
}

func TestNormalizePathNormalAllocatesNothing(t *testing.T) {
	for _, p := range []string{"/", "/api/items/1", "/api/items/", "/a%2Fb/%C3%A9", "/a;b=c/@x"} {
		t.Run(p, func(t *testing.T) {
			require.True(t, isNormalPath(p))
			var out string
			allocs := testing.AllocsPerRun(100, func() { out = normalizePath(p) })
			assert.Equal(t, 0.0, allocs)
			assert.Equal(t, p, out)
		})
	}
}

// TestNormalizePathMatchesReference compares normalizePath with
// referenceNormalize on random paths built from the bytes that matter.
func TestNormalizePathMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		p := randomRawPath(rng)
		got := normalizePath(p)
		require.Equal(t, referenceNormalize(p), got, "path %q", p)
		checkNormal(t, p, got)
	}
}

// FuzzNormalizePath checks the properties of the normal form on any input.
func FuzzNormalizePath(f *testing.F) {
	for _, s := range []string{"", "/", "/api/x/../items/1", "/api//items/1", "/api/%69tems/1",
		"/a/%2e%2E/", "/%zz", "/a b", `/a\b`, "//..//.", "/%2F/%2f", "a/b/", "/caf\xc3\xa9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		out := normalizePath(p)
		checkNormal(t, p, out)
		if out != referenceNormalize(p) {
			t.Fatalf("normalizePath(%q) = %q, the reference says %q", p, out, referenceNormalize(p))
		}
	})
}

// checkNormal checks that out, normalizePath(in), is in normal form.
func checkNormal(t *testing.T, in, out string) {
	t.Helper()
	switch {
	case !strings.HasPrefix(out, "/"):
		t.Fatalf("normalizePath(%q) = %q: no leading /", in, out)
	case strings.Contains(out, "//"), strings.Contains(out, "/./"), strings.Contains(out, "/../"),
		strings.HasSuffix(out, "/."), strings.HasSuffix(out, "/.."):
		t.Fatalf("normalizePath(%q) = %q: an empty or dot segment is left", in, out)
	case normalizePath(out) != out:
		t.Fatalf("normalizePath(%q) = %q, but normalizePath(%q) = %q: not idempotent", in, out, out, normalizePath(out))
	case isNormalPath(in) && out != in:
		t.Fatalf("normalizePath(%q) = %q: a normal path changed", in, out)
	case !isNormalPath(out):
		t.Fatalf("normalizePath(%q) = %q, which isNormalPath refuses", in, out)
	}
}

// randomRawPath returns a path made of pieces that exercise every rule.
func randomRawPath(rng *rand.Rand) string {
	pieces := []string{"/", "/", "/", "a", "B", "items", ".", "..", "%2e", "%2E", "%69", "%7e", "%2f",
		"%2F", "%25", "%", "%4", "%zz", " ", "é", ";", "@", "{", "\x00", `\`, "~", "-"}
	var b strings.Builder
	for range rng.IntN(12) {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

// referenceNormalize is normalizePath written the obvious way (split, map,
// join), to check the fast one against.
func referenceNormalize(p string) string {
	segs := strings.Split(p, "/")
	if strings.HasPrefix(p, "/") {
		segs = segs[1:]
	}
	var out []string
	trailing := true
	for _, raw := range segs {
		switch seg := referenceSegment(raw); seg {
		case "", ".":
			trailing = true
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			trailing = true
		default:
			out, trailing = append(out, seg), false
		}
	}
	res := "/" + strings.Join(out, "/")
	if trailing && len(out) > 0 {
		res += "/"
	}
	return res
}

// referenceSegment is one segment in normal form, by RFC 3986's classes.
func referenceSegment(raw string) string {
	unreserved := func(c byte) bool {
		return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0
	}
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '%' {
			if i+2 < len(raw) {
				if v, err := strconv.ParseUint(raw[i+1:i+3], 16, 8); err == nil && !strings.ContainsAny(raw[i+1:i+3], "+-") {
					if unreserved(byte(v)) {
						b.WriteByte(byte(v))
					} else {
						b.WriteString("%" + strings.ToUpper(raw[i+1:i+3]))
					}
					i += 2
					continue
				}
			}
			b.WriteString("%25")
			continue
		}
		if unreserved(c) || strings.IndexByte("!$&'()*+,;=:@", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(c)|0x100, 16)[1:]))
	}
	return b.String()
}
