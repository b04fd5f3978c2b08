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
	var out []keyfuncs.Request
	for _, x := range benchMix {
		out = append(out, hostView{req(x.method, x.path), benchHost(x.path)})
	}
	return out
}

// routedBenchRequests is benchRequests with views that name the route their
// router matched, in Echo's syntax ("" for a 404).
func routedBenchRequests() []keyfuncs.Request {
	var out []keyfuncs.Request
	for _, x := range benchMix {
		out = append(out, routedHostView{hostView{req(x.method, x.path), benchHost(x.path)}, x.route})
	}
	return out
}

// benchMix is the method, path and matched route of each request of the
// benchmarks' mix.
var benchMix = []struct{ method, path, route string }{
	{"GET", "/api/v1/users/42", "/api/v1/users/:id"}, {"POST", "/api/v1/orders", "/api/v1/orders"},
	{"GET", "/api/v1/items", "/api/v1/items"}, {"DELETE", "/api/v1/carts/9", "/api/v1/carts/:id"},
	{"PATCH", "/api/v1/tasks/3", "/api/v1/tasks/:id"}, {"GET", "/healthz", "/healthz"},
	{"GET", "/api/v1/webhooks/77/deliveries", "/api/v1/webhooks/:id/deliveries"}, {"GET", "/static/app.js", "/static/*"},
	{"GET", "/admin/users", "/admin/users"}, {"PUT", "/api/v2/unknown/1", ""},
	{"HEAD", "/api/v1/events/1", "/api/v1/events/:id"}, {"GET", "/", "/"},
}

// benchHost is the host a request of the mix is sent to.
func benchHost(path string) string {
	if path == "/admin/users" {
		return "admin.example.com"
	}
	return "api.example.com"
}

// routedHostView is a hostView with MatchedRoute, as Echo's view has both.
type routedHostView struct {
	hostView
	route string
}

func (v routedHostView) MatchedRoute() string { return v.route }

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
