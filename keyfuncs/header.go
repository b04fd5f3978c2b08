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

// Option configures IP, FrameworkIP, Header or ContextValue. Each option
// says which of them it applies to; the others refuse it with an error
// wrapping core.ErrInvalidOption.
type Option func(*config) error

// config is what the options set, for the constructor named by ctor.
type config struct {
	ctor   string // "IP", "FrameworkIP", "Header" or "ContextValue"
	ip     ipConfig
	header headerConfig
}

// apply applies opts in order.
func (c *config) apply(opts []Option) error {
	for _, o := range opts {
		if o == nil {
			return fmt.Errorf("%w: keyfuncs.%s: nil option", core.ErrInvalidOption, c.ctor)
		}
		if err := o(c); err != nil {
			return err
		}
	}
	return nil
}

// appliesTo reports an option given to a constructor it does not apply to.
func (c *config) appliesTo(option string, ctors ...string) error {
	for _, ctor := range ctors {
		if c.ctor == ctor {
			return nil
		}
	}
	return fmt.Errorf("%w: keyfuncs.%s: %s applies to %s only", core.ErrInvalidOption, c.ctor, option, strings.Join(ctors, " and "))
}

type headerConfig struct {
	maxLen int
	prefix string
}

// WithMaxValueLength sets the longest value (for Header, after the prefix is
// removed) that Header or ContextValue uses as the key as it is; n must be at
// least 1. Longer values are
// replaced by "sha256:" followed by the unpadded base64url SHA-256 of the
// value (50 bytes), so a client cannot make the store keep huge keys. The
// default is DefaultMaxValueLength.
func WithMaxValueLength(n int) Option {
	return func(cfg *config) error {
		if err := cfg.appliesTo("WithMaxValueLength", "Header", "ContextValue"); err != nil {
			return err
		}
		c := &cfg.header
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
func WithHeaderPrefix(prefix string) Option {
	return func(cfg *config) error {
		if err := cfg.appliesTo("WithHeaderPrefix", "Header"); err != nil {
			return err
		}
		c := &cfg.header
		if prefix == "" {
			return fmt.Errorf("%w: keyfuncs.WithHeaderPrefix: empty prefix", core.ErrInvalidOption)
		}
		c.prefix = prefix
		return nil
	}
}

// Header returns a key function that keys a request by the value of the
// named header, such as an API key: "X-API-Key". Surrounding spaces and tabs
// are trimmed. A missing or empty value is a key error wrapping ErrKey,
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
func Header(name string, opts ...Option) (Func, error) {
	if !ValidHeaderName(name) {
		return nil, fmt.Errorf("%w: keyfuncs.Header: %q is not a header field name", core.ErrInvalidOption, name)
	}
	cfg := config{ctor: "Header", header: headerConfig{maxLen: DefaultMaxValueLength}}
	if err := cfg.apply(opts); err != nil {
		return nil, err
	}
	c := cfg.header
	name = canonicalHeader(name)
	errMissing := fmt.Errorf("%w: header %s is missing or empty", ErrKey, name)
	errPrefix := fmt.Errorf("%w: header %s does not start with the expected prefix", ErrKey, name)
	return func(r Request) (string, error) {
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
		return Bounded(v, c.maxLen), nil
	}, nil
}

// Bounded returns v, or, when v is longer than maxLen bytes, "sha256:"
// followed by the unpadded base64url SHA-256 of v (50 bytes): what every key
// function here does to a value the client controls, so that no client can
// make the store keep huge keys. Use it in key functions of your own.
func Bounded(v string, maxLen int) string {
	if len(v) <= maxLen {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	var buf [len(hashPrefix) + 43]byte
	copy(buf[:], hashPrefix)
	base64.RawURLEncoding.Encode(buf[len(hashPrefix):], sum[:])
	return string(buf[:])
}

// ValidHeaderName reports whether name is an RFC 9110 token, as a header
// field's name (and a method) must be: one or more of the letters, digits
// and !#$%&'*+-.^_`|~. Options that name a header (keyfuncs.Header,
// httplimit.WithSettleHeader, a rules document's header fields) check it.
func ValidHeaderName(name string) bool {
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
