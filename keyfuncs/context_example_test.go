package keyfuncs_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/stdhttp"
)

// Key by the user that authentication middleware put in the request's
// context. With net/http the middleware stores it with context.WithValue;
// with Gin and Echo it is c.Set("user", id), with Fiber c.Locals("user", id),
// and the key function keyfuncs.ContextValue("user").
func ExampleContextValue() {
	user, err := keyfuncs.ContextValue(userKey{})
	if err != nil {
		panic(err)
	}

	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r = r.WithContext(context.WithValue(r.Context(), userKey{}, "alice")) // what the auth middleware does
	k, _ := user(stdhttp.View(r))
	fmt.Println(k)

	_, err = user(stdhttp.View(httptest.NewRequest(http.MethodGet, "/", nil)))
	fmt.Println(err)
	// Output:
	// alice
	// ratewarden: no key: context value keyfuncs_test.userKey{} is missing or nil
}

// nginx in front, the app on a unix socket: the peer is "@", so the client is
// what nginx appended to X-Forwarded-For
// (proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for).
func ExampleWithTrustedProxies_unixSocket() {
	key, err := keyfuncs.IP(keyfuncs.WithTrustedProxies(keyfuncs.TrustUnixSocket))
	if err != nil {
		panic(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "@" // what net/http reports for a unix-socket peer
	r.Header.Set("X-Forwarded-For", "6.6.6.6, 203.0.113.9")
	k, _ := key(stdhttp.View(r))
	fmt.Println(k)

	// Without the trust, the error says what is wrong and how to fix it.
	plain, err := keyfuncs.IP()
	if err != nil {
		panic(err)
	}
	_, err = plain(stdhttp.View(r))
	fmt.Println(errors.Is(err, keyfuncs.ErrPeerNotIP))
	// Output:
	// 203.0.113.9
	// true
}

// resolvingView is a Request whose framework resolved the client IP, as the
// views of ginmw (c.ClientIP), echomw (c.RealIP) and fibermw (c.IP) do.
type resolvingView struct {
	keyfuncs.Request
	clientIP string
}

func (v resolvingView) ClientIP() string { return v.clientIP }

// FrameworkIP keys by the framework's own answer, grouped as IP groups
// addresses. Over net/http, which has no such answer, it is a key error.
func ExampleFrameworkIP() {
	key, err := keyfuncs.FrameworkIP()
	if err != nil {
		panic(err)
	}
	r := stdhttp.View(httptest.NewRequest(http.MethodGet, "/", nil))
	for _, ip := range []string{"203.0.113.9", "2001:db8:1:2::77", "unknown"} {
		k, err := key(resolvingView{r, ip})
		fmt.Printf("%q %v\n", k, err)
	}
	_, err = key(r)
	fmt.Println(errors.Is(err, keyfuncs.ErrKey))
	// Output:
	// "203.0.113.9" <nil>
	// "2001:db8:1:2::/64" <nil>
	// "" ratewarden: no key: the framework's client IP is not an IP address (a forwarding header it trusts holds something else?)
	// true
}
