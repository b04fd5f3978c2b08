// Package echomw is ratewarden's Echo (v4) middleware: one line in front of
// any Echo app.
//
//	mw, err := echomw.New(limiter)
//	e.Use(mw)
//
// Every behaviour (keys, headers, the 429 body, failing open or closed, the
// leaky-bucket hold) is core.HTTPPolicy's, configured with core's HTTPOption
// values, and is identical in the net/http, Gin and Fiber adapters. With core.WithDecisionInContext,
// handlers read the decision with DecisionFrom, or core.DecisionFromContext on
// c.Request().Context().
package echomw
