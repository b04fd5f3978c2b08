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

// The README's lines of an in-flight limit: at most 5 requests of a client
// running at once beside 100 a minute, a request beyond them waiting up to 2
// seconds for a slot (at most 50 waiting), and a 30-second lease for the
// slots of a crashed instance.
func ExampleWithInFlightWait() {
	store, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer store.Close()

	lim, err := core.NewLimiter(store, core.GCRA, core.PerMinute(100), core.WithInFlight(core.Concurrent(5)))
	if err != nil {
		panic(err)
	}
	mw, err := stdhttp.New(lim, httplimit.WithInFlightWait(50, 2*time.Second))
	if err != nil {
		panic(err)
	}

	leased, err := core.NewLimiter(store, core.GCRA, core.PerMinute(100), core.WithInFlight(core.InFlight{Slots: 5, Lease: 30 * time.Second}))
	if err != nil {
		panic(err)
	}

	h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "report ready") }))
	req := httptest.NewRequest("GET", "/reports/q3", nil)
	req.RemoteAddr = "192.0.2.1:4321"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	fmt.Print(rec.Code, " ", rec.Body.String())
	fmt.Println(lim.InFlight(), leased.InFlight().Lease, lim.SlotsHeld())
	// Output:
	// 200 report ready
	// 5 concurrent 30s 0
}
