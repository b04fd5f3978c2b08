package rules_test

import (
	"fmt"
	"net/http/httptest"

	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/stdhttp"
)

// A Matcher tells which policies apply to a request: here a path that
// climbs out of a directory still meets the route it names, and the health
// check's policy replaces the API's.
func ExampleMatcher() {
	doc := &rules.Document{Schema: 1, Version: 1, Policies: []rules.Policy{
		{Name: "api", Match: rules.Match{Prefixes: []string{"/api"}}},
		{Name: "item-writes", Match: rules.Match{Paths: []string{"/api/items/{id}"}, Methods: []string{"PUT", "DELETE"}}},
		{Name: "health", Match: rules.Match{Paths: []string{"/api/healthz"}}, Unlimited: true, Replaces: []string{"api"}},
	}}
	m, err := rules.NewMatcher(doc)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, target := range []string{"PUT /api/x/../items/7", "GET /api/%69tems/7", "GET /api/healthz", "GET /apis"} {
		var method, path string
		fmt.Sscan(target, &method, &path)
		var names []string
		for _, i := range m.Match(stdhttp.View(httptest.NewRequest(method, path, nil)), nil) {
			names = append(names, doc.Policies[i].Name)
		}
		fmt.Println(target, "->", names)
	}
	// Output:
	// PUT /api/x/../items/7 -> [api item-writes]
	// GET /api/%69tems/7 -> [api]
	// GET /api/healthz -> [health]
	// GET /apis -> []
}
