package ginmw_test

import (
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/ginmw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/store/memory"
)

// A 429 rendered by Gin: the policy sets the rate-limit headers and
// Retry-After, then the denied handler answers with c.JSON, here the default
// problem with one field changed.
func ExampleNew_deniedHandler() {
	st, err := memory.New()
	if err != nil {
		panic(err)
	}
	defer st.Close()
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	lim, err := core.NewLimiter(st, core.FixedWindow, core.PerMinute(1), core.WithClock(clk))
	if err != nil {
		panic(err)
	}
	mw, err := ginmw.New(lim, httplimit.WithDeniedHandler(func(_ httplimit.ResponseWriter, r keyfuncs.Request, d core.Decision) {
		c, _ := ginmw.Native(r)
		pd := httplimit.DeniedProblem(d)
		pd.Detail = "upgrade for more"
		c.JSON(pd.Status, pd)
	}))
	if err != nil {
		panic(err)
	}
	gin.SetMode(gin.ReleaseMode)
	router := gin.New()
	router.Use(mw)
	router.GET("/", func(c *gin.Context) { c.String(200, "hello") })

	for range 2 {
		rec := httptest.NewRecorder()
		router.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		fmt.Println(rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
	}
	// Output:
	// 200  hello
	// 429 60 {"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request cannot be satisfied as assigned quota has been exceeded","status":429,"detail":"upgrade for more","violated-policies":["default"]}
}
