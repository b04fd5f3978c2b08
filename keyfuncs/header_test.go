package keyfuncs_test

import (
	"strings"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

func TestHeader(t *testing.T) {
	long := strings.Repeat("k", 300)
	tests := []struct {
		name    string
		opts    []keyfuncs.Option
		header  []string
		want    string
		wantErr string
	}{
		{"value", nil, []string{"X-API-Key", "abc123"}, "abc123", ""},
		{"first of several", nil, []string{"X-API-Key", "abc", "X-API-Key", "def"}, "abc", ""},
		{"trimmed", nil, []string{"X-API-Key", "  abc \t"}, "abc", ""},
		{"missing", nil, nil, "", "missing or empty"},
		{"empty", nil, []string{"X-API-Key", ""}, "", "missing or empty"},
		{"blank", nil, []string{"X-API-Key", "  \t "}, "", "missing or empty"},
		{"at the bound kept", []keyfuncs.Option{keyfuncs.WithMaxValueLength(3)}, []string{"X-API-Key", "abc"}, "abc", ""},
		{"over the bound hashed", []keyfuncs.Option{keyfuncs.WithMaxValueLength(3)}, []string{"X-API-Key", "abcd"}, "sha256:iNQmb9TmM40TuEX88olXnSCciXgjuSF9o-Fhk28DFYk", ""},
		{"default bound", nil, []string{"X-API-Key", long}, "sha256:", ""},
		{"prefix stripped", []keyfuncs.Option{keyfuncs.WithHeaderPrefix("Bearer ")}, []string{"X-API-Key", "bearer   tok"}, "tok", ""},
		{"prefix missing", []keyfuncs.Option{keyfuncs.WithHeaderPrefix("Bearer ")}, []string{"X-API-Key", "tok"}, "", "expected prefix"},
		{"only the prefix", []keyfuncs.Option{keyfuncs.WithHeaderPrefix("Bearer ")}, []string{"X-API-Key", "Bearer  "}, "", "missing or empty"},
		{"prefix and header missing", []keyfuncs.Option{keyfuncs.WithHeaderPrefix("Bearer ")}, nil, "", "missing or empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kf, err := keyfuncs.Header("x-api-key", tt.opts...)
			must.NoError(t, err)
			got, err := kf(fakereq.New("192.0.2.1:1", tt.header...))
			if tt.wantErr != "" {
				must.ErrorIs(t, err, keyfuncs.ErrKey)
				expect.Contains(t, err.Error(), tt.wantErr)
				expect.Empty(t, got)
				return
			}
			must.NoError(t, err)
			if tt.want == "sha256:" {
				expect.True(t, strings.HasPrefix(got, "sha256:"), got)
				expect.Len(t, got, 50)
				return
			}
			expect.Equal(t, tt.want, got)
		})
	}
}

func TestHeaderHugeValueBounded(t *testing.T) {
	kf, err := keyfuncs.Header("X-API-Key")
	must.NoError(t, err)
	a, err := kf(fakereq.New("192.0.2.1:1", "X-API-Key", strings.Repeat("a", 1<<20)))
	must.NoError(t, err)
	b, err := kf(fakereq.New("192.0.2.1:1", "X-API-Key", strings.Repeat("a", 1<<20-1)+"b"))
	must.NoError(t, err)
	expect.Len(t, a, 50)
	expect.NotEqual(t, a, b, "different long values keep different keys")
}

func TestHeaderInvalid(t *testing.T) {
	tests := []struct {
		name   string
		header string
		opts   []keyfuncs.Option
		msg    string
	}{
		{"empty name", "", nil, "not a header field name"},
		{"space in name", "X API", nil, "not a header field name"},
		{"colon in name", "X-Key:", nil, "not a header field name"},
		{"zero bound", "X-Key", []keyfuncs.Option{keyfuncs.WithMaxValueLength(0)}, "below 1"},
		{"empty prefix", "X-Key", []keyfuncs.Option{keyfuncs.WithHeaderPrefix("")}, "empty prefix"},
		{"nil option", "X-Key", []keyfuncs.Option{nil}, "nil option"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kf, err := keyfuncs.Header(tt.header, tt.opts...)
			must.ErrorIs(t, err, core.ErrInvalidOption)
			expect.Contains(t, err.Error(), tt.msg)
			expect.Nil(t, kf)
		})
	}
}

func TestValidHeaderName(t *testing.T) {
	for _, name := range []string{"X-Cost", "x-api-key", "A", "!#$%&'*+-.^_`|~09az"} {
		expect.True(t, keyfuncs.ValidHeaderName(name), name)
	}
	for _, name := range []string{"", "X Cost", "X-Cost:", "X-Cöst", "X\tCost", "(x)", "x\r\n"} {
		expect.False(t, keyfuncs.ValidHeaderName(name), "%q", name)
	}
}
