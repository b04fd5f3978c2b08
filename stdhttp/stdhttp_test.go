package stdhttp_test

import (
	"net/http"
	"testing"

	"github.com/ratewarden/ratewarden/adaptertest"
	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/stdhttp"
)

func newApp(_ *testing.T, lim *core.Limiter, h adaptertest.Handler, opts ...httplimit.Option) (*adaptertest.Server, error) {
	mw, err := stdhttp.New(lim, opts...)
	if err != nil {
		return nil, err
	}
	handler := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, ok := stdhttp.DecisionFrom(r)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte(h(d, ok)))
	}))
	mux := http.NewServeMux()
	mux.Handle("/users/{id}", handler)
	mux.Handle("/", handler)
	return adaptertest.HTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		adaptertest.SetPeer(r)
		mux.ServeHTTP(w, r)
	})), nil
}

func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Adapter{New: newApp, Disconnects: true})
}
