package rules_test

import (
	"fmt"
	"net/http/httptest"

	"github.com/ratewarden/ratewarden/keyfuncs"
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

// routed is a request view that tells the route its framework's router
// matched (keyfuncs.MatchedRouteRequest), as echomw's, echo5mw's and ginmw's
// views do.
type routed struct {
	keyfuncs.Request
	route string
}

func (r routed) MatchedRoute() string { return r.route }

// A route pattern governs every request the router sends to its route: Echo
// gives the last parameter of "/api/items/:id" the rest of the path, so
// "/api/items/1/2" reaches the item handler, and the item policy applies,
// though its {id} is one segment of the path.
func ExampleMatcher_matchedRoute() {
	doc := &rules.Document{Schema: 1, Version: 1, Policies: []rules.Policy{
		{Name: "item", Match: rules.Match{Paths: []string{"/api/items/{id}"}}},
	}}
	m, err := rules.NewMatcher(doc)
	if err != nil {
		fmt.Println(err)
		return
	}
	r := stdhttp.View(httptest.NewRequest("GET", "/api/items/1/2", nil))
	fmt.Println("the path alone:", m.Match(r, nil))
	fmt.Println("routed to /api/items/:id:", m.Match(routed{r, "/api/items/:id"}, nil))
	// Output:
	// the path alone: []
	// routed to /api/items/:id: [0]
}
