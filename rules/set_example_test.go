package rules_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// A rules document limits a net/http app: logins by IP, counting only
// failures, and the API by key. stdhttp.Middleware takes the Set as it takes a
// policy; Gin's, Echo's and Fiber's Middleware do the same.
func Example() {
	doc, err := rules.Parse([]byte(`
schema: 1
version: 1
policies:
  - {name: login, match: {methods: [POST], paths: [/login]}, limits: [5/m], count: failures}
  - {name: api, match: {prefixes: [/api]}, key: {header: X-API-Key}, limits: [100/s, 10000/d]}
`), "rules.yaml")
	if err != nil {
		panic(err)
	}
	store, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer store.Close()
	set, err := rules.New(store, doc)
	if err != nil {
		panic(err)
	}
	mw, err := stdhttp.Middleware(set)
	if err != nil {
		panic(err)
	}
	app := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))

	r := httptest.NewRequest("GET", "/api/items/7", nil)
	r.Header.Set("X-API-Key", "k-123")
	w := httptest.NewRecorder()
	app.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Header().Get("RateLimit-Policy"))
	// Output: 200 "api";q=100;w=1, "api 10000/d";q=10000;w=86400
}

// Parse reports every problem of a document at once, each with its line and
// column; the rules in force stay when a reload is refused.
func ExampleParse_problems() {
	_, err := rules.Parse([]byte(`
schema: 1
version: 1
policies:
  - {name: api, limits: [100/x]}
  - {name: api, limits: [10/s], dry_rn: true}
`), "rules.yaml")
	fmt.Println(err)
	// Output:
	// rules.yaml:5:26: policies[0].limits[0]: ratewarden: invalid limit: "100/x": period is not a unit (ms, s, m, h, d, or sec, min, hr, hour, day), a multiple of one (30s, 15min, 7d) or a Go duration (1h30m) (want RATE/PERIOD such as 10/s, 100/m or 5/30s)
	// rules.yaml:6:12: policies[1].name: duplicate policy name "api" (first at 5:12)
	// rules.yaml:6:33: policies[1]: unknown field "dry_rn" in a policy (did you mean "dry_run"?)
}
