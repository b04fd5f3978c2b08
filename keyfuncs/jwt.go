package keyfuncs

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/ratewarden/ratewarden/core"
)

// DefaultMaxTokenLength is the longest bearer token JWTSubject parses; a
// longer one is a key error, refused before any decoding.
const DefaultMaxTokenLength = 8 << 10

// JWTOption configures JWTSubject and JWTSubjectUnverified.
type JWTOption func(*jwtConfig) error

type keyKind uint8

const (
	keyNone keyKind = iota
	keyHMAC
	keyRSA
	keyECDSA
	keyEd25519
	keyFunc
)

type jwtConfig struct {
	kind     keyKind
	nKeys    int
	hmac     []byte
	rsa      *rsa.PublicKey
	ecdsa    *ecdsa.PublicKey
	ed25519  ed25519.PublicKey
	keyFn    jwt.Keyfunc
	algs     []string
	issuer   string
	audience []string
	leeway   time.Duration
	clock    core.Clock
	claim    string
	maxLen   int
	needExp  bool
}

func (c *jwtConfig) setKey(k keyKind) {
	c.kind = k
	c.nKeys++
}

// WithHMACSecret verifies HS256, HS384 or HS512 tokens with secret (default
// algorithm: HS256). The secret must be at least as long as the hash (32 bytes
// for HS256, 48 for HS384, 64 for HS512), as RFC 7518 requires; it is copied.
func WithHMACSecret(secret []byte) JWTOption {
	return func(c *jwtConfig) error {
		if len(secret) == 0 {
			return fmt.Errorf("%w: keyfuncs.WithHMACSecret: empty secret", core.ErrInvalidOption)
		}
		c.hmac = slices.Clone(secret)
		c.setKey(keyHMAC)
		return nil
	}
}

// WithRSAPublicKey verifies RS256/384/512 or PS256/384/512 tokens with key
// (default algorithm: RS256). The key must be at least 2048 bits.
func WithRSAPublicKey(key *rsa.PublicKey) JWTOption {
	return func(c *jwtConfig) error {
		if key == nil || key.N == nil {
			return fmt.Errorf("%w: keyfuncs.WithRSAPublicKey: nil key", core.ErrInvalidOption)
		}
		if key.N.BitLen() < 2048 {
			return fmt.Errorf("%w: keyfuncs.WithRSAPublicKey: %d-bit key, at least 2048 bits needed", core.ErrInvalidOption, key.N.BitLen())
		}
		c.rsa = key
		c.setKey(keyRSA)
		return nil
	}
}

// WithECDSAPublicKey verifies ECDSA tokens with key: ES256 for a P-256 key,
// ES384 for P-384, ES512 for P-521 (the algorithm follows from the curve).
func WithECDSAPublicKey(key *ecdsa.PublicKey) JWTOption {
	return func(c *jwtConfig) error {
		if key == nil || key.Curve == nil {
			return fmt.Errorf("%w: keyfuncs.WithECDSAPublicKey: nil key", core.ErrInvalidOption)
		}
		if ecdsaAlg(key) == "" {
			return fmt.Errorf("%w: keyfuncs.WithECDSAPublicKey: curve %s is not P-256, P-384 or P-521", core.ErrInvalidOption, key.Curve.Params().Name)
		}
		c.ecdsa = key
		c.setKey(keyECDSA)
		return nil
	}
}

// WithEd25519PublicKey verifies EdDSA (Ed25519) tokens with key.
func WithEd25519PublicKey(key ed25519.PublicKey) JWTOption {
	return func(c *jwtConfig) error {
		if len(key) != ed25519.PublicKeySize {
			return fmt.Errorf("%w: keyfuncs.WithEd25519PublicKey: key is %d bytes, not %d", core.ErrInvalidOption, len(key), ed25519.PublicKeySize)
		}
		c.ed25519 = slices.Clone(key)
		c.setKey(keyEd25519)
		return nil
	}
}

// WithKeyFunc verifies tokens with the key fn returns for each token (key
// rotation, a JWKS cache). It needs WithAlgorithms: the algorithms are never
// taken from the token alone.
func WithKeyFunc(fn jwt.Keyfunc) JWTOption {
	return func(c *jwtConfig) error {
		if fn == nil {
			return fmt.Errorf("%w: keyfuncs.WithKeyFunc: nil function", core.ErrInvalidOption)
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
func WithAlgorithms(algs ...string) JWTOption {
	return func(c *jwtConfig) error {
		if len(algs) == 0 {
			return fmt.Errorf("%w: keyfuncs.WithAlgorithms: no algorithm", core.ErrInvalidOption)
		}
		for _, a := range algs {
			if strings.EqualFold(a, "none") {
				return fmt.Errorf("%w: keyfuncs.WithAlgorithms: \"none\" is never accepted", core.ErrInvalidOption)
			}
			if algKind(a) == keyNone {
				return fmt.Errorf("%w: keyfuncs.WithAlgorithms: unknown algorithm %q", core.ErrInvalidOption, a)
			}
		}
		c.algs = slices.Clone(algs)
		return nil
	}
}

// WithIssuer requires the iss claim to equal iss.
func WithIssuer(iss string) JWTOption {
	return func(c *jwtConfig) error {
		if iss == "" {
			return fmt.Errorf("%w: keyfuncs.WithIssuer: empty issuer", core.ErrInvalidOption)
		}
		c.issuer = iss
		return nil
	}
}

// WithAudience requires the aud claim to contain at least one of aud.
func WithAudience(aud ...string) JWTOption {
	return func(c *jwtConfig) error {
		if len(aud) == 0 || slices.Contains(aud, "") {
			return fmt.Errorf("%w: keyfuncs.WithAudience: no audience, or an empty one", core.ErrInvalidOption)
		}
		c.audience = slices.Clone(aud)
		return nil
	}
}

// WithLeeway allows for clock skew when checking exp and nbf: d from 0 to 5
// minutes (default 0).
func WithLeeway(d time.Duration) JWTOption {
	return func(c *jwtConfig) error {
		if d < 0 || d > 5*time.Minute {
			return fmt.Errorf("%w: keyfuncs.WithLeeway: %v is outside 0..5m", core.ErrInvalidOption, d)
		}
		c.leeway = d
		return nil
	}
}

// WithClock sets the clock exp and nbf are checked against (default
// core.SystemClock).
func WithClock(clock core.Clock) JWTOption {
	return func(c *jwtConfig) error {
		if clock == nil {
			return fmt.Errorf("%w: keyfuncs.WithClock: nil clock", core.ErrInvalidOption)
		}
		c.clock = clock
		return nil
	}
}

// WithClaim keys by the named claim instead of "sub". The claim must be a
// non-empty string or a JSON number in the token.
func WithClaim(name string) JWTOption {
	return func(c *jwtConfig) error {
		if name == "" {
			return fmt.Errorf("%w: keyfuncs.WithClaim: empty claim name", core.ErrInvalidOption)
		}
		c.claim = name
		return nil
	}
}

// WithMaxTokenLength sets the longest token parsed, from 64 bytes to 1 MiB
// (default DefaultMaxTokenLength).
func WithMaxTokenLength(n int) JWTOption {
	return func(c *jwtConfig) error {
		if n < 64 || n > 1<<20 {
			return fmt.Errorf("%w: keyfuncs.WithMaxTokenLength: %d is outside 64..1048576", core.ErrInvalidOption, n)
		}
		c.maxLen = n
		return nil
	}
}

// WithExpirationRequired refuses tokens without an exp claim (by default a
// token without exp is accepted; one with an exp in the past never is).
func WithExpirationRequired() JWTOption {
	return func(c *jwtConfig) error {
		c.needExp = true
		return nil
	}
}

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

func newJWTConfig(opts []JWTOption) (*jwtConfig, error) {
	c := &jwtConfig{clock: core.SystemClock{}, claim: "sub", maxLen: DefaultMaxTokenLength}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: keyfuncs: nil JWTOption", core.ErrInvalidOption)
		}
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *jwtConfig) validate() error {
	switch {
	case c.nKeys == 0:
		return fmt.Errorf("%w: keyfuncs.JWTSubject: no key (WithHMACSecret, WithRSAPublicKey, WithECDSAPublicKey, WithEd25519PublicKey or WithKeyFunc)", core.ErrInvalidOption)
	case c.nKeys > 1:
		return fmt.Errorf("%w: keyfuncs.JWTSubject: more than one key (use WithKeyFunc to choose among keys)", core.ErrInvalidOption)
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
			return fmt.Errorf("%w: keyfuncs.JWTSubject: WithKeyFunc needs WithAlgorithms", core.ErrInvalidOption)
		}
	}
	for _, a := range c.algs {
		if c.kind == keyFunc {
			continue
		}
		if algKind(a) != c.kind || (c.kind == keyECDSA && a != ecdsaAlg(c.ecdsa)) {
			return fmt.Errorf("%w: keyfuncs.JWTSubject: algorithm %s does not suit the key", core.ErrInvalidOption, a)
		}
		if c.kind == keyHMAC && len(c.hmac) < hmacMinLen(a) {
			return fmt.Errorf("%w: keyfuncs.JWTSubject: %s needs a secret of at least %d bytes, got %d", core.ErrInvalidOption, a, hmacMinLen(a), len(c.hmac))
		}
	}
	return nil
}

func (c *jwtConfig) parserOptions() []jwt.ParserOption {
	opts := []jwt.ParserOption{
		jwt.WithStrictDecoding(),
		jwt.WithJSONNumber(),
		jwt.WithLeeway(c.leeway),
		jwt.WithTimeFunc(c.clock.Now),
	}
	if c.algs != nil {
		opts = append(opts, jwt.WithValidMethods(c.algs))
	}
	if c.issuer != "" {
		opts = append(opts, jwt.WithIssuer(c.issuer))
	}
	if c.audience != nil {
		opts = append(opts, jwt.WithAudience(c.audience...))
	}
	if c.needExp {
		opts = append(opts, jwt.WithExpirationRequired())
	}
	return opts
}

// keyFor returns the verification key for a token whose alg the parser has
// already checked against the accepted list.
func (c *jwtConfig) keyFor(t *jwt.Token) (any, error) {
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
	errNoBearer  = fmt.Errorf("%w: no bearer token in the Authorization header", core.ErrKey)
	errTokenLong = fmt.Errorf("%w: bearer token too long", core.ErrKey)
)

// bearer returns the token of an "Authorization: Bearer <token>" header (the
// scheme compared without regard to case), or an error.
func (c *jwtConfig) bearer(r core.HTTPRequest) (string, error) {
	h := r.Header("Authorization")
	if len(h) > c.maxLen+64 {
		return "", errTokenLong
	}
	h = trimOWS(h)
	const scheme = "bearer"
	if len(h) <= len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) || (h[len(scheme)] != ' ' && h[len(scheme)] != '\t') {
		return "", errNoBearer
	}
	tok := trimOWS(h[len(scheme):])
	if tok == "" || strings.ContainsAny(tok, " \t") {
		return "", errNoBearer
	}
	if len(tok) > c.maxLen {
		return "", errTokenLong
	}
	return tok, nil
}

// claimKey returns the configured claim of verified claims as a key.
func (c *jwtConfig) claimKey(claims jwt.MapClaims) (string, error) {
	var k string
	switch v := claims[c.claim].(type) {
	case string:
		k = v
	case json.Number:
		k = v.String()
	}
	if k == "" {
		return "", fmt.Errorf("%w: token has no %q claim, or not a string or number", core.ErrKey, c.claim)
	}
	return bound(k, DefaultMaxValueLength), nil
}

// JWTSubject returns a key function that keys a request by the subject of
// the JSON Web Token in its "Authorization: Bearer <token>" header (the scheme
// is matched without regard to case).
//
// The token's signature is verified (through github.com/golang-jwt/jwt/v5)
// with exactly one key: WithHMACSecret, WithRSAPublicKey, WithECDSAPublicKey,
// WithEd25519PublicKey or WithKeyFunc; and only the algorithms of
// WithAlgorithms are accepted (by default the key's own). "alg": "none" is
// never accepted, and a token whose algorithm does not suit the key (an HS256
// token signed with the bytes of an RSA public key) is refused. exp and nbf
// are checked against WithClock's clock, within WithLeeway; iss and aud when
// WithIssuer and WithAudience are given. Tokens longer than WithMaxTokenLength
// (default DefaultMaxTokenLength) are refused before they are decoded. The key
// is the "sub" claim, or the claim of WithClaim, which must be a non-empty
// string or number; one longer than DefaultMaxValueLength bytes is hashed.
//
// A missing, malformed, unverifiable, expired or not-yet-valid token is a key
// error wrapping core.ErrKey (and the jwt package's error). The constructor
// returns an error wrapping core.ErrInvalidOption for no key, two keys, an
// algorithm that does not suit the key or an invalid option value. The key
// function is safe for concurrent use.
func JWTSubject(opts ...JWTOption) (core.KeyFunc, error) {
	c, err := newJWTConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	parser := jwt.NewParser(c.parserOptions()...)
	return func(r core.HTTPRequest) (string, error) {
		tok, err := c.bearer(r)
		if err != nil {
			return "", err
		}
		claims := jwt.MapClaims{}
		if _, err := parser.ParseWithClaims(tok, claims, c.keyFor); err != nil {
			return "", fmt.Errorf("%w: invalid token: %w", core.ErrKey, err)
		}
		return c.claimKey(claims)
	}, nil
}

// JWTSubjectUnverified is JWTSubject WITHOUT SIGNATURE VERIFICATION: anyone
// can write a token with any subject. Use it only behind a gateway that has
// already verified the token and refuses requests whose token it could not
// verify.
//
// It still parses strictly (three base64url segments, JSON header and
// claims), refuses "alg": "none" and empty signatures, bounds the token's
// length, and checks exp and nbf (and iss and aud when asked). It takes the
// same options as JWTSubject except the keys and WithAlgorithms, which are an
// error here.
func JWTSubjectUnverified(opts ...JWTOption) (core.KeyFunc, error) {
	c, err := newJWTConfig(opts)
	if err != nil {
		return nil, err
	}
	if c.nKeys > 0 || c.algs != nil {
		return nil, fmt.Errorf("%w: keyfuncs.JWTSubjectUnverified: keys and algorithms are not used (use JWTSubject to verify tokens)", core.ErrInvalidOption)
	}
	popts := c.parserOptions()
	parser := jwt.NewParser(popts...)
	validator := jwt.NewValidator(popts...)
	return func(r core.HTTPRequest) (string, error) {
		tok, err := c.bearer(r)
		if err != nil {
			return "", err
		}
		claims := jwt.MapClaims{}
		t, _, err := parser.ParseUnverified(tok, claims)
		if err != nil {
			return "", fmt.Errorf("%w: invalid token: %w", core.ErrKey, err)
		}
		if alg, _ := t.Header["alg"].(string); strings.EqualFold(alg, "none") || len(t.Signature) == 0 {
			return "", fmt.Errorf("%w: invalid token: unsigned", core.ErrKey)
		}
		if err := validator.Validate(claims); err != nil {
			return "", fmt.Errorf("%w: invalid token: %w", core.ErrKey, err)
		}
		return c.claimKey(claims)
	}, nil
}
