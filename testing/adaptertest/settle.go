package adaptertest

import (
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/internal/expect"
)

// CostHeader is the request header whose value the app's handler sets as
// the response header of the same name, before it sends its status: it
// lets the suite test a settle that reads the real cost from the response
// (httplimit.WithSettleHeader). SetCost does it for net/http.
const CostHeader = "X-Test-Cost"

// SetCost sets the response header CostHeader to the request's, when the
// request has one: what every conformance app's handler does before it
// writes its status.
func SetCost(requestValue string, set func(name, value string)) {
	if requestValue != "" {
		set(CostHeader, requestValue)
	}
}

// checkSettleReadsTheResponseHeader: under WithSettleHeader the adapter
// gives the policy the response header the handler set, so the request's
// reservation settles at the cost it names, before the headers go out: the
// response tells the quota after the settle, a charge beyond the quota goes
// into the debt the limiter allows, and the next request's Retry-After
// counts it. A bad cost keeps the reservation.
func checkSettleReadsTheResponseHeader(t *testing.T, a Adapter) {
	e := start(t, a, nil, core.FixedWindow, core.PerMinute(10), []core.Option{core.WithDebt(5)}, httplimit.WithSettleHeader(CostHeader))
	expect.Equal(t, ok("ok, remaining 9", allowed("10", "60", "6", "60")), e.do("POST", "/", peerA, CostHeader, "4"), "a cost of 4 settled")
	expect.Equal(t, ok("ok, remaining 5", allowed("10", "60", "6", "60")), e.do("POST", "/", peerA, CostHeader, "0"), "a cost of 0 gives the reservation back")
	expect.Equal(t, ok("ok, remaining 5", allowed("10", "60", "5", "60")), e.do("POST", "/", peerA, CostHeader, "NaN"), "a bad cost keeps the reservation")
	expect.Equal(t, ok("ok, remaining 4", allowed("10", "60", "4", "60")), e.do("POST", "/", peerA), "no cost keeps it too")
	expect.Equal(t, ok("ok, remaining 3", allowed("10", "60", "0", "60")), e.do("POST", "/", peerA, CostHeader, "1000000"), "a charge into the debt, up to its bound")
	denied := e.do("POST", "/", peerA)
	expect.Equal(t, 429, denied.Status, "a key in debt is denied")
	expect.Equal(t, int64(5), e.calls.Load(), "the denied request reached no handler")
}
