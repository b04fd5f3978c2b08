// Package echo5mw is ratewarden's Echo v5 middleware: one line in front of any
// Echo v5 app.
//
//	e.Use(echo5mw.PerIP("100/m"))
//
// New takes a limiter of your own (any algorithm, store, or limits) and
// httplimit's options (keys, headers, responders, failing open or closed).
// Every behaviour is httplimit.Policy's, identical in the net/http, Gin, Echo
// v4 (package echomw) and Fiber adapters. With httplimit.WithDecisionInContext,
// handlers read the decision with DecisionFrom.
//
// Echo v4 apps use package echomw (module
// github.com/ratewarden/ratewarden/echomw); the two differ only in the types
// Echo gives them: v5 hands handlers a *echo.Context, a struct, and its
// c.Response() is an http.ResponseWriter whose status echo.UnwrapResponse
// reads.
package echo5mw
