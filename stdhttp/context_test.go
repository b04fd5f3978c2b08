package stdhttp_test

import (
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/testing/adaptertest"
)

// serve serves the conformance app on ln, with an authentication step that
// stores adaptertest.UserHeader under userKey{} in the request's context.
func serve(t *testing.T, ln net.Listener, lim *core.Limiter, h adaptertest.Handler, opts ...httplimit.Option) error {
	mw, err := stdhttp.New(lim, opts...)
	if err != nil {
		return err
	}
	handler := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, ok := stdhttp.DecisionFrom(r)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte(h(d, ok)))
	}))
	mux := http.NewServeMux()
	mux.Handle("/users/{id}", handler)
	mux.Handle("/", handler)
	adaptertest.ServeHTTP(t, ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u := r.Header.Get(adaptertest.UserHeader); u != "" {
			r = r.WithContext(context.WithValue(r.Context(), userKey{}, u))
		}
		mux.ServeHTTP(w, r)
	}))
	return nil
}

func TestRequestAccess(t *testing.T) {
	adaptertest.RunRequest(t, adaptertest.RequestAdapter{
		Key:   userKey{},
		Serve: serve,
		NativePath: func(r keyfuncs.Request) (string, bool) {
			req, ok := stdhttp.Native(r)
			if !ok {
				return "", false
			}
			return req.URL.Path, true
		},
	})
}

// Native gives back the very *http.Request the view was made of, and its
// Context is the request's own.
func TestNativeAndContext(t *testing.T) {
	r, err := http.NewRequestWithContext(context.WithValue(context.Background(), userKey{}, "alice"), http.MethodGet, "/", nil)
	must.NoError(t, err)
	v := stdhttp.View(r)
	got, ok := stdhttp.Native(v)
	must.True(t, ok)
	expect.Same(t, r, got)
	expect.Equal(t, "alice", v.Context().Value(userKey{}))
	_, ok = stdhttp.Native(nil)
	expect.False(t, ok)
	expect.Zero(t, testing.AllocsPerRun(100, func() { _ = v.Context() }))
}

// net/http resolves no client IP: FrameworkIP says what to use instead.
func TestFrameworkIPHasNoAnswer(t *testing.T) {
	kf, err := keyfuncs.FrameworkIP()
	must.NoError(t, err)
	r, err := http.NewRequest(http.MethodGet, "/", nil)
	must.NoError(t, err)
	r.RemoteAddr = "203.0.113.7:1234"
	_, err = kf(stdhttp.View(r))
	must.ErrorIs(t, err, keyfuncs.ErrKey)
	expect.Contains(t, err.Error(), "use keyfuncs.IP")
	_, isResolver := stdhttp.View(r).(keyfuncs.ClientIPResolver)
	expect.False(t, isResolver)
}
