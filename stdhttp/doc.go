// Package stdhttp is ratewarden's net/http middleware: one line in front of
// any http.Handler.
//
//	http.ListenAndServe(":8080", stdhttp.PerIP("100/m")(mux))
//
// New takes a limiter of your own (any algorithm, store, or limits) and
// httplimit's options (keys, headers, responders, failing open or closed).
// Every behaviour is httplimit.Policy's, identical in the Gin, Echo and Fiber
// adapters. With httplimit.WithDecisionInContext, handlers read the decision
// with DecisionFrom.
package stdhttp
