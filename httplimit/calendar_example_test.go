package httplimit_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// A calendar quota's headers: RateLimit-Policy names the quota without a
// window length (a month is 28 to 31 days), and RateLimit's t, like
// Retry-After on the 429, is the seconds to the boundary: here 2 hours to
// midnight on December 1st in Berlin.
func Example_calendarQuota() {
	st, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer st.Close()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	clk := core.NewManualClock(time.Date(2026, 11, 30, 22, 0, 0, 0, berlin))
	quota := core.Monthly(2).In("Europe/Berlin").Named("monthly")
	lim, err := core.NewLimiter(st, core.FixedWindow, quota, core.WithClock(clk))
	if err != nil {
		panic(err)
	}
	mw, err := stdhttp.New(lim)
	if err != nil {
		panic(err)
	}
	h := mw(ok)
	for range 3 {
		w := get(h)
		line := fmt.Sprint(w.Code, " ", w.Header().Get("RateLimit-Policy"), " ", w.Header().Get("RateLimit"), " ", w.Header().Get("Retry-After"))
		fmt.Println(strings.TrimSpace(line))
	}
	// Output:
	// 200 "monthly";q=2 "monthly";r=1;t=7200
	// 200 "monthly";q=2 "monthly";r=0;t=7200
	// 429 "monthly";q=2 "monthly";r=0;t=7200 7200
}
