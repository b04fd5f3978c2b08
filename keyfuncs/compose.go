package keyfuncs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ratewarden/ratewarden/core"
)

var (
	errNoRoute  = fmt.Errorf("%w: the request has no route and no path", ErrKey)
	errNoMethod = fmt.Errorf("%w: the request has no method", ErrKey)
	errNilFunc  = fmt.Errorf("%w: nil key function", ErrKey)
)

// Compose returns a key function that joins the keys of parts, in order, so
// that a limit can apply per user and route, say. Each part is written as its
// length in bytes, a colon and the key, and parts are separated by "|":
// ("a:b", "c") gives "3:a:b|1:c" and ("a", "b:c") gives "1:a|3:b:c", so
// different tuples never share a key. If a part fails, the composed key
// function fails with that part's error. Compose needs at least one part and
// no nil part; it returns an error wrapping core.ErrInvalidOption otherwise.
func Compose(parts ...Func) (Func, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: keyfuncs.Compose: no part", core.ErrInvalidOption)
	}
	for i, p := range parts {
		if p == nil {
			return nil, fmt.Errorf("%w: keyfuncs.Compose: part %d is nil", core.ErrInvalidOption, i)
		}
	}
	parts = append([]Func(nil), parts...)
	return func(r Request) (string, error) {
		var small [4]string
		keys := small[:0]
		if len(parts) > len(small) {
			keys = make([]string, 0, len(parts))
		}
		n := 0
		for _, p := range parts {
			k, err := p(r)
			if err != nil {
				return "", err
			}
			keys = append(keys, k)
			n += len(k) + 22
		}
		var b strings.Builder
		b.Grow(n)
		var num [20]byte
		for i, k := range keys {
			if i > 0 {
				b.WriteByte('|')
			}
			b.Write(strconv.AppendInt(num[:0], int64(len(k)), 10))
			b.WriteByte(':')
			b.WriteString(k)
		}
		return b.String(), nil
	}, nil
}

// Route returns a key function that keys a request by its matched route
// pattern (HTTPRequest.Route: Gin's FullPath, Echo's Path, Fiber's route path,
// net/http's Request.Pattern), so that each route has its own limit. When the
// router reports no pattern (no route matched, or a plain handler), it falls
// back to the request path; note that paths, unlike patterns, are chosen by the
// client, so a per-route limit keyed this way does not bound how many keys a
// client can create on unmatched paths (each key's length is bounded: values
// over DefaultMaxValueLength bytes are hashed). A request with neither is a key
// error.
func Route() Func {
	return func(r Request) (string, error) {
		k := r.Route()
		if k == "" {
			k = r.Path()
		}
		if k == "" {
			return "", errNoRoute
		}
		return Bounded(k, DefaultMaxValueLength), nil
	}
}

// Method returns a key function that keys a request by its method ("GET"),
// hashed if longer than DefaultMaxValueLength bytes. An empty method is a key
// error.
func Method() Func {
	return func(r Request) (string, error) {
		m := r.Method()
		if m == "" {
			return "", errNoMethod
		}
		return Bounded(m, DefaultMaxValueLength), nil
	}
}

// Static returns a key function that gives every request the same key: one
// limit shared by all clients (a global limit, protecting a backend).
func Static(key string) Func {
	return func(Request) (string, error) { return key, nil }
}

// Fallback returns a key function that uses primary's key, or fallback's when
// primary fails (an API key, else the client IP). The keys are tagged with
// their source: "p:" and primary's key, or "f:" and fallback's, so that a
// client cannot send an API key that looks like someone's IP address and
// share that IP's bucket. When both fail the error joins both errors (and
// wraps ErrKey). A nil function counts as one that always fails.
func Fallback(primary, fallback Func) Func {
	return func(r Request) (string, error) {
		perr := errNilFunc
		if primary != nil {
			k, err := primary(r)
			if err == nil {
				return "p:" + k, nil
			}
			perr = err
		}
		ferr := errNilFunc
		if fallback != nil {
			k, err := fallback(r)
			if err == nil {
				return "f:" + k, nil
			}
			ferr = err
		}
		if !errors.Is(perr, ErrKey) && !errors.Is(ferr, ErrKey) {
			return "", errors.Join(ErrKey, perr, ferr)
		}
		return "", errors.Join(perr, ferr)
	}
}
