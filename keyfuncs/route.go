package keyfuncs

// MatchedRouteRequest is implemented by a Request view whose framework has
// routed the request before the middleware runs, and can tell a matched
// route from none: rules match a policy's route patterns against the route
// itself as well as against the path, so that every spelling of a path the
// router sends to a handler (Echo gives a route's last parameter the rest of
// the path, "/users/7/x" for "/users/:id"; Gin routes "/users/%2E%2E" to
// it) is governed by the policies of that handler's route.
//
// The views of echomw (Echo v4), echo5mw (Echo v5) and ginmw implement it,
// and fiber3mw's, which can tell the route only when the middleware is on
// the route itself (app.Get("/users/:id", mw, handler)): the middleware of
// app.Use runs on the mount it was used on, before Fiber has picked the
// final route, so in app.Use it says "". fibermw's (Fiber v2) does not, for
// the same reason; nor does stdhttp's: the middleware wraps the whole
// ServeMux, which sets Request.Pattern only for the handler it calls.
type MatchedRouteRequest interface {
	// MatchedRoute returns the path pattern of the route the framework's
	// router matched for this request, as the route was registered, in the
	// framework's syntax ("/users/:id" for Echo and Gin, "/files/*" or
	// "/files/*path" for a catch-all; "/users/{id}" and "/files/{path...}"
	// in net/http's), without a method or host; "" when the router matched
	// no route for the request's method (a 404 or a 405).
	MatchedRoute() string
}
