// Package fibermw is ratewarden's Fiber (v2) middleware: one line in front of
// any Fiber app.
//
//	mw, err := fibermw.New(limiter)
//	app.Use(mw)
//
// Every behaviour (keys, headers, the 429 body, failing open or closed, the
// leaky-bucket hold) is core.HTTPPolicy's, configured with core's HTTPOption
// values, and is identical in the net/http, Gin and Echo adapters. With core.WithDecisionInContext,
// handlers read the decision with DecisionFrom, or core.DecisionFromContext on
// c.UserContext().
package fibermw
