package echo5mw_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/labstack/echo/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratewarden/ratewarden/echo5mw"
	"github.com/ratewarden/ratewarden/httplimit"
)

// statusRecorder records the statuses httplimit.WithRefund is asked about.
type statusRecorder struct {
	mu       sync.Mutex
	statuses []int
}

func (s *statusRecorder) refund(status int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statuses = append(s.statuses, status)
	return false
}

func (s *statusRecorder) last(t *testing.T) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	require.NotEmpty(t, s.statuses, "the refund was never asked")
	return s.statuses[len(s.statuses)-1]
}

// teapotWriter is a response writer a middleware puts in front of Echo's,
// as compressing and logging middleware do; Echo finds its own Response
// behind it through Unwrap.
type teapotWriter struct{ http.ResponseWriter }

func (w *teapotWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Under WithRefund the status is the one the client got: what the handler
// sent, read through echo.UnwrapResponse, or, for an error returned before
// anything was sent, what Echo's default error handler sends for it, Echo
// v5's predefined errors (no longer *echo.HTTPError) and wrapped errors
// among them.
func TestRefundStatus(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		path    string
		handler echo.HandlerFunc
		want    int
	}{
		{name: "sent by the handler", want: 201, handler: func(c *echo.Context) error { return c.String(http.StatusCreated, "made") }},
		{name: "no content", want: 204, handler: func(c *echo.Context) error { return c.NoContent(http.StatusNoContent) }},
		{name: "nothing written, no error: net/http's 200", want: 200, handler: func(*echo.Context) error { return nil }},
		{name: "JSON", want: 202, handler: func(c *echo.Context) error { return c.JSON(http.StatusAccepted, map[string]int{"n": 1}) }},
		{name: "an *echo.HTTPError before writing", want: 403, handler: func(*echo.Context) error { return echo.NewHTTPError(http.StatusForbidden, "no") }},
		{name: "a predefined error before writing", want: 401, handler: func(*echo.Context) error { return echo.ErrUnauthorized }},
		{name: "a wrapped predefined error", want: 429, handler: func(*echo.Context) error { return fmt.Errorf("login: %w", echo.ErrTooManyRequests) }},
		{name: "an HTTPError wrapping a cause", want: 400, handler: func(*echo.Context) error { return echo.ErrBadRequest.Wrap(errors.New("bad field")) }},
		{name: "an HTTPError without a code: 500", want: 500, handler: func(*echo.Context) error { return &echo.HTTPError{Message: "no code"} }},
		{name: "a plain error: 500", want: 500, handler: func(*echo.Context) error { return errors.New("boom") }},
		{name: "an error after writing: the status sent", want: 206, handler: func(c *echo.Context) error {
			_ = c.String(http.StatusPartialContent, "half")
			return errors.New("late")
		}},
		{name: "through a writer that wraps Echo's", want: 418, handler: func(c *echo.Context) error {
			c.SetResponse(&teapotWriter{c.Response()})
			return c.String(http.StatusTeapot, "tea")
		}},
		{name: "unknown path: the router's 404", want: 404, path: "/nowhere"},
		{name: "known path, other method: the router's 405", want: 405, method: http.MethodPut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec statusRecorder
			mw, err := echo5mw.New(newLimiter(t), httplimit.WithRefund(rec.refund))
			require.NoError(t, err)
			e := echo.New()
			e.Use(mw)
			h := tt.handler
			if h == nil {
				h = func(c *echo.Context) error { return c.String(http.StatusOK, "ok") }
			}
			e.GET("/", h)
			method, path := http.MethodGet, "/"
			if tt.method != "" {
				method = tt.method
			}
			if tt.path != "" {
				path = tt.path
			}
			resp := httptest.NewRecorder()
			e.ServeHTTP(resp, httptest.NewRequest(method, path, nil))
			assert.Equal(t, tt.want, resp.Code, "the status sent")
			assert.Equal(t, resp.Code, rec.last(t), "the status refunds see is the one sent")
		})
	}
}

// A HEAD request that Echo's router answers with the GET route
// (RouterConfig.AutoHandleHEAD) reports the status the GET handler chose,
// which Echo sends once the handler returned.
func TestRefundStatusAutoHEAD(t *testing.T) {
	var rec statusRecorder
	mw, err := echo5mw.New(newLimiter(t), httplimit.WithRefund(rec.refund))
	require.NoError(t, err)
	e := echo.NewWithConfig(echo.Config{Router: echo.NewRouter(echo.RouterConfig{AutoHandleHEAD: true})})
	e.Use(mw)
	e.GET("/", func(c *echo.Context) error { return c.String(http.StatusAccepted, "queued") })
	resp := httptest.NewRecorder()
	e.ServeHTTP(resp, httptest.NewRequest(http.MethodHead, "/", nil))
	assert.Equal(t, http.StatusAccepted, resp.Code)
	assert.Equal(t, http.StatusAccepted, rec.last(t))
}

// Counting only failures: a handler's success is given back, an error it
// returned (sent by Echo's error handler) is not.
func TestCountOnlyFailures(t *testing.T) {
	mw, err := echo5mw.New(limiterOf(t, "2/m"), httplimit.WithRefund(func(status int) bool { return status < 400 }))
	require.NoError(t, err)
	e := echo.New()
	e.Use(mw)
	e.POST("/login", func(c *echo.Context) error {
		if c.Request().Header.Get("X-Password") != "right" {
			return echo.ErrUnauthorized
		}
		return c.String(http.StatusOK, "welcome")
	})
	login := func(password string) int {
		req := httptest.NewRequest(http.MethodPost, "/login", nil)
		req.Header.Set("X-Password", password)
		resp := httptest.NewRecorder()
		e.ServeHTTP(resp, req)
		return resp.Code
	}
	for range 5 {
		require.Equal(t, 200, login("right"), "successes are given back")
	}
	assert.Equal(t, []int{401, 401, 429, 429}, []int{login("wrong"), login("wrong"), login("wrong"), login("right")})
}
