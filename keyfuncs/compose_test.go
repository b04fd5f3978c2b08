package keyfuncs_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

func TestComposeUnambiguous(t *testing.T) {
	ab, err := keyfuncs.Compose(keyfuncs.Static("a:b"), keyfuncs.Static("c"))
	must.NoError(t, err)
	a, err := keyfuncs.Compose(keyfuncs.Static("a"), keyfuncs.Static("b:c"))
	must.NoError(t, err)
	pipe1, err := keyfuncs.Compose(keyfuncs.Static("a|1:b"), keyfuncs.Static(""))
	must.NoError(t, err)
	pipe2, err := keyfuncs.Compose(keyfuncs.Static("a"), keyfuncs.Static("b|0:"))
	must.NoError(t, err)
	r := fakereq.New("192.0.2.1:1")
	k1, err := ab(r)
	must.NoError(t, err)
	k2, err := a(r)
	must.NoError(t, err)
	k3, err := pipe1(r)
	must.NoError(t, err)
	k4, err := pipe2(r)
	must.NoError(t, err)
	expect.Equal(t, "3:a:b|1:c", k1)
	expect.Equal(t, "1:a|3:b:c", k2)
	expect.Equal(t, "5:a|1:b|0:", k3)
	expect.Equal(t, "1:a|4:b|0:", k4)
}

func TestComposeManyParts(t *testing.T) {
	parts := make([]keyfuncs.Func, 6)
	for i := range parts {
		parts[i] = keyfuncs.Static(strings.Repeat("x", i))
	}
	kf, err := keyfuncs.Compose(parts...)
	must.NoError(t, err)
	got, err := kf(fakereq.New("192.0.2.1:1"))
	must.NoError(t, err)
	expect.Equal(t, "0:|1:x|2:xx|3:xxx|4:xxxx|5:xxxxx", got)
}

func TestComposeUserAndRoute(t *testing.T) {
	ip, err := keyfuncs.IP()
	must.NoError(t, err)
	kf, err := keyfuncs.Compose(ip, keyfuncs.Method(), keyfuncs.Route())
	must.NoError(t, err)
	r := fakereq.New("203.0.113.7:1")
	r.MethodName, r.RoutePattern, r.PathName = "POST", "/users/{id}", "/users/42"
	got, err := kf(r)
	must.NoError(t, err)
	expect.Equal(t, "11:203.0.113.7|4:POST|11:/users/{id}", got)
}

func TestComposePartError(t *testing.T) {
	key, err := keyfuncs.Header("X-API-Key")
	must.NoError(t, err)
	kf, err := keyfuncs.Compose(keyfuncs.Static("s"), key)
	must.NoError(t, err)
	got, err := kf(fakereq.New("192.0.2.1:1"))
	must.ErrorIs(t, err, keyfuncs.ErrKey)
	expect.Empty(t, got)
}

func TestComposeInvalid(t *testing.T) {
	kf, err := keyfuncs.Compose()
	must.ErrorIs(t, err, core.ErrInvalidOption)
	expect.Nil(t, kf)
	kf, err = keyfuncs.Compose(keyfuncs.Static("a"), nil)
	must.ErrorIs(t, err, core.ErrInvalidOption)
	expect.Contains(t, err.Error(), "part 1 is nil")
	expect.Nil(t, kf)
}

func TestRouteMethodStatic(t *testing.T) {
	tests := []struct {
		name    string
		kf      keyfuncs.Func
		method  string
		route   string
		path    string
		want    string
		wantErr bool
	}{
		{"route pattern", keyfuncs.Route(), "GET", "/users/:id", "/users/42", "/users/:id", false},
		{"no pattern: the path", keyfuncs.Route(), "GET", "", "/users/42", "/users/42", false},
		{"long path hashed", keyfuncs.Route(), "GET", "", "/" + strings.Repeat("p", 400), "sha256:", false},
		{"neither", keyfuncs.Route(), "GET", "", "", "", true},
		{"method", keyfuncs.Method(), "PATCH", "", "/", "PATCH", false},
		{"no method", keyfuncs.Method(), "", "", "/", "", true},
		{"static", keyfuncs.Static("global"), "GET", "", "/", "global", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fakereq.New("192.0.2.1:1")
			r.MethodName, r.RoutePattern, r.PathName = tt.method, tt.route, tt.path
			got, err := tt.kf(r)
			if tt.wantErr {
				must.ErrorIs(t, err, keyfuncs.ErrKey)
				return
			}
			must.NoError(t, err)
			if tt.want == "sha256:" {
				expect.True(t, strings.HasPrefix(got, tt.want), got)
				expect.Len(t, got, 50)
				return
			}
			expect.Equal(t, tt.want, got)
		})
	}
}

func TestFallback(t *testing.T) {
	key, err := keyfuncs.Header("X-API-Key")
	must.NoError(t, err)
	ip, err := keyfuncs.IP()
	must.NoError(t, err)
	failing := func(keyfuncs.Request) (string, error) { return "", errors.New("boom") }
	tests := []struct {
		name     string
		primary  keyfuncs.Func
		fallback keyfuncs.Func
		header   []string
		want     string
		wantErr  bool
	}{
		{"primary", key, ip, []string{"X-API-Key", "k1"}, "p:k1", false},
		{"fallback", key, ip, nil, "f:203.0.113.7", false},
		{"api key that looks like an ip is not the ip", key, ip, []string{"X-API-Key", "203.0.113.7"}, "p:203.0.113.7", false},
		{"both fail", key, key, nil, "", true},
		{"non-key errors still wrap ErrKey", failing, failing, nil, "", true},
		{"nil primary", nil, ip, nil, "f:203.0.113.7", false},
		{"nil fallback", key, nil, []string{"X-API-Key", "k1"}, "p:k1", false},
		{"both nil", nil, nil, nil, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := keyfuncs.Fallback(tt.primary, tt.fallback)(fakereq.New("203.0.113.7:9", tt.header...))
			if tt.wantErr {
				must.ErrorIs(t, err, keyfuncs.ErrKey)
				expect.Empty(t, got)
				return
			}
			must.NoError(t, err)
			expect.Equal(t, tt.want, got)
		})
	}
}
