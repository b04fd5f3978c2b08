package httplimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// The README's lines for a cost settled after the response: an LLM
// endpoint's limiter of 1000 tokens a minute per client, with a debt of up
// to 500, reserves 1 per request and settles at the tokens the answer names
// in X-Cost, which the handler sets before it writes.
func ExampleWithSettleHeader_readme() {
	store, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer store.Close()
	lim, err := core.NewLimiter(store, core.GCRA, core.PerMinute(1000), core.WithDebt(500))
	if err != nil {
		panic(err)
	}
	mw, err := stdhttp.New(lim, httplimit.WithSettleHeader("X-Cost"))
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /v1/completions", mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tokens := 1200 // what the answer used
		w.Header().Set("X-Cost", strconv.Itoa(tokens))
		_, _ = w.Write([]byte("..."))
	})))
	for range 2 {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/completions", nil))
		fmt.Println(w.Code, w.Header().Get("X-RateLimit-Remaining"))
	}
	// Output:
	// 200 0
	// 429 0
}
