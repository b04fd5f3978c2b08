package keyfuncs_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

type userKey struct{}

type (
	userID   int64
	userName string
	tenant   struct{ id string }
	panicky  struct{}
	uintID   uint16
)

func (t *tenant) String() string { return "tenant-" + t.id }
func (panicky) String() string   { panic("boom") }

// withValue returns a request whose context holds v under key.
func withValue(key, v any) *fakereq.Request {
	r := fakereq.New("192.0.2.7:1")
	r.Ctx = context.WithValue(context.Background(), key, v)
	return r
}

func TestContextValueTypes(t *testing.T) {
	kf, err := keyfuncs.ContextValue(userKey{})
	must.NoError(t, err)
	tests := []struct {
		name  string
		value any
		want  string
	}{
		{"string", "alice", "alice"},
		{"bytes", []byte("bob"), "bob"},
		{"stringer", &tenant{"acme"}, "tenant-acme"},
		{"int", 42, "42"},
		{"negative int64", int64(-7), "-7"},
		{"uint64", uint64(1 << 63), "9223372036854775808"},
		{"int8", int8(-128), "-128"},
		{"uint8", uint8(255), "255"},
		{"named int", userID(1001), "1001"},
		{"named uint", uintID(65535), "65535"},
		{"named string", userName("carol"), "carol"},
		{"spaces kept", " dave ", " dave "},
		{"long value hashed", strings.Repeat("x", 300), keyfuncs.Bounded(strings.Repeat("x", 300), keyfuncs.DefaultMaxValueLength)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kf(withValue(userKey{}, tt.value))
			must.NoError(t, err)
			expect.Equal(t, tt.want, got)
		})
	}
}

func TestContextValueErrors(t *testing.T) {
	kf, err := keyfuncs.ContextValue("user")
	must.NoError(t, err)
	tests := []struct {
		name string
		r    *fakereq.Request
		msg  string
	}{
		{"missing", fakereq.New("192.0.2.7:1"), `context value "user" is missing or nil`},
		{"another key", withValue(userKey{}, "alice"), `"user" is missing or nil`},
		{"nil", withValue("user", nil), "is missing or nil"},
		{"empty string", withValue("user", ""), `context value "user" is empty`},
		{"empty bytes", withValue("user", []byte{}), "is empty"},
		{"nil stringer", withValue("user", (*tenant)(nil)), "is a nil *keyfuncs_test.tenant"},
		{"panicking stringer", withValue("user", panicky{}), "String method (keyfuncs_test.panicky) panicked"},
		{"float", withValue("user", 1.5), "is a float64, not a string, []byte, fmt.Stringer or integer"},
		{"struct", withValue("user", struct{ ID int }{1}), "is a struct { ID int }"},
		{"bool", withValue("user", true), "is a bool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kf(tt.r)
			must.ErrorIs(t, err, keyfuncs.ErrKey)
			expect.Contains(t, err.Error(), tt.msg)
			expect.Empty(t, got)
		})
	}
}

// A Request whose Context is nil (a hand-written view) is a key error, not a
// panic.
func TestContextValueNilContext(t *testing.T) {
	kf, err := keyfuncs.ContextValue("user")
	must.NoError(t, err)
	_, err = kf(nilContextRequest{fakereq.New("192.0.2.7:1")})
	must.ErrorIs(t, err, keyfuncs.ErrKey)
}

type nilContextRequest struct{ *fakereq.Request }

func (nilContextRequest) Context() context.Context { return nil }

func TestContextValueMaxLength(t *testing.T) {
	kf, err := keyfuncs.ContextValue("user", keyfuncs.WithMaxValueLength(4))
	must.NoError(t, err)
	got, err := kf(withValue("user", "abcd"))
	must.NoError(t, err)
	expect.Equal(t, "abcd", got)
	got, err = kf(withValue("user", "abcde"))
	must.NoError(t, err)
	expect.Equal(t, keyfuncs.Bounded("abcde", 4), got)
	expect.True(t, strings.HasPrefix(got, "sha256:"))
}

func TestContextValueInvalid(t *testing.T) {
	tests := []struct {
		name string
		key  any
		opts []keyfuncs.Option
		msg  string
	}{
		{"nil key", nil, nil, "nil key"},
		{"slice key", []string{"user"}, nil, "the key, a []string, is not comparable"},
		{"map key", map[string]int{}, nil, "is not comparable"},
		{"nil option", "user", []keyfuncs.Option{nil}, "nil option"},
		{"length 0", "user", []keyfuncs.Option{keyfuncs.WithMaxValueLength(0)}, "below 1"},
		{"header prefix", "user", []keyfuncs.Option{keyfuncs.WithHeaderPrefix("Bearer ")}, "applies to Header only"},
		{"trusted proxies", "user", []keyfuncs.Option{keyfuncs.WithTrustedProxies("10.0.0.0/8")}, "applies to IP only"},
		{"ipv6 prefix", "user", []keyfuncs.Option{keyfuncs.WithIPv6Prefix(48)}, "applies to IP and FrameworkIP only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kf, err := keyfuncs.ContextValue(tt.key, tt.opts...)
			must.ErrorIs(t, err, core.ErrInvalidOption)
			expect.Contains(t, err.Error(), tt.msg)
			expect.Nil(t, kf)
		})
	}
}

func TestContextValueNoAllocForString(t *testing.T) {
	kf, err := keyfuncs.ContextValue(userKey{})
	must.NoError(t, err)
	r := withValue(userKey{}, "alice")
	expect.Zero(t, testing.AllocsPerRun(100, func() { _, _ = kf(r) }))
}

// The errors name the key in Go syntax, so that a missing value can be told
// from one of the wrong type in the logs.
func TestContextValueErrorsAreDistinct(t *testing.T) {
	kf, err := keyfuncs.ContextValue(userKey{})
	must.NoError(t, err)
	_, errMissing := kf(fakereq.New("192.0.2.7:1"))
	_, errEmpty := kf(withValue(userKey{}, ""))
	must.Error(t, errMissing)
	must.Error(t, errEmpty)
	expect.NotEqual(t, errMissing.Error(), errEmpty.Error())
	expect.Contains(t, errMissing.Error(), "keyfuncs_test.userKey{}")
	expect.False(t, errors.Is(errMissing, keyfuncs.ErrPeerNotIP))
}
