package benchmarks

// Matching a request to the policies of a rules document: the issue's
// target is at most 200 ns and no allocation for 100 policies of routes,
// methods and prefixes. BenchmarkRulesMatch/rules runs rules.Matcher (what a
// rules.Set does before its policies decide) on a mix of requests through
// the net/http adapter's view; BenchmarkRulesMatch/floor-servemux is
// net/http's ServeMux finding the handler of the same requests among 100
// patterns of the same shapes, in the same run. Both fail before timing when
// a request finds nothing.
//
//	go test -run '^$' -bench '^BenchmarkRulesMatch' -benchmem ./benchmarks

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/stdhttp"
)

// matchResources are the resources of the API the benchmark's policies limit.
var matchResources = []string{
	"users", "orders", "items", "carts", "payments", "invoices", "products", "reviews", "sessions", "tokens",
	"files", "reports", "teams", "projects", "tasks", "comments", "tags", "webhooks", "events",
}

// matchPolicies returns 100 policies of a realistic API and, for each, the
// ServeMux pattern of the same shape: per resource a list, a create, a read,
// the writes of one item and the resource as a whole (a prefix), plus a
// global policy, the API, every write (a method alone, which ServeMux cannot
// register beside subtree patterns: a route of its own there), an admin host
// and a health check that replaces two of them.
func matchPolicies() ([]rules.Policy, []string) {
	var ps []rules.Policy
	var mux []string
	add := func(name string, m rules.Match, pattern string, replaces ...string) {
		ps = append(ps, rules.Policy{Name: name, Match: m, Replaces: replaces})
		mux = append(mux, pattern)
	}
	for _, r := range matchResources {
		base := "/api/v1/" + r
		add(r+"-list", rules.Match{Paths: []string{base}, Methods: []string{"GET"}}, "GET "+base)
		add(r+"-create", rules.Match{Paths: []string{base}, Methods: []string{"POST"}}, "POST "+base)
		add(r+"-read", rules.Match{Paths: []string{base + "/{id}"}, Methods: []string{"GET", "HEAD"}}, "GET "+base+"/{id}")
		add(r+"-write", rules.Match{Paths: []string{base + "/{id}"}, Methods: []string{"PUT", "PATCH", "DELETE"}}, "PUT "+base+"/{id}")
		add(r, rules.Match{Prefixes: []string{base}}, base+"/")
	}
	add("global", rules.Match{}, "/")
	add("api", rules.Match{Prefixes: []string{"/api"}}, "/api/")
	add("writes", rules.Match{Methods: []string{"POST", "PUT", "PATCH", "DELETE"}}, "POST /login")
	add("admin", rules.Match{Hosts: []string{"admin.example.com"}, Prefixes: []string{"/admin"}}, "admin.example.com/admin/")
	add("health", rules.Match{Paths: []string{"/healthz"}}, "/healthz", "global", "api")
	return ps, mux
}

// matchRequests is the mix of requests both rows cycle through.
func matchRequests() []*http.Request {
	var out []*http.Request
	for _, target := range [][2]string{
		{"GET", "/api/v1/users/42"}, {"POST", "/api/v1/orders"}, {"GET", "/api/v1/items"},
		{"DELETE", "/api/v1/carts/9"}, {"PATCH", "/api/v1/tasks/3"}, {"GET", "/healthz"},
		{"GET", "/api/v1/webhooks/77/deliveries"}, {"GET", "/static/app.js"}, {"GET", "/admin/users"},
		{"PUT", "/api/v2/unknown/1"}, {"HEAD", "/api/v1/events/1"}, {"GET", "/"},
	} {
		host := "api.example.com"
		if target[1] == "/admin/users" {
			host = "admin.example.com"
		}
		out = append(out, httptest.NewRequest(target[0], "http://"+host+target[1], nil))
	}
	return out
}

func BenchmarkRulesMatch(b *testing.B) {
	policies, patterns := matchPolicies()
	reqs := matchRequests()
	b.Run("rules", func(b *testing.B) {
		m, err := rules.NewMatcher(&rules.Document{Schema: rules.SchemaVersion, Version: 1, Policies: policies})
		if err != nil {
			b.Fatal(err)
		}
		dst := make([]int, 0, len(policies))
		for _, r := range reqs {
			if len(m.Match(stdhttp.View(r), dst[:0])) == 0 {
				b.Fatalf("%s %s matched no policy", r.Method, r.URL)
			}
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			dst = m.Match(stdhttp.View(reqs[i%len(reqs)]), dst[:0])
			i++
		}
	})
	b.Run("floor-servemux", func(b *testing.B) {
		mux := http.NewServeMux()
		ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
		for _, p := range patterns {
			mux.Handle(p, ok)
		}
		for _, r := range reqs {
			if _, p := mux.Handler(r); p == "" {
				b.Fatalf("%s %s matched no pattern", r.Method, r.URL)
			}
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			mux.Handler(reqs[i%len(reqs)])
			i++
		}
	})
}
