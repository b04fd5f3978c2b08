package rules

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRouteKey checks the key of a framework's route against the key of the
// rules' pattern it is, and the routes that are no pattern.
func TestRouteKey(t *testing.T) {
	same := []struct{ route, pattern string }{
		{"/", "/"},
		{"/users/:id", "/users/{id}"},
		{"/users/{user}", "/users/{id}"},
		{"/Users/:id/", "/users/{id}/"},
		{"/files/*", "/files/{rest...}"},
		{"/files/*filepath", "/files/{path...}"},
		{"/files/{p...}", "/files/{rest...}"},
		{"/*", "/{rest...}"},
		{"/files/+", "/files/{rest...}"},
		{"/users/:id?", "/users/{id}"},
		{"/users/:id<int>", "/users/{id}"},
		{"/users/{$}", "/users/"},
		{"/caf\u00e9/:x", "/caf%C3%A9/{x}"},
		{"/%7euser/:", "/~user/{id}"},
		{"/a%2fb", "/a%2Fb"},
		{"/:a/:b/c", "/{x}/{y}/c"},
	}
	for _, c := range same {
		p, err := parsePattern(c.pattern)
		require.NoError(t, err, c.pattern)
		key, ok := appendRouteKey(nil, c.route)
		require.True(t, ok, c.route)
		assert.Equal(t, string(appendPatternKey(nil, &p)), string(key), "%q and %q", c.route, c.pattern)
	}
	different := []struct{ route, pattern string }{
		{"/users/:id", "/users/{id}/"},
		{"/users/:id/", "/users/{id}"},
		{"/users/:id", "/users/{id...}"},
		{"/users/*", "/users/{id}"},
		{"/users", "/users/{rest...}"},
		{"/users/:id", "/users/id"},
		{"/a/:b", "/a/:b"}, // a literal ':' in the rules; a parameter in Echo's route
		{"/a/*", "/a/*"},
	}
	for _, c := range different {
		p, err := parsePattern(c.pattern)
		require.NoError(t, err, c.pattern)
		key, ok := appendRouteKey(nil, c.route)
		if ok {
			assert.NotEqual(t, string(appendPatternKey(nil, &p)), string(key), "%q and %q", c.route, c.pattern)
		}
	}
	for _, route := range []string{"", "users/:id", "/file.:ext", "/static*", "/flights/:from-:to", "/a/*/b", "/v1/:name\\:cancel",
		"/a/{p...}/b", "/a/{$}/b", "/a/{x:y}", "/a/{x", "/a\\:b"} {
		_, ok := appendRouteKey(nil, route)
		assert.False(t, ok, "%q is no pattern of the rules", route)
	}
}

// TestSelectByMatchedRoute: what the router sent to a route's handler is
// governed by the route's policies, whatever its path; a route the view
// does not name (404, 405, an adapter without MatchedRoute) adds nothing,
// and prefixes are matched by the path alone.
func TestSelectByMatchedRoute(t *testing.T) {
	ps := []Policy{
		pol("item", Match{Paths: []string{"/api/items/{id}"}}),
		pol("items", Match{Paths: []string{"/api/items"}}),
		pol("api", Match{Prefixes: []string{"/api"}}),
		pol("files", Match{Paths: []string{"/files/{rest...}"}, Methods: []string{"GET"}}),
		pol("exempt", Match{Paths: []string{"/api/items/{id}"}, Headers: []HeaderMatch{{Name: "X-Exempt", Present: true}}}, "item"),
	}
	tests := []struct {
		name, method, path, route string
		want                      []string
	}{
		{"Echo's :id takes the rest of the path", "GET", "/api/items/1/2", "/api/items/:id", []string{"item", "api"}},
		{"a raw dot segment taken as the parameter", "GET", "/api/items/%2E%2E", "/api/items/:id", []string{"item", "api"}},
		{"no longer governed by the parent route", "GET", "/api/items/1/..", "/api/items/:id", []string{"item", "items", "api"}},
		{"dot segments kept, as Echo routes them", "GET", "/api/items/%2E%2E/%2E%2E/x", "/api/items/:id", []string{"item", "api"}},
		{"dot segments kept, with no route", "GET", "/api/items/%2E%2E", "", []string{"item", "api"}},
		{"a catch-all route, Gin's syntax", "GET", "/files/", "/files/*filepath", []string{"files"}},
		{"methods still apply", "POST", "/files/a", "/files/*filepath", []string{}},
		{"no route: the path alone", "GET", "/api/items/1/2", "", []string{"api"}},
		{"a route no policy names", "GET", "/api/other/1/2", "/api/other/:id", []string{"api"}},
		{"replaces still apply", "GET", "/api/items/1/2", "/api/items/:id", []string{"api", "exempt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := routedView{req(tt.method, tt.path), tt.route}
			if tt.name == "replaces still apply" {
				r.headers.Set("X-Exempt", "1")
			}
			assert.Equal(t, tt.want, selectNames(t, ps, r))
		})
	}
}

// BenchmarkSelectMatchedRoute is BenchmarkSelect with views that name the
// route their router matched, as Echo's and Gin's do.
func BenchmarkSelectMatchedRoute(b *testing.B) {
	s, err := newSelector(benchPolicies())
	if err != nil {
		b.Fatal(err)
	}
	reqs := routedBenchRequests()
	dst := make([]int, 0, 100)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		dst = s.Select(reqs[i%len(reqs)], dst[:0])
		i++
	}
}
