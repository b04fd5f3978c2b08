// Package stdhttp is ratewarden's net/http middleware: one line in front of
// any http.Handler.
//
//	mw, err := stdhttp.New(limiter)
//	http.ListenAndServe(":8080", mw(mux))
//
// Every behaviour (keys, headers, the 429 body, failing open or closed, the
// leaky-bucket hold) is core.HTTPPolicy's, configured with core's HTTPOption
// values, and is identical in the Gin, Echo and Fiber adapters. With core.WithDecisionInContext,
// handlers read the decision with DecisionFrom.
package stdhttp
