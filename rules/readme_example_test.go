package rules_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/keyfuncs/jwtkey"
	"github.com/ratewarden/ratewarden/rules"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// The README's lines for a rules file: read, served, watched.
func Example_readmeFile() {
	back := inTempDir(`schema: 1
version: 1
policies:
  - {name: login, match: {methods: [POST], paths: [/login]}, limits: [5/m], count: failures}
`)
	defer back()
	store, err := memory.New()
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	app := http.NotFoundHandler()

	doc, err := rules.ReadFile("rules.yaml")
	if err != nil {
		log.Fatal(err) // every problem at once, each with its line and column
	}
	set, err := rules.New(store, doc) // store: memory.New(), or a Redis store every instance shares
	if err != nil {
		log.Fatal(err)
	}
	watcher, err := rules.WatchFile(set, "rules.yaml") // reloads on every change; watcher.Reload() on SIGHUP
	if err != nil {
		log.Fatal(err)
	}
	defer watcher.Close()
	mw, err := stdhttp.Middleware(set) // or ginmw, echomw, echo5mw, fibermw, fiber3mw, grpcmw.Middleware(set)
	if err != nil {
		log.Fatal(err)
	}
	handler := mw(app)

	w := httptest.NewRecorder()
	handler.ServeHTTP(w, httptest.NewRequest("POST", "/login", nil))
	fmt.Println(w.Header().Get("RateLimit-Policy"))
	// Output: "login";q=5;w=60
}

// The README's lines for a document that keys or picks tiers by a JWT claim:
// the application says how to verify the token.
func Example_readmeClaims() {
	doc, err := rules.Parse([]byte(`schema: 1
version: 1
policies:
  - name: api
    key: {jwt_claim: sub}
    tiers: {by: {jwt_claim: plan}, default: free, limits: {free: [10/s], paid: [100/s]}}
`), "rules.yaml")
	if err != nil {
		log.Fatal(err)
	}
	store, err := memory.New()
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	secret := []byte("a secret of at least thirty-two bytes!")

	set, err := rules.New(store, doc, rules.WithClaimKey(func(claim string) (keyfuncs.Func, error) {
		return jwtkey.Subject(jwtkey.WithHMACSecret(secret), jwtkey.WithClaim(claim)) // verified: signature, algorithm, expiry
	}))
	fmt.Println(set != nil, err)
	// Output: true <nil>
}

// inTempDir makes a temporary folder holding rules.yaml (src) the working
// directory, and returns what puts everything back.
func inTempDir(src string) func() {
	dir, err := os.MkdirTemp("", "rules")
	if err != nil {
		log.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(dir+"/rules.yaml", []byte(src), 0o644); err != nil {
		log.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		log.Fatal(err)
	}
	return func() {
		_ = os.Chdir(wd)
		_ = os.RemoveAll(dir)
	}
}
