// Package fiber3mw is ratewarden's Fiber v3 middleware: one line in front of
// any Fiber v3 app.
//
//	app.Use(fiber3mw.PerIP("100/m"))
//
// New takes a limiter of your own (any algorithm, store, or limits) and
// httplimit's options (keys, headers, responders, failing open or closed).
// Every behaviour is httplimit.Policy's, identical in the net/http, Gin, Echo
// and Fiber v2 adapters (fibermw). With httplimit.WithDecisionInContext,
// handlers read the decision with DecisionFrom.
package fiber3mw
