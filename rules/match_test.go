package rules

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// view is a keyfuncs.Request of a method, a path and headers, neither a
// keyfuncs.HostRequest nor an EscapedPathRequest: the host is its Host header.
type view struct {
	method, path string
	headers      http.Header
}

func (v *view) RemoteAddr() string                { return "192.0.2.1:1234" }
func (v *view) Header(name string) string         { return v.headers.Get(name) }
func (v *view) HeaderValues(name string) []string { return v.headers.Values(name) }
func (v *view) Method() string                    { return v.method }
func (v *view) Path() string                      { return v.path }
func (v *view) Route() string                     { return "" }
func (v *view) Context() context.Context          { return context.Background() }

// hostView is a view with Host() (keyfuncs.HostRequest), as net/http's has
// (its host is no header).
type hostView struct {
	*view
	host string
}

func (v hostView) Host() string { return v.host }

// escapedView is a view with EscapedPath() (keyfuncs.EscapedPathRequest), the
// path as the client sent it.
type escapedView struct {
	*view
	escaped string
}

func (v escapedView) EscapedPath() string { return v.escaped }

// routedView is a view with MatchedRoute (keyfuncs.MatchedRouteRequest), as
// Echo's and Gin's have: the route the framework's router matched.
type routedView struct {
	*view
	route string
}

func (v routedView) MatchedRoute() string { return v.route }

// peekView is a view with PeekHeader (httplimit.HeaderPeeker), as Fiber's.
type peekView struct{ *view }

func (v peekView) PeekHeader(name string) string { return v.headers.Get(name) }

// req returns a view of method and path with the header pairs kv.
func req(method, path string, kv ...string) *view {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return &view{method: method, path: path, headers: h}
}

// pol returns a policy named name with match m, replacing replaces.
func pol(name string, m Match, replaces ...string) Policy {
	return Policy{Name: name, Match: m, Replaces: replaces}
}

// selectNames returns the names of the policies of ps that apply to r.
func selectNames(t *testing.T, ps []Policy, r keyfuncs.Request) []string {
	t.Helper()
	s, err := newSelector(ps)
	require.NoError(t, err)
	names := []string{}
	for _, i := range s.Select(r, nil) {
		names = append(names, ps[i].Name)
	}
	return names
}

// docPolicies are the policies of the example in docs/rules.md.
var docPolicies = []Policy{
	pol("login", Match{Methods: []string{"POST"}, Paths: []string{"/login"}}),
	pol("api", Match{Prefixes: []string{"/api"}}),
	pol("api-writes", Match{Prefixes: []string{"/api"}, Methods: []string{"POST", "PUT", "PATCH", "DELETE"}}),
	pol("health", Match{Paths: []string{"/healthz"}}, "api", "api-writes"),
}

func TestSelect(t *testing.T) {
	items := []Policy{pol("item", Match{Paths: []string{"/api/items/{id}"}}), pol("all", Match{})}
	chain := []Policy{
		pol("c", Match{}), pol("a", Match{Prefixes: []string{"/x"}}, "b"), pol("b", Match{Methods: []string{"GET"}}, "c"),
	}
	hosts := []Policy{pol("api-host", Match{Hosts: []string{"api.example.com"}}), pol("v6", Match{Hosts: []string{"[::1]"}})}
	headers := []Policy{
		pol("debug", Match{Headers: []HeaderMatch{{Name: "x-debug", Present: true}}}),
		pol("paid", Match{Headers: []HeaderMatch{{Name: "X-Plan", Value: "paid"}}}),
		pol("empty-plan", Match{Headers: []HeaderMatch{{Name: "X-Plan", Value: ""}}}),
		pol("both", Match{Headers: []HeaderMatch{{Name: "X-Plan", Value: "paid"}, {Name: "X-Debug", Present: true}}}),
	}
	cases := []struct {
		name     string
		policies []Policy
		r        keyfuncs.Request
		want     []string
	}{
		{"doc: read under /api", docPolicies, req("GET", "/api/items"), []string{"api"}},
		{"doc: write under /api", docPolicies, req("POST", "/api/items"), []string{"api", "api-writes"}},
		{"doc: login", docPolicies, req("POST", "/login"), []string{"login"}},
		{"doc: login by GET", docPolicies, req("GET", "/login"), []string{}},
		{"doc: health replaces", docPolicies, req("DELETE", "/healthz"), []string{"health"}},
		{"doc: prefix at a segment boundary", docPolicies, req("GET", "/apis"), []string{}},
		{"doc: method is exact", docPolicies, req("post", "/api"), []string{"api"}},
		{"doc: through stdhttp", docPolicies, stdhttp.View(httptest.NewRequest("PUT", "/api/x/../y?q=1", nil)), []string{"api", "api-writes"}},
		{"route", items, req("GET", "/api/items/1"), []string{"item", "all"}},
		{"route after ..", items, req("GET", "/api/x/../items/1"), []string{"item", "all"}},
		{"route after //", items, req("GET", "/api//items/1"), []string{"item", "all"}},
		{"route after %69", items, req("GET", "/api/%69tems/1"), []string{"item", "all"}},
		{"route: no id", items, req("GET", "/api/items/"), []string{"all"}},
		{"route: a trailing slash is no way around it", items, req("GET", "/api/items/1/"), []string{"item", "all"}},
		{"route: nor is upper case", items, req("GET", "/API/Items/1"), []string{"item", "all"}},
		{"route: nor an encoded upper case", items, req("GET", "/api/%49tems/1"), []string{"item", "all"}},
		{"doc: prefix in upper case", docPolicies, req("POST", "/API/items"), []string{"api", "api-writes"}},
		{"doc: login path with a trailing slash", docPolicies, req("POST", "/login/"), []string{"login"}},
		{"chain: HEAD is GET's", chain, req("HEAD", "/y"), []string{"b"}},
		{"route: escaped path preferred", items, escapedView{req("GET", "/api/items/a/b"), "/api/items/a%2Fb"}, []string{"item", "all"}},
		{"chain: a removes b, b removes nothing", chain, req("GET", "/x"), []string{"c", "a"}},
		{"chain: a does not match, b removes c", chain, req("GET", "/y"), []string{"b"}},
		{"chain: b does not match", chain, req("POST", "/x"), []string{"c", "a"}},
		{"host through stdhttp", hosts, stdhttp.View(httptest.NewRequest("GET", "http://API.example.com:8080/", nil)), []string{"api-host"}},
		{"route through stdhttp, encoded slash", items, stdhttp.View(httptest.NewRequest("GET", "/api/items/a%2Fb", nil)), []string{"item", "all"}},
		{"host header", hosts, req("GET", "/", "Host", "api.example.com"), []string{"api-host"}},
		{"host with port and case", hosts, req("GET", "/", "Host", "API.Example.COM:8443"), []string{"api-host"}},
		{"host with a final dot", hosts, req("GET", "/", "Host", "api.example.com."), []string{"api-host"}},
		{"host from Host()", hosts, hostView{req("GET", "/", "Host", "other"), "Api.example.com:80"}, []string{"api-host"}},
		{"host peeked", hosts, peekView{req("GET", "/", "Host", "api.example.com")}, []string{"api-host"}},
		{"host IPv6", hosts, req("GET", "/", "Host", "[::1]:8080"), []string{"v6"}},
		{"host suffix is another host", hosts, req("GET", "/", "Host", "api.example.com.evil"), []string{}},
		{"host missing", hosts, req("GET", "/"), []string{}},
		{"header present, empty", headers, req("GET", "/", "X-Debug", ""), []string{"debug"}},
		{"header equals its first value", headers, req("GET", "/", "X-Plan", "paid", "X-Plan", "free"), []string{"paid"}},
		{"header equals, not a later value", headers, req("GET", "/", "X-Plan", "free", "X-Plan", "paid"), []string{}},
		{"header equals empty", headers, req("GET", "/", "X-Plan", ""), []string{"empty-plan"}},
		{"header conditions all hold", headers, peekView{req("GET", "/", "X-Plan", "paid", "X-Debug", "1")}, []string{"debug", "paid", "both"}},
		{"header equals is exact", headers, req("GET", "/", "X-Plan", "Paid"), []string{}},
		{"nothing matches", docPolicies, req("GET", "/other"), []string{}},
		{"no policies", nil, req("GET", "/"), []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, selectNames(t, c.policies, c.r))
		})
	}
}

func TestSelectAppendsToDst(t *testing.T) {
	s, err := newSelector(docPolicies)
	require.NoError(t, err)
	dst := s.Select(req("POST", "/api"), []int{42})
	assert.Equal(t, []int{42, 1, 2}, dst)
}

func TestSelectMethodsAndHostsAsWritten(t *testing.T) {
	ps := []Policy{pol("m", Match{Methods: []string{"get"}, Hosts: []string{"API.example.com"}})}
	assert.Equal(t, []string{"m"}, selectNames(t, ps, req("GET", "/", "Host", "api.example.com")))
}

func TestNewSelectorErrors(t *testing.T) {
	cases := []struct {
		name     string
		policies []Policy
		want     string
	}{
		{"bad pattern", []Policy{pol("p", Match{Paths: []string{"/a//b"}})}, `policy "p": paths[0]: route pattern "/a//b" has an empty segment`},
		{"bad prefix", []Policy{pol("p", Match{Prefixes: []string{"/ok", "x"}})}, `policy "p": prefixes[1]: prefix "x" must start with "/"`},
		{"empty method", []Policy{pol("p", Match{Methods: []string{""}})}, `policy "p": an empty method`},
		{"empty host", []Policy{pol("p", Match{Hosts: []string{":80"}})}, `policy "p": host ":80" names no host`},
		{"empty header name", []Policy{pol("p", Match{Headers: []HeaderMatch{{Present: true}}})}, `policy "p": headers[0] has an empty name`},
		{"duplicate names", []Policy{pol("p", Match{}), pol("q", Match{}), pol("p", Match{})}, `policies[0] and policies[2] are both named "p"`},
		{"unknown replaced", []Policy{pol("p", Match{}, "nope")}, `policy "p" replaces "nope", which no policy is named`},
		{"replaces itself", []Policy{pol("q", Match{}), pol("p", Match{}, "p")}, `policy "p" replaces itself`},
		{"cycle of two", []Policy{pol("a", Match{}, "b"), pol("b", Match{}, "a")}, `replaces form a cycle: "a" replaces "b" replaces "a"`},
		{"cycle of three, with a tail", []Policy{
			pol("z", Match{}, "a"), pol("a", Match{}, "b"), pol("b", Match{}, "c", "d"), pol("c", Match{}, "a"), pol("d", Match{}),
		}, `replaces form a cycle: "a" replaces "b" replaces "c" replaces "a"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := newSelector(c.policies)
			require.Error(t, err)
			assert.Nil(t, s)
			assert.ErrorIs(t, err, ErrInvalidRules)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestNewMatcher(t *testing.T) {
	_, err := NewMatcher(nil)
	assert.ErrorIs(t, err, core.ErrInvalidOption)
	_, err = NewMatcher(&Document{Policies: []Policy{pol("a", Match{}, "a")}})
	assert.ErrorIs(t, err, ErrInvalidRules)
	m, err := NewMatcher(&Document{Policies: docPolicies})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, m.Match(req("PATCH", "/api/items/7"), nil))
}

func TestHostOnly(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"example.com", "example.com"},
		{"example.com:8080", "example.com"},
		{"example.com.", "example.com"},
		{"example.com.:443", "example.com"},
		{"[::1]:8080", "::1"},
		{"[::1]", "::1"},
		{"::1", "::1"},
		{"[::1", "[::1"},
		{"192.0.2.1:80", "192.0.2.1"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			assert.Equal(t, c.want, hostOnly(c.in))
		})
	}
}

func TestHostsEqual(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"api.example.com", "API.Example.Com", true},
		{"k.com", "\u212a.com", true}, // the Kelvin sign folds to k
		{"straße.de", "STRASSE.de", false},
		{"a.com", "b.com", false},
		{"a.com", "a.co", false},
		{"\xff.com", "\xfe.com", false}, // not UTF-8: compared as bytes
		{"\xff.com", "\xff.COM", true},
	}
	for _, c := range cases {
		t.Run(c.a+"="+c.b, func(t *testing.T) {
			assert.Equal(t, c.want, hostsEqual(c.a, c.b))
			assert.Equal(t, c.want, string(appendFoldKey(nil, c.a)) == string(appendFoldKey(nil, c.b)), "fold keys")
		})
	}
}

func TestSelectorTakesAnyUniqueName(t *testing.T) {
	// Names are the parser's to check; the selector only needs them unique.
	ps := []Policy{pol("", Match{}), pol("with space", Match{}, "")}
	assert.Equal(t, []string{"with space"}, selectNames(t, ps, req("GET", "/")))
	_, err := newSelector([]Policy{pol("", Match{}), pol("", Match{})})
	assert.True(t, errors.Is(err, ErrInvalidRules))
}
