package fiber3mw

import (
	"reflect"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/ratewarden/ratewarden/keyfuncs"
)

// requestContext is the context.Context of a fiber.Ctx: Value(key) returns
// c.Locals(key) when it is not nil, else c.Context().Value(key); Deadline,
// Done and Err are c.Context()'s (the fiber.Ctx's own are no-ops). On
// *fiber.DefaultCtx it is one pointer, so it converts to a context.Context
// without allocating. Like the fiber.Ctx, it is valid only during the
// request.
type requestContext[C fiber.Ctx] struct{ c C }

func (x requestContext[C]) Deadline() (time.Time, bool) { return x.c.Context().Deadline() }
func (x requestContext[C]) Done() <-chan struct{}       { return x.c.Context().Done() }
func (x requestContext[C]) Err() error                  { return x.c.Context().Err() }

func (x requestContext[C]) Value(key any) any {
	if comparableKey(key) {
		if v := x.c.Locals(key); v != nil {
			return v
		}
	}
	return x.c.Context().Value(key)
}

// comparableKey reports whether fasthttp can compare key with the keys of
// c.Locals without panicking.
func comparableKey(key any) bool {
	if _, ok := key.(string); ok {
		return true
	}
	return key != nil && reflect.ValueOf(key).Comparable()
}

// Native returns the fiber.Ctx behind a keyfuncs.Request that this package's
// middleware made, for key functions, skips, costs and responders that need
// more than the neutral view (c.Locals, c.Params, c.IP, c.JSON); false for
// any other Request. It is the handler's own fiber.Ctx: a *fiber.DefaultCtx,
// or the app's custom context. Authentication middleware that runs before
// the limiter stores a user with c.Locals("user", id), which
// keyfuncs.ContextValue("user") reads. The fiber.Ctx, and every string it
// returns, is valid only during the request: Fiber reuses it, and fasthttp
// its buffers, afterwards.
func Native(r keyfuncs.Request) (fiber.Ctx, bool) {
	switch v := r.(type) {
	case request[*fiber.DefaultCtx]:
		if v.c != nil {
			return v.c, true
		}
	case request[fiber.Ctx]:
		if v.c != nil {
			return v.c, true
		}
	}
	return nil, false
}
