package keyfuncs_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/stdhttp"
)

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
	k, _ := key(stdhttp.View(r))
	fmt.Println(k)

	// The same header from a peer that is not a trusted proxy is ignored.
	r.RemoteAddr = "198.51.100.4:40000"
	k, _ = key(stdhttp.View(r))
	fmt.Println(k)

	// IPv6 clients are grouped by /64.
	r.RemoteAddr = "[2001:db8:aa:bb:1234:5678:9abc:def0]:443"
	k, _ = key(stdhttp.View(r))
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
	k, err := key(stdhttp.View(r))
	fmt.Println(k, err)

	r.Header.Del("X-API-Key")
	_, err = key(stdhttp.View(r))
	fmt.Println(err)
	// Output:
	// team-42 <nil>
	// ratewarden: no key: header X-Api-Key is missing or empty
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
		k, _ := key(stdhttp.View(r))
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
	k, _ := key(stdhttp.View(r))
	fmt.Println(k)
	r.Header.Set("X-API-Key", "team-42")
	k, _ = key(stdhttp.View(r))
	fmt.Println(k)
	// Output:
	// f:192.0.2.1
	// p:team-42
}
