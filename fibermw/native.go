package fibermw

import (
	"reflect"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ratewarden/ratewarden/keyfuncs"
)

// requestContext is the context.Context of a *fiber.Ctx: Value(key) returns
// c.Locals(key) when it is not nil, else c.UserContext().Value(key);
// Deadline, Done and Err are c.UserContext()'s. One pointer, so it converts
// to a context.Context without allocating. Like the *fiber.Ctx, it is valid
// only during the request.
type requestContext struct{ c *fiber.Ctx }

func (x requestContext) Deadline() (time.Time, bool) { return x.c.UserContext().Deadline() }
func (x requestContext) Done() <-chan struct{}       { return x.c.UserContext().Done() }
func (x requestContext) Err() error                  { return x.c.UserContext().Err() }

func (x requestContext) Value(key any) any {
	if comparableKey(key) {
		if v := x.c.Locals(key); v != nil {
			return v
		}
	}
	return x.c.UserContext().Value(key)
}

// comparableKey reports whether fasthttp can compare key with the keys of
// c.Locals without panicking.
func comparableKey(key any) bool {
	if _, ok := key.(string); ok {
		return true
	}
	return key != nil && reflect.ValueOf(key).Comparable()
}

// Native returns the *fiber.Ctx behind a keyfuncs.Request that this package's
// middleware made, for key functions, skips, costs and responders that need
// more than the neutral view (c.Locals, c.Params, c.IP, c.JSON); false for
// any other Request. Authentication middleware that runs before the limiter
// stores a user with c.Locals("user", id), which keyfuncs.ContextValue("user")
// reads. The *fiber.Ctx, and every string it returns, is valid only during
// the request: Fiber reuses it, and fasthttp its buffers, afterwards.
func Native(r keyfuncs.Request) (*fiber.Ctx, bool) {
	v, ok := r.(request)
	return v.c, ok && v.c != nil
}
