package keyfuncs

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/ratewarden/ratewarden/core"
)

// DefaultMaxValueLength is the longest header value, route or claim that is
// used as a key as it is; longer ones are replaced by their hash (see Header).
const DefaultMaxValueLength = 256

// hashPrefix starts every hashed key. The hash is SHA-256, written in unpadded
// base64url: 43 characters.
const hashPrefix = "sha256:"

// HeaderOption configures Header.
type HeaderOption func(*headerConfig) error

type headerConfig struct {
	maxLen int
	prefix string
}

// WithMaxValueLength sets the longest value (after the prefix is removed) that
// Header uses as the key as it is; n must be at least 1. Longer values are
// replaced by "sha256:" followed by the unpadded base64url SHA-256 of the
// value (50 bytes), so a client cannot make the store keep huge keys. The
// default is DefaultMaxValueLength.
func WithMaxValueLength(n int) HeaderOption {
	return func(c *headerConfig) error {
		if n < 1 {
			return fmt.Errorf("%w: keyfuncs.WithMaxValueLength: %d is below 1", core.ErrInvalidOption, n)
		}
		c.maxLen = n
		return nil
	}
}

// WithHeaderPrefix requires the value to start with prefix (compared without
// regard to ASCII case, like an authentication scheme: "Bearer ", "ApiKey ")
// and removes it; a value without it is a key error. The prefix must not be
// empty.
func WithHeaderPrefix(prefix string) HeaderOption {
	return func(c *headerConfig) error {
		if prefix == "" {
			return fmt.Errorf("%w: keyfuncs.WithHeaderPrefix: empty prefix", core.ErrInvalidOption)
		}
		c.prefix = prefix
		return nil
	}
}

// Header returns a key function that keys a request by the value of the
// named header, such as an API key: "X-API-Key". Surrounding spaces and tabs
// are trimmed. A missing or empty value is a key error wrapping core.ErrKey,
// never an empty key that every such client would share. A value longer than
// the bound (WithMaxValueLength, default DefaultMaxValueLength bytes) is
// replaced by its SHA-256 hash, so the key's length is bounded whatever the
// client sends. The value is used as given: Header does not check that the API
// key is valid, so put the limiter after authentication, or accept that
// invented keys get buckets of their own.
//
// The name must be a valid header field name; the constructor returns an
// error wrapping core.ErrInvalidOption otherwise, or for an invalid option.
// The key function is safe for concurrent use and does not allocate unless it
// hashes.
func Header(name string, opts ...HeaderOption) (core.KeyFunc, error) {
	if !validFieldName(name) {
		return nil, fmt.Errorf("%w: keyfuncs.Header: %q is not a header field name", core.ErrInvalidOption, name)
	}
	c := headerConfig{maxLen: DefaultMaxValueLength}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: keyfuncs.Header: nil option", core.ErrInvalidOption)
		}
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	name = canonicalHeader(name)
	errMissing := fmt.Errorf("%w: header %s is missing or empty", core.ErrKey, name)
	errPrefix := fmt.Errorf("%w: header %s does not start with the expected prefix", core.ErrKey, name)
	return func(r core.HTTPRequest) (string, error) {
		v := trimLeftOWS(r.Header(name))
		if c.prefix != "" && v != "" {
			if len(v) < len(c.prefix) || !strings.EqualFold(v[:len(c.prefix)], c.prefix) {
				if strings.EqualFold(trimOWS(v), trimOWS(c.prefix)) {
					return "", errMissing // the prefix and nothing else
				}
				return "", errPrefix
			}
			v = v[len(c.prefix):]
		}
		v = trimOWS(v)
		if v == "" {
			return "", errMissing
		}
		return bound(v, c.maxLen), nil
	}, nil
}

// bound returns v, or its hash when v is longer than maxLen bytes.
func bound(v string, maxLen int) string {
	if len(v) <= maxLen {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	var buf [len(hashPrefix) + 43]byte
	copy(buf[:], hashPrefix)
	base64.RawURLEncoding.Encode(buf[len(hashPrefix):], sum[:])
	return string(buf[:])
}

// validFieldName reports whether name is an RFC 9110 token.
func validFieldName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isTokenChar(name[i]) {
			return false
		}
	}
	return true
}
