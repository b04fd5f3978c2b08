package httplimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// A memory store that refuses new keys when full, as nginx's full zone does:
// a new client gets 503 with Retry-After (here 30 s, rounded up from 29.5),
// whatever the fail mode, and the observer hears of it; the client the store
// holds keeps its exact count.
func ExampleWithUnavailableRetryAfter() {
	st, err := memory.New(memory.WithShards(1), memory.WithMaxKeys(1), memory.WithRefuseWhenFull())
	if err != nil {
		panic(err)
	}
	defer st.Close()
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(1))
	if err != nil {
		panic(err)
	}
	refused := httplimit.ObserverFunc(func(e httplimit.Event) {
		if e.Outcome == httplimit.OutcomeStoreFull {
			fmt.Println("observer:", e.Outcome)
		}
	})
	mw, err := stdhttp.New(lim, httplimit.WithUnavailableRetryAfter(29500*time.Millisecond), httplimit.WithObserver(refused))
	if err != nil {
		panic(err)
	}
	h := mw(ok)
	for _, client := range []string{"192.0.2.1:1000", "198.51.100.7:2000", "192.0.2.1:1000"} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = client
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Printf("%s %d Retry-After=%s\n", client, w.Code, w.Header().Get("Retry-After"))
	}
	// Output:
	// 192.0.2.1:1000 200 Retry-After=
	// observer: store_full
	// 198.51.100.7:2000 503 Retry-After=30
	// 192.0.2.1:1000 429 Retry-After=60
}
