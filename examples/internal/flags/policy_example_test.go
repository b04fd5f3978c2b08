package flags_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/examples/internal/flags"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
)

// ExampleSetup_Policy is what every example server's main.go does with a
// Setup (its newLimit): the limiter on the store, the key, and the
// adapter's New with the options of the other flags.
func ExampleSetup_Policy() {
	setup, code := flags.Load("stdhttp", []string{"-limit", "2/m"}, os.Stderr)
	if setup == nil {
		fmt.Println("exit status", code)
		return
	}
	defer setup.Close()
	cfg := setup.Config

	lim, err := core.NewLimiter(setup.Store, cfg.Algorithm, cfg.Limit, cfg.LimiterOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	key, err := cfg.KeyFunc()
	if err != nil {
		fmt.Println(err)
		return
	}
	lim, opts, err := setup.Policy(lim)
	if err != nil {
		fmt.Println(err)
		return
	}
	mw, err := stdhttp.New(lim, append(opts, httplimit.WithKey(key))...)
	if err != nil {
		fmt.Println(err)
		return
	}

	h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for _, path := range []string{"/", "/", "/", flags.HealthPath} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Println(path, rec.Code)
	}
	// Output:
	// / 200
	// / 200
	// / 429
	// /healthz 200
}
