package jwtkey

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"fmt"
	"slices"
	"strings"
	"time"

	gojwt "github.com/golang-jwt/jwt/v5"

	"github.com/ratewarden/ratewarden/core"
)

// DefaultMaxTokenLength is the longest bearer token Subject parses; a
// longer one is a key error, refused before any decoding.
const DefaultMaxTokenLength = 8 << 10

// Option configures Subject and SubjectUnverified.
type Option func(*config) error

type keyKind uint8

const (
	keyNone keyKind = iota
	keyHMAC
	keyRSA
	keyECDSA
	keyEd25519
	keyFunc
)

type config struct {
	kind     keyKind
	nKeys    int
	hmac     []byte
	rsa      *rsa.PublicKey
	ecdsa    *ecdsa.PublicKey
	ed25519  ed25519.PublicKey
	keyFn    gojwt.Keyfunc
	algs     []string
	issuer   string
	audience []string
	leeway   time.Duration
	clock    core.Clock
	claim    string
	maxLen   int
	needExp  bool
}

func (c *config) setKey(k keyKind) {
	c.kind = k
	c.nKeys++
}

// WithHMACSecret verifies HS256, HS384 or HS512 tokens with secret (default
// algorithm: HS256). The secret must be at least as long as the hash (32 bytes
// for HS256, 48 for HS384, 64 for HS512), as RFC 7518 requires; it is copied.
func WithHMACSecret(secret []byte) Option {
	return func(c *config) error {
		if len(secret) == 0 {
			return fmt.Errorf("%w: jwtkey.WithHMACSecret: empty secret", core.ErrInvalidOption)
		}
		c.hmac = slices.Clone(secret)
		c.setKey(keyHMAC)
		return nil
	}
}

// WithRSAPublicKey verifies RS256/384/512 or PS256/384/512 tokens with key
// (default algorithm: RS256). The key must be at least 2048 bits.
func WithRSAPublicKey(key *rsa.PublicKey) Option {
	return func(c *config) error {
		if key == nil || key.N == nil {
			return fmt.Errorf("%w: jwtkey.WithRSAPublicKey: nil key", core.ErrInvalidOption)
		}
		if key.N.BitLen() < 2048 {
			return fmt.Errorf("%w: jwtkey.WithRSAPublicKey: %d-bit key, at least 2048 bits needed", core.ErrInvalidOption, key.N.BitLen())
		}
		c.rsa = key
		c.setKey(keyRSA)
		return nil
	}
}

// WithECDSAPublicKey verifies ECDSA tokens with key: ES256 for a P-256 key,
// ES384 for P-384, ES512 for P-521 (the algorithm follows from the curve).
func WithECDSAPublicKey(key *ecdsa.PublicKey) Option {
	return func(c *config) error {
		if key == nil || key.Curve == nil {
			return fmt.Errorf("%w: jwtkey.WithECDSAPublicKey: nil key", core.ErrInvalidOption)
		}
		if ecdsaAlg(key) == "" {
			return fmt.Errorf("%w: jwtkey.WithECDSAPublicKey: curve %s is not P-256, P-384 or P-521", core.ErrInvalidOption, key.Curve.Params().Name)
		}
		c.ecdsa = key
		c.setKey(keyECDSA)
		return nil
	}
}

// WithEd25519PublicKey verifies EdDSA (Ed25519) tokens with key.
func WithEd25519PublicKey(key ed25519.PublicKey) Option {
	return func(c *config) error {
		if len(key) != ed25519.PublicKeySize {
			return fmt.Errorf("%w: jwtkey.WithEd25519PublicKey: key is %d bytes, not %d", core.ErrInvalidOption, len(key), ed25519.PublicKeySize)
		}
		c.ed25519 = slices.Clone(key)
		c.setKey(keyEd25519)
		return nil
	}
}

// WithVerificationKeyLookup verifies tokens with the verification key fn
// returns for each token (key rotation, a JWKS cache). It needs
// WithAlgorithms: the algorithms are never taken from the token alone.
func WithVerificationKeyLookup(fn gojwt.Keyfunc) Option {
	return func(c *config) error {
		if fn == nil {
			return fmt.Errorf("%w: jwtkey.WithVerificationKeyLookup: nil function", core.ErrInvalidOption)
		}
		c.keyFn = fn
		c.setKey(keyFunc)
		return nil
	}
}

// WithAlgorithms lists the accepted signing algorithms ("HS256", "RS256",
// "PS256", "ES256", "EdDSA", ...). Every one must suit the key ("none" never
// does). Without it, the key's own algorithm is accepted: HS256, RS256, the
// curve's ES algorithm, or EdDSA.
func WithAlgorithms(algs ...string) Option {
	return func(c *config) error {
		if len(algs) == 0 {
			return fmt.Errorf("%w: jwtkey.WithAlgorithms: no algorithm", core.ErrInvalidOption)
		}
		for _, a := range algs {
			if strings.EqualFold(a, "none") {
				return fmt.Errorf("%w: jwtkey.WithAlgorithms: \"none\" is never accepted", core.ErrInvalidOption)
			}
			if algKind(a) == keyNone {
				return fmt.Errorf("%w: jwtkey.WithAlgorithms: unknown algorithm %q", core.ErrInvalidOption, a)
			}
		}
		c.algs = slices.Clone(algs)
		return nil
	}
}

// WithIssuer requires the iss claim to equal iss.
func WithIssuer(iss string) Option {
	return func(c *config) error {
		if iss == "" {
			return fmt.Errorf("%w: jwtkey.WithIssuer: empty issuer", core.ErrInvalidOption)
		}
		c.issuer = iss
		return nil
	}
}

// WithAudience requires the aud claim to contain at least one of aud.
func WithAudience(aud ...string) Option {
	return func(c *config) error {
		if len(aud) == 0 || slices.Contains(aud, "") {
			return fmt.Errorf("%w: jwtkey.WithAudience: no audience, or an empty one", core.ErrInvalidOption)
		}
		c.audience = slices.Clone(aud)
		return nil
	}
}

// WithLeeway allows for clock skew when checking exp and nbf: d from 0 to 5
// minutes (default 0).
func WithLeeway(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 || d > 5*time.Minute {
			return fmt.Errorf("%w: jwtkey.WithLeeway: %v is outside 0..5m", core.ErrInvalidOption, d)
		}
		c.leeway = d
		return nil
	}
}

// WithClock sets the clock exp and nbf are checked against (default
// core.SystemClock).
func WithClock(clock core.Clock) Option {
	return func(c *config) error {
		if clock == nil {
			return fmt.Errorf("%w: jwtkey.WithClock: nil clock", core.ErrInvalidOption)
		}
		c.clock = clock
		return nil
	}
}

// WithClaim keys by the named claim instead of "sub". The claim must be a
// non-empty string or a JSON number in the token.
func WithClaim(name string) Option {
	return func(c *config) error {
		if name == "" {
			return fmt.Errorf("%w: jwtkey.WithClaim: empty claim name", core.ErrInvalidOption)
		}
		c.claim = name
		return nil
	}
}

// WithMaxTokenLength sets the longest token parsed, from 64 bytes to 1 MiB
// (default DefaultMaxTokenLength).
func WithMaxTokenLength(n int) Option {
	return func(c *config) error {
		if n < 64 || n > 1<<20 {
			return fmt.Errorf("%w: jwtkey.WithMaxTokenLength: %d is outside 64..1048576", core.ErrInvalidOption, n)
		}
		c.maxLen = n
		return nil
	}
}

// WithExpirationRequired refuses tokens without an exp claim (by default a
// token without exp is accepted; one with an exp in the past never is).
func WithExpirationRequired() Option {
	return func(c *config) error {
		c.needExp = true
		return nil
	}
}
