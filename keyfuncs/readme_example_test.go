package keyfuncs_test

// The README's snippet of a key function of one's own, line for line, so
// that it compiles and runs with every change to the API.

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/stdhttp"
)

// A key function of one's own: the tenant named in the path. No tenant is a
// key error (the policy answers 401); a value the client chose is bounded.
func ExampleBounded() {
	tenant := func(r keyfuncs.Request) (string, error) {
		rest, ok := strings.CutPrefix(r.Path(), "/tenants/") // "/tenants/{id}/..."
		id, _, _ := strings.Cut(rest, "/")
		if !ok || id == "" {
			return "", fmt.Errorf("no tenant in the path: %w", keyfuncs.ErrKey) // 401, never unlimited
		}
		return keyfuncs.Bounded(id, keyfuncs.DefaultMaxValueLength), nil // a long id becomes its SHA-256
	}

	for _, path := range []string{"/tenants/acme/orders", "/orders", "/tenants/" + strings.Repeat("x", 300)} {
		k, err := tenant(stdhttp.View(httptest.NewRequest(http.MethodGet, path, nil)))
		fmt.Printf("%q %v\n", k, errors.Is(err, keyfuncs.ErrKey))
	}
	// Output:
	// "acme" false
	// "" true
	// "sha256:DU4sqenLztenpTgOsp4aN4O5ttDbct42oQUQOOHB-8c" false
}
