package jwtkey

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	gojwt "github.com/golang-jwt/jwt/v5"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

func ecdsaAlg(k *ecdsa.PublicKey) string {
	switch k.Curve {
	case elliptic.P256():
		return "ES256"
	case elliptic.P384():
		return "ES384"
	case elliptic.P521():
		return "ES512"
	}
	return ""
}

func algKind(alg string) keyKind {
	switch alg {
	case "HS256", "HS384", "HS512":
		return keyHMAC
	case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
		return keyRSA
	case "ES256", "ES384", "ES512":
		return keyECDSA
	case "EdDSA":
		return keyEd25519
	}
	return keyNone
}

func hmacMinLen(alg string) int {
	switch alg {
	case "HS384":
		return 48
	case "HS512":
		return 64
	}
	return 32
}

func newConfig(opts []Option) (*config, error) {
	c := &config{clock: core.SystemClock{}, claim: "sub", maxLen: DefaultMaxTokenLength}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: jwt: nil option", core.ErrInvalidOption)
		}
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *config) validate() error {
	switch {
	case c.nKeys == 0:
		return fmt.Errorf("%w: jwtkey.Subject: no key (WithHMACSecret, WithRSAPublicKey, WithECDSAPublicKey, WithEd25519PublicKey or WithVerificationKeyLookup)", core.ErrInvalidOption)
	case c.nKeys > 1:
		return fmt.Errorf("%w: jwtkey.Subject: more than one key (use WithVerificationKeyLookup to choose among keys)", core.ErrInvalidOption)
	}
	if c.algs == nil {
		switch c.kind {
		case keyHMAC:
			c.algs = []string{"HS256"}
		case keyRSA:
			c.algs = []string{"RS256"}
		case keyECDSA:
			c.algs = []string{ecdsaAlg(c.ecdsa)}
		case keyEd25519:
			c.algs = []string{"EdDSA"}
		default:
			return fmt.Errorf("%w: jwtkey.Subject: WithVerificationKeyLookup needs WithAlgorithms", core.ErrInvalidOption)
		}
	}
	for _, a := range c.algs {
		if c.kind == keyFunc {
			continue
		}
		if algKind(a) != c.kind || (c.kind == keyECDSA && a != ecdsaAlg(c.ecdsa)) {
			return fmt.Errorf("%w: jwtkey.Subject: algorithm %s does not suit the key", core.ErrInvalidOption, a)
		}
		if c.kind == keyHMAC && len(c.hmac) < hmacMinLen(a) {
			return fmt.Errorf("%w: jwtkey.Subject: %s needs a secret of at least %d bytes, got %d", core.ErrInvalidOption, a, hmacMinLen(a), len(c.hmac))
		}
	}
	return nil
}

func (c *config) parserOptions() []gojwt.ParserOption {
	opts := []gojwt.ParserOption{
		gojwt.WithStrictDecoding(),
		gojwt.WithJSONNumber(),
		gojwt.WithLeeway(c.leeway),
		gojwt.WithTimeFunc(c.clock.Now),
	}
	if c.algs != nil {
		opts = append(opts, gojwt.WithValidMethods(c.algs))
	}
	if c.issuer != "" {
		opts = append(opts, gojwt.WithIssuer(c.issuer))
	}
	if c.audience != nil {
		opts = append(opts, gojwt.WithAudience(c.audience...))
	}
	if c.needExp {
		opts = append(opts, gojwt.WithExpirationRequired())
	}
	return opts
}

// keyFor returns the verification key for a token whose alg the parser has
// already checked against the accepted list.
func (c *config) keyFor(t *gojwt.Token) (any, error) {
	if c.kind == keyFunc {
		return c.keyFn(t)
	}
	if algKind(t.Method.Alg()) != c.kind { // unreachable after WithValidMethods; kept as a second lock
		return nil, errors.New("algorithm does not suit the key")
	}
	switch c.kind {
	case keyHMAC:
		return c.hmac, nil
	case keyRSA:
		return c.rsa, nil
	case keyECDSA:
		return c.ecdsa, nil
	default:
		return c.ed25519, nil
	}
}

var (
	errNoBearer  = fmt.Errorf("%w: no bearer token in the Authorization header", keyfuncs.ErrKey)
	errTokenLong = fmt.Errorf("%w: bearer token too long", keyfuncs.ErrKey)
)

// bearer returns the token of an "Authorization: Bearer <token>" header (the
// scheme compared without regard to case), or an error.
func (c *config) bearer(r keyfuncs.Request) (string, error) {
	h := r.Header("Authorization")
	if len(h) > c.maxLen+64 {
		return "", errTokenLong
	}
	h = strings.Trim(h, " \t")
	const scheme = "bearer"
	if len(h) <= len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) || (h[len(scheme)] != ' ' && h[len(scheme)] != '\t') {
		return "", errNoBearer
	}
	tok := strings.Trim(h[len(scheme):], " \t")
	if tok == "" || strings.ContainsAny(tok, " \t") {
		return "", errNoBearer
	}
	if len(tok) > c.maxLen {
		return "", errTokenLong
	}
	return tok, nil
}

// claimKey returns the configured claim of verified claims as a key.
func (c *config) claimKey(claims gojwt.MapClaims) (string, error) {
	var k string
	switch v := claims[c.claim].(type) {
	case string:
		k = v
	case json.Number:
		k = v.String()
	}
	if k == "" {
		return "", fmt.Errorf("%w: token has no %q claim, or not a string or number", keyfuncs.ErrKey, c.claim)
	}
	return keyfuncs.Bounded(k, keyfuncs.DefaultMaxValueLength), nil
}

// Subject returns a key function that keys a request by the subject of
// the JSON Web Token in its "Authorization: Bearer <token>" header (the scheme
// is matched without regard to case).
//
// The token's signature is verified (through github.com/golang-jwt/jwt/v5)
// with exactly one key: WithHMACSecret, WithRSAPublicKey, WithECDSAPublicKey,
// WithEd25519PublicKey or WithVerificationKeyLookup; and only the algorithms of
// WithAlgorithms are accepted (by default the key's own). "alg": "none" is
// never accepted, and a token whose algorithm does not suit the key (an HS256
// token signed with the bytes of an RSA public key) is refused. exp and nbf
// are checked against WithClock's clock, within WithLeeway; iss and aud when
// WithIssuer and WithAudience are given. Tokens longer than WithMaxTokenLength
// (default DefaultMaxTokenLength) are refused before they are decoded. The key
// is the "sub" claim, or the claim of WithClaim, which must be a non-empty
// string or number; one longer than keyfuncs.DefaultMaxValueLength bytes is hashed.
//
// A missing, malformed, unverifiable, expired or not-yet-valid token is a key
// error wrapping keyfuncs.ErrKey (and the jwt package's error). The constructor
// returns an error wrapping core.ErrInvalidOption for no key, two keys, an
// algorithm that does not suit the key or an invalid option value. The key
// function is safe for concurrent use.
func Subject(opts ...Option) (keyfuncs.Func, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	parser := gojwt.NewParser(c.parserOptions()...)
	return func(r keyfuncs.Request) (string, error) {
		tok, err := c.bearer(r)
		if err != nil {
			return "", err
		}
		claims := gojwt.MapClaims{}
		if _, err := parser.ParseWithClaims(tok, claims, c.keyFor); err != nil {
			return "", fmt.Errorf("%w: invalid token: %w", keyfuncs.ErrKey, err)
		}
		return c.claimKey(claims)
	}, nil
}

// SubjectUnverified is Subject WITHOUT SIGNATURE VERIFICATION: anyone
// can write a token with any subject. Use it only behind a gateway that has
// already verified the token and refuses requests whose token it could not
// verify.
//
// It still parses strictly (three base64url segments, JSON header and
// claims), refuses "alg": "none" and empty signatures, bounds the token's
// length, and checks exp and nbf (and iss and aud when asked). It takes the
// same options as Subject except the keys and WithAlgorithms, which are an
// error here.
func SubjectUnverified(opts ...Option) (keyfuncs.Func, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if c.nKeys > 0 || c.algs != nil {
		return nil, fmt.Errorf("%w: jwtkey.SubjectUnverified: keys and algorithms are not used (use Subject to verify tokens)", core.ErrInvalidOption)
	}
	popts := c.parserOptions()
	parser := gojwt.NewParser(popts...)
	validator := gojwt.NewValidator(popts...)
	return func(r keyfuncs.Request) (string, error) {
		tok, err := c.bearer(r)
		if err != nil {
			return "", err
		}
		claims := gojwt.MapClaims{}
		t, _, err := parser.ParseUnverified(tok, claims)
		if err != nil {
			return "", fmt.Errorf("%w: invalid token: %w", keyfuncs.ErrKey, err)
		}
		if alg, _ := t.Header["alg"].(string); strings.EqualFold(alg, "none") || len(t.Signature) == 0 {
			return "", fmt.Errorf("%w: invalid token: unsigned", keyfuncs.ErrKey)
		}
		if err := validator.Validate(claims); err != nil {
			return "", fmt.Errorf("%w: invalid token: %w", keyfuncs.ErrKey, err)
		}
		return c.claimKey(claims)
	}, nil
}
