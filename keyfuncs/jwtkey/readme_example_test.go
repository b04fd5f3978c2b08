package jwtkey_test

// The README's snippet of key functions, line for line, so that it compiles
// and runs with every change to the API.

import (
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	gojwt "github.com/golang-jwt/jwt/v5"

	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/keyfuncs/jwtkey"
	"github.com/ratewarden/ratewarden/stdhttp"
)

// Who the client is: the address behind a load balancer, an API key, the
// verified subject of a JWT, and combinations of them.
func Example_keys() {
	secret := []byte("an-hmac-secret-of-32-bytes-or-more")

	ip, err1 := keyfuncs.IP(keyfuncs.WithTrustedProxies("10.0.0.0/8")) // behind your load balancer
	apiKey, err2 := keyfuncs.Header("X-API-Key")
	user, err3 := jwtkey.Subject(jwtkey.WithHMACSecret(secret)) // verified "sub" of a Bearer token
	either := keyfuncs.Fallback(apiKey, ip)                     // an API key, else the IP
	perRoute, err4 := keyfuncs.Compose(user, keyfuncs.Route())  // per user and route
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		log.Fatal(err)
	}

	token, _ := gojwt.NewWithClaims(gojwt.SigningMethodHS256, gojwt.MapClaims{"sub": "alice"}).SignedString(secret)
	r := httptest.NewRequest(http.MethodGet, "/orders/7", nil)
	r.RemoteAddr = "10.0.0.7:51000"                             // the load balancer
	r.Header.Set("X-Forwarded-For", "6.6.6.6, 203.0.113.9")     // 6.6.6.6 is the client's own invention
	r.Header.Set("Authorization", "Bearer "+token)              // signed with secret
	r.Pattern = "GET /orders/{id}"                              // as the ServeMux sets it
	for _, key := range []keyfuncs.Func{ip, either, perRoute} { // no API key: either falls back to the IP
		k, err := key(stdhttp.View(r))
		fmt.Printf("%q %v\n", k, err)
	}
	r.Header.Set("X-API-Key", "k-123")
	k, _ := either(stdhttp.View(r))
	fmt.Printf("%q\n", k)
	// Output:
	// "203.0.113.9" <nil>
	// "f:203.0.113.9" <nil>
	// "5:alice|16:GET /orders/{id}" <nil>
	// "p:k-123"
}
