package ginmw_test

import (
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/ginmw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/store/memory"
)

// Two requests a minute per client IP in front of a Gin route that reports
// the quota left.
func ExampleNew() {
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	st, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer st.Close()
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(2), core.WithClock(clk))
	if err != nil {
		panic(err)
	}
	mw, err := ginmw.New(lim, httplimit.WithDecisionInContext())
	if err != nil {
		panic(err)
	}
	gin.SetMode(gin.ReleaseMode)
	router := gin.New()
	router.Use(mw)
	router.GET("/", func(c *gin.Context) {
		d, _ := ginmw.DecisionFrom(c)
		c.String(200, "hello, %d left\n", d.Remaining)
	})

	for range 3 {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = "192.0.2.1:4321"
		rec := httptest.NewRecorder()
		router.ServeHTTP(rec, req)
		fmt.Print(rec.Code, " ", rec.Header().Get("RateLimit"), " ", rec.Body.String())
	}
	// Output:
	// 200 "default";r=1;t=60 hello, 1 left
	// 200 "default";r=0;t=60 hello, 0 left
	// 429 "default";r=0;t=60 Too Many Requests
}
