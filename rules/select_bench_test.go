package rules

import (
	"testing"

	"github.com/ratewarden/ratewarden/keyfuncs"
)

// benchResources are the resources of the API benchPolicies limits.
var benchResources = []string{
	"users", "orders", "items", "carts", "payments", "invoices", "products", "reviews", "sessions", "tokens",
	"files", "reports", "teams", "projects", "tasks", "comments", "tags", "webhooks", "events",
}

// benchPolicies are 100 policies of a realistic API: per resource, a list,
// a create, a read, the writes of one item and the whole resource (routes,
// methods, prefixes), plus a global policy, the API as a whole, every write,
// an admin host and a health check that replaces two of them.
func benchPolicies() []Policy {
	var ps []Policy
	for _, r := range benchResources {
		base := "/api/v1/" + r
		ps = append(ps,
			pol(r+"-list", Match{Paths: []string{base}, Methods: []string{"GET"}}),
			pol(r+"-create", Match{Paths: []string{base}, Methods: []string{"POST"}}),
			pol(r+"-read", Match{Paths: []string{base + "/{id}"}, Methods: []string{"GET", "HEAD"}}),
			pol(r+"-write", Match{Paths: []string{base + "/{id}"}, Methods: []string{"PUT", "PATCH", "DELETE"}}),
			pol(r, Match{Prefixes: []string{base}}),
		)
	}
	return append(ps,
		pol("global", Match{}),
		pol("api", Match{Prefixes: []string{"/api"}}),
		pol("writes", Match{Methods: []string{"POST", "PUT", "PATCH", "DELETE"}}),
		pol("admin", Match{Hosts: []string{"admin.example.com"}, Prefixes: []string{"/admin"}}),
		pol("health", Match{Paths: []string{"/healthz"}}, "global", "api"),
	)
}

// benchRequests is the mix of requests the benchmark cycles through.
func benchRequests() []keyfuncs.Request {
	type r struct{ method, path string }
	var out []keyfuncs.Request
	for _, x := range []r{
		{"GET", "/api/v1/users/42"}, {"POST", "/api/v1/orders"}, {"GET", "/api/v1/items"},
		{"DELETE", "/api/v1/carts/9"}, {"PATCH", "/api/v1/tasks/3"}, {"GET", "/healthz"},
		{"GET", "/api/v1/webhooks/77/deliveries"}, {"GET", "/static/app.js"}, {"GET", "/admin/users"},
		{"PUT", "/api/v2/unknown/1"}, {"HEAD", "/api/v1/events/1"}, {"GET", "/"},
	} {
		host := "api.example.com"
		if x.path == "/admin/users" {
			host = "admin.example.com"
		}
		out = append(out, hostView{req(x.method, x.path), host})
	}
	return out
}

// BenchmarkSelect matches the mix of benchRequests against benchPolicies'
// 100 policies: one Select per operation.
func BenchmarkSelect(b *testing.B) {
	s, err := newSelector(benchPolicies())
	if err != nil {
		b.Fatal(err)
	}
	reqs := benchRequests()
	dst := make([]int, 0, 100)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		dst = s.Select(reqs[i%len(reqs)], dst[:0])
		i++
	}
}
