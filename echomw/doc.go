// Package echomw is ratewarden's Echo middleware: one line in front of any Echo
// app.
//
//	e.Use(echomw.PerIP("100/m"))
//
// New takes a limiter of your own (any algorithm, store, or limits) and
// httplimit's options (keys, headers, responders, failing open or closed).
// Every behaviour is httplimit.Policy's, identical in the net/http, Gin and Fiber
// adapters. With httplimit.WithDecisionInContext, handlers read the decision
// with DecisionFrom.
package echomw
