package keyfuncs_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/store/memory"
)

// httpRequest is the core.HTTPRequest view of a *http.Request, as the stdhttp
// adapter builds it.
type httpRequest struct{ r *http.Request }

func (h httpRequest) RemoteAddr() string                { return h.r.RemoteAddr }
func (h httpRequest) Header(name string) string         { return h.r.Header.Get(name) }
func (h httpRequest) HeaderValues(name string) []string { return h.r.Header.Values(name) }
func (h httpRequest) Method() string                    { return h.r.Method }
func (h httpRequest) Path() string                      { return h.r.URL.Path }
func (h httpRequest) Route() string                     { return h.r.Pattern }

func ExampleIP() {
	// Behind a load balancer at 10.0.0.0/8: the client is the rightmost
	// address in X-Forwarded-For that is not one of our proxies.
	key, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("10.0.0.0/8"))
	if err != nil {
		panic(err)
	}

	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "10.0.0.7:51000"
	r.Header.Set("X-Forwarded-For", "6.6.6.6, 203.0.113.9, 10.0.0.12") // 6.6.6.6 is the client's own invention
	k, _ := key(httpRequest{r})
	fmt.Println(k)

	// The same header from a peer that is not a trusted proxy is ignored.
	r.RemoteAddr = "198.51.100.4:40000"
	k, _ = key(httpRequest{r})
	fmt.Println(k)

	// IPv6 clients are grouped by /64.
	r.RemoteAddr = "[2001:db8:aa:bb:1234:5678:9abc:def0]:443"
	k, _ = key(httpRequest{r})
	fmt.Println(k)
	// Output:
	// 203.0.113.9
	// 198.51.100.4
	// 2001:db8:aa:bb::/64
}

func ExampleHeader() {
	key, err := keyfuncs.Header("X-API-Key")
	if err != nil {
		panic(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("X-API-Key", "team-42")
	k, err := key(httpRequest{r})
	fmt.Println(k, err)

	r.Header.Del("X-API-Key")
	_, err = key(httpRequest{r})
	fmt.Println(err)
	// Output:
	// team-42 <nil>
	// ratewarden: no key: header X-Api-Key is missing or empty
}

func ExampleJWTSubject() {
	secret := []byte("an-hmac-secret-of-32-bytes-or-more")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	key, err := keyfuncs.JWTSubject(
		keyfuncs.WithHMACSecret(secret),
		keyfuncs.WithIssuer("https://idp.example"),
		keyfuncs.WithClock(core.NewManualClock(now)),
	)
	if err != nil {
		panic(err)
	}

	token, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": "alice",
		"iss": "https://idp.example",
		"exp": now.Add(time.Hour).Unix(),
	}).SignedString(secret)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	k, err := key(httpRequest{r})
	fmt.Println(k, err)

	// The same claims signed with another secret are refused.
	forged, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": "alice",
		"iss": "https://idp.example",
	}).SignedString([]byte("guessed-secret-guessed-secret-xx"))
	r.Header.Set("Authorization", "Bearer "+forged)
	_, err = key(httpRequest{r})
	fmt.Println(err != nil)
	// Output:
	// alice <nil>
	// true
}

func ExampleCompose() {
	ip, err := keyfuncs.IP()
	if err != nil {
		panic(err)
	}
	// One limit per client and route.
	key, err := keyfuncs.Compose(ip, keyfuncs.Route())
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		k, _ := key(httpRequest{r})
		fmt.Println(k)
	})
	r := httptest.NewRequest(http.MethodGet, "/users/42", nil)
	mux.ServeHTTP(httptest.NewRecorder(), r)
	// Output:
	// 9:192.0.2.1|15:GET /users/{id}
}

func ExampleFallback() {
	apiKey, err := keyfuncs.Header("X-API-Key")
	if err != nil {
		panic(err)
	}
	ip, err := keyfuncs.IP()
	if err != nil {
		panic(err)
	}
	key := keyfuncs.Fallback(apiKey, ip)

	r := httptest.NewRequest(http.MethodGet, "/", nil)
	k, _ := key(httpRequest{r})
	fmt.Println(k)
	r.Header.Set("X-API-Key", "team-42")
	k, _ = key(httpRequest{r})
	fmt.Println(k)
	// Output:
	// f:192.0.2.1
	// p:team-42
}

// Policy is how the adapters build core's HTTP policy: the client IP is the
// key unless an option names another key function.
func ExamplePolicy() {
	st, _ := memory.New()
	defer st.Close()
	lim, _ := core.NewLimiter(st, core.GCRA, core.PerSecond(1))
	_, err := keyfuncs.Policy(lim)
	fmt.Println(err)
	_, err = keyfuncs.Policy(nil)
	fmt.Println(errors.Is(err, core.ErrInvalidOption))
	// Output:
	// <nil>
	// true
}
