// Package ginmw is ratewarden's Gin middleware: one line in front of any Gin
// app.
//
//	router.Use(ginmw.PerIP("100/m"))
//
// New takes a limiter of your own (any algorithm, store, or limits) and
// httplimit's options (keys, headers, responders, failing open or closed).
// Every behaviour is httplimit.Policy's, identical in the net/http, Echo and Fiber
// adapters. With httplimit.WithDecisionInContext, handlers read the decision
// with DecisionFrom.
package ginmw
