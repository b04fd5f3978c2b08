// Package ginmw is ratewarden's Gin middleware: one line in front of any Gin
// router.
//
//	mw, err := ginmw.New(limiter)
//	router.Use(mw)
//
// Every behaviour (keys, headers, the 429 body, failing open or closed, the
// leaky-bucket hold) is core.HTTPPolicy's, configured with core's HTTPOption
// values, and is identical in the net/http, Echo and Fiber adapters. With core.WithDecisionInContext,
// handlers read the decision with DecisionFrom, or core.DecisionFromContext on
// c.Request.Context().
package ginmw
