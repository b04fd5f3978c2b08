package fiber3mw_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/gofiber/fiber/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/fiber3mw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/store/memory"
	"github.com/ratewarden/ratewarden/testing/adaptertest"
)

// tenantKey is the context key of the value a middleware before the limiter
// sets with c.SetContext.
type tenantKey struct{}

// contextStore is a memory store that records the tenant each Take's context
// carried.
type contextStore struct {
	core.Store
	mu   sync.Mutex
	seen []any
}

func (s *contextStore) Take(ctx context.Context, req core.TakeRequest) (core.Decision, error) {
	s.mu.Lock()
	s.seen = append(s.seen, ctx.Value(tenantKey{}))
	s.mu.Unlock()
	return s.Store.Take(ctx, req)
}

func (s *contextStore) tenants() []any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]any(nil), s.seen...)
}

// The store is called with c.Context(), the context a middleware before the
// limiter set with c.SetContext (v3's successor to SetUserContext); with
// WithDecisionInContext the handler's c.Context() carries both that value and
// the decision, which DecisionFrom reads. Without it, the middleware leaves
// c.Context() as it found it.
func TestTheStoreAndTheHandlerSeeTheContext(t *testing.T) {
	for _, tt := range []struct {
		name     string
		opts     []httplimit.Option
		decision bool
	}{
		{"decision in context", []httplimit.Option{httplimit.WithDecisionInContext()}, true},
		{"no decision in context", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mem, err := memory.New(memory.WithSweepInterval(0))
			require.NoError(t, err)
			t.Cleanup(func() { _ = mem.Close() })
			st := &contextStore{Store: mem}
			lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(2))
			require.NoError(t, err)
			mw, err := fiber3mw.New(lim, tt.opts...)
			require.NoError(t, err)
			app := fiber.New()
			var set context.Context
			app.Use(func(c fiber.Ctx) error {
				set = context.WithValue(c.Context(), tenantKey{}, c.Get("X-Tenant"))
				c.SetContext(set)
				return c.Next()
			}, mw)
			app.Get("/", func(c fiber.Ctx) error {
				d, ok := fiber3mw.DecisionFrom(c)
				assert.Equal(t, tt.decision, ok)
				if ok {
					assert.Equal(t, int64(1), d.Remaining)
				}
				assert.Equal(t, "acme", c.Context().Value(tenantKey{}), "the handler's context derives from the one set before")
				assert.Equal(t, !tt.decision, c.Context() == set, "the context is replaced only to carry the decision")
				return c.SendString("ok")
			})
			req := httptest.NewRequest("GET", "/", nil)
			req.Header.Set("X-Tenant", "acme")
			resp, err := app.Test(req, fiber.TestConfig{})
			require.NoError(t, err)
			assert.Equal(t, 200, resp.StatusCode)
			assert.Equal(t, []any{"acme"}, st.tenants())
		})
	}
}

// customCtx is a Fiber v3 custom context that overrides IP.
type customCtx struct {
	fiber.DefaultCtx
}

func (c *customCtx) IP() string { return "198.51.100.4" }

// On a custom context the middleware works the same, Native returns the
// custom context itself, and FrameworkIP keys by its own IP method.
func TestCustomContext(t *testing.T) {
	kf, err := keyfuncs.FrameworkIP()
	require.NoError(t, err)
	var rec adaptertest.KeyRecorder
	var native fiber.Ctx
	mw, err := fiber3mw.New(newLimiter(t), httplimit.WithDecisionInContext(), httplimit.WithKey(rec.Wrap(func(r keyfuncs.Request) (string, error) {
		native, _ = fiber3mw.Native(r)
		return kf(r)
	})))
	require.NoError(t, err)
	app := fiber.NewWithCustomCtx(func(app *fiber.App) fiber.CustomCtx {
		return &customCtx{DefaultCtx: *fiber.NewDefaultCtx(app)}
	})
	app.Use(func(c fiber.Ctx) error {
		c.Locals("user", "from c.Locals")
		return c.Next()
	}, mw)
	app.Get("/", func(c fiber.Ctx) error {
		d, ok := fiber3mw.DecisionFrom(c)
		assert.True(t, ok)
		assert.Same(t, c, native, "Native returns the handler's own context")
		return c.SendString(fmt.Sprint(d.Remaining))
	})
	resp, err := app.Test(httptest.NewRequest("GET", "/", nil), fiber.TestConfig{})
	require.NoError(t, err)
	assert.Equal(t, 200, resp.StatusCode)
	key, _, err := rec.Last()
	require.NoError(t, err)
	assert.Equal(t, "198.51.100.4", key)
	assert.IsType(t, &customCtx{}, native)
}
