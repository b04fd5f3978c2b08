package keyfuncs

import (
	"fmt"
	"reflect"
	"strconv"

	"github.com/ratewarden/ratewarden/core"
)

// ContextValue returns a key function that keys a request by the value
// stored under key in its context (Request.Context): typically the user or
// tenant ID that authentication middleware, run before the limiter, found.
// It works the same in every adapter; the line that stores the value is:
//
//	net/http: next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, id)))
//	Gin:      c.Set("user", id)
//	Echo:     c.Set("user", id)
//	Fiber:    c.Locals("user", id)
//
// and the key function is then ContextValue(userKey{}) for net/http,
// ContextValue("user") for the others (Gin's and Fiber's views also find
// values stored under keys of other types; Echo's c.Set takes strings only,
// so with Echo other key types are looked up in c.Request().Context()).
//
// The value may be a string, a []byte, a fmt.Stringer (a UUID, say), or an
// integer of any type, written in base 10; a named type whose underlying type
// is a string or an integer is read as one. A missing or nil value, an empty
// one, or one of another type is a key error wrapping ErrKey that says which,
// never an empty key that every such request would share. A value longer than
// the bound (WithMaxValueLength, default DefaultMaxValueLength bytes) is
// replaced by its SHA-256 hash. The key is the value's text as it is, with no
// tag: the string "42" and the integer 42 are the same client, and
// Limiter.Reset takes the text. Keys of other sources can look alike; combine
// sources with Fallback or Compose, which tag them apart.
//
// The key must be non-nil and comparable (as context.WithValue demands);
// WithMaxValueLength is the only option that applies. The constructor returns
// an error wrapping core.ErrInvalidOption otherwise. The key function is safe
// for concurrent use and allocates nothing for a string value that needs no
// hashing.
func ContextValue(key any, opts ...Option) (Func, error) {
	if key == nil {
		return nil, fmt.Errorf("%w: keyfuncs.ContextValue: nil key", core.ErrInvalidOption)
	}
	if !reflect.ValueOf(key).Comparable() {
		return nil, fmt.Errorf("%w: keyfuncs.ContextValue: the key, a %T, is not comparable", core.ErrInvalidOption, key)
	}
	cfg := config{ctor: "ContextValue", header: headerConfig{maxLen: DefaultMaxValueLength}}
	if err := cfg.apply(opts); err != nil {
		return nil, err
	}
	cv := &contextValue{key: key, maxLen: cfg.header.maxLen, name: fmt.Sprintf("%#v", key)}
	cv.errMissing = fmt.Errorf("%w: context value %s is missing or nil", ErrKey, cv.name)
	cv.errEmpty = fmt.Errorf("%w: context value %s is empty", ErrKey, cv.name)
	return cv.extract, nil
}

// contextValue is a ContextValue key function and its precomputed errors.
type contextValue struct {
	key        any
	name       string // the key, as Go syntax, for errors
	maxLen     int
	errMissing error
	errEmpty   error
}

func (cv *contextValue) extract(r Request) (string, error) {
	ctx := r.Context()
	if ctx == nil {
		return "", cv.errMissing
	}
	v := ctx.Value(cv.key)
	if v == nil {
		return "", cv.errMissing
	}
	s, err := cv.text(v)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", cv.errEmpty
	}
	return Bounded(s, cv.maxLen), nil
}

// text returns v's text, or an error saying why v has none.
func (cv *contextValue) text(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	case fmt.Stringer:
		return cv.stringerText(x)
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String:
		return rv.String(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(rv.Uint(), 10), nil
	}
	return "", fmt.Errorf("%w: context value %s is a %T, not a string, []byte, fmt.Stringer or integer", ErrKey, cv.name, v)
}

// stringerText calls s.String, turning a nil pointer and a panic into key
// errors: the request path never panics on what the app stored.
func (cv *contextValue) stringerText(s fmt.Stringer) (text string, err error) {
	if rv := reflect.ValueOf(s); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return "", fmt.Errorf("%w: context value %s is a nil %T", ErrKey, cv.name, s)
	}
	defer func() {
		if p := recover(); p != nil {
			text, err = "", fmt.Errorf("%w: context value %s: its String method (%T) panicked", ErrKey, cv.name, s)
		}
	}()
	return s.String(), nil
}
