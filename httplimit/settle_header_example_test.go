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

// An LLM endpoint reserves 1 per request and settles at the tokens its
// answer used, which the handler names in X-Cost: the response's headers
// tell the quota after the settle, and a client that went into debt waits
// for it in its next Retry-After (30 s of debt, and one interval for the
// request, rounded up).
func ExampleWithSettleHeader() {
	store, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer store.Close()
	clock := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(store, core.GCRA, core.PerMinute(1000), core.WithDebt(500), core.WithClock(clock))
	if err != nil {
		panic(err)
	}
	mw, err := stdhttp.New(lim, httplimit.WithSettleHeader("X-Cost"))
	if err != nil {
		panic(err)
	}
	tokens := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Cost", r.URL.Query().Get("n")) // before the status goes out
	}))
	for _, n := range []string{"300", "1200", "1"} {
		w := httptest.NewRecorder()
		tokens.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/tokens?n="+n, nil))
		fmt.Printf("%d remaining=%s retry-after=%q\n", w.Code, w.Header().Get("X-RateLimit-Remaining"), w.Header().Get("Retry-After"))
	}
	// Output:
	// 200 remaining=700 retry-after=""
	// 200 remaining=0 retry-after=""
	// 429 remaining=0 retry-after="31"
}

// WithSettle computes the real cost from the response: here the bytes an
// export sent, kept when the handler failed.
func ExampleWithSettle() {
	lim, stop := limiter(core.TokenBucket, core.PerMinute(1<<20))
	defer stop()
	bySize := httplimit.WithSettle(func(status int, header func(name string) string) (int64, bool) {
		if status >= 500 {
			return 0, false // keep the reservation
		}
		n, err := httplimit.ParseCost(header("Content-Length"))
		return n, err == nil
	})
	mw, err := stdhttp.New(lim, bySize)
	if err != nil {
		panic(err)
	}
	export := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "4096")
		_, _ = w.Write(make([]byte, 4096))
	}))
	w := get(export)
	fmt.Println(w.Code, w.Header().Get("X-RateLimit-Remaining"))
	// Output:
	// 200 1044480
}
