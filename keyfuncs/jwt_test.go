package keyfuncs_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	testNow    = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	hmacSecret = []byte("0123456789abcdef0123456789abcdef") // 32 bytes
	otherHMAC  = []byte("fedcba9876543210fedcba9876543210")

	keysOnce                 sync.Once
	rsaKey, otherRSA         *rsa.PrivateKey
	ecKey, otherEC, ec384Key *ecdsa.PrivateKey
	edPub, otherEdPub        ed25519.PublicKey
	edKey                    ed25519.PrivateKey
)

func keys(t testing.TB) {
	t.Helper()
	keysOnce.Do(func() {
		var err error
		must := func(e error) {
			if e != nil {
				panic(e)
			}
		}
		rsaKey, err = rsa.GenerateKey(rand.Reader, 2048)
		must(err)
		otherRSA, err = rsa.GenerateKey(rand.Reader, 2048)
		must(err)
		ecKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		must(err)
		otherEC, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		must(err)
		ec384Key, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		must(err)
		edPub, edKey, err = ed25519.GenerateKey(rand.Reader)
		must(err)
		otherEdPub, _, err = ed25519.GenerateKey(rand.Reader)
		must(err)
	})
}

func sign(t testing.TB, m jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(m, claims).SignedString(key)
	require.NoError(t, err)
	return s
}

func claims(extra ...any) jwt.MapClaims {
	c := jwt.MapClaims{"sub": "user-1", "exp": testNow.Add(time.Hour).Unix(), "nbf": testNow.Add(-time.Minute).Unix()}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == nil {
			delete(c, extra[i].(string))
			continue
		}
		c[extra[i].(string)] = extra[i+1]
	}
	return c
}

func bearer(tok string) *req { return newReq("192.0.2.1:1", "Authorization", "Bearer "+tok) }

func TestJWTSubjectAccepts(t *testing.T) {
	keys(t)
	clock := keyfuncs.WithClock(core.NewManualClock(testNow))
	tests := []struct {
		name string
		opts []keyfuncs.JWTOption
		tok  string
	}{
		{"HS256", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(hmacSecret)}, sign(t, jwt.SigningMethodHS256, hmacSecret, claims())},
		{"RS256", []keyfuncs.JWTOption{keyfuncs.WithRSAPublicKey(&rsaKey.PublicKey)}, sign(t, jwt.SigningMethodRS256, rsaKey, claims())},
		{"PS384 listed", []keyfuncs.JWTOption{keyfuncs.WithRSAPublicKey(&rsaKey.PublicKey), keyfuncs.WithAlgorithms("RS256", "PS384")}, sign(t, jwt.SigningMethodPS384, rsaKey, claims())},
		{"ES256", []keyfuncs.JWTOption{keyfuncs.WithECDSAPublicKey(&ecKey.PublicKey)}, sign(t, jwt.SigningMethodES256, ecKey, claims())},
		{"ES384 from the curve", []keyfuncs.JWTOption{keyfuncs.WithECDSAPublicKey(&ec384Key.PublicKey)}, sign(t, jwt.SigningMethodES384, ec384Key, claims())},
		{"EdDSA", []keyfuncs.JWTOption{keyfuncs.WithEd25519PublicKey(edPub)}, sign(t, jwt.SigningMethodEdDSA, edKey, claims())},
		{"key func", []keyfuncs.JWTOption{keyfuncs.WithKeyFunc(func(*jwt.Token) (any, error) { return edPub, nil }), keyfuncs.WithAlgorithms("EdDSA")}, sign(t, jwt.SigningMethodEdDSA, edKey, claims())},
		{"no exp by default", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(hmacSecret)}, sign(t, jwt.SigningMethodHS256, hmacSecret, claims("exp", nil))},
		{"issuer and audience", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(hmacSecret), keyfuncs.WithIssuer("idp"), keyfuncs.WithAudience("api", "web")}, sign(t, jwt.SigningMethodHS256, hmacSecret, claims("iss", "idp", "aud", []string{"web"}))},
		{"expired within leeway", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(hmacSecret), keyfuncs.WithLeeway(time.Minute)}, sign(t, jwt.SigningMethodHS256, hmacSecret, claims("exp", testNow.Add(-30*time.Second).Unix()))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kf, err := keyfuncs.JWTSubject(append(tt.opts, clock)...)
			require.NoError(t, err)
			got, err := kf(bearer(tt.tok))
			require.NoError(t, err)
			assert.Equal(t, "user-1", got)
		})
	}
}

func TestJWTSubjectRejects(t *testing.T) {
	keys(t)
	hs := sign(t, jwt.SigningMethodHS256, hmacSecret, claims())
	pubDER, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	require.NoError(t, err)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	none := sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims())
	parts := strings.Split(hs, ".")
	tamperedClaims := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"admin"}`))

	hmacOpt := keyfuncs.WithHMACSecret(hmacSecret)
	rsaOpt := keyfuncs.WithRSAPublicKey(&rsaKey.PublicKey)
	tests := []struct {
		name   string
		opts   []keyfuncs.JWTOption
		header []string
	}{
		{"no header", []keyfuncs.JWTOption{hmacOpt}, nil},
		{"basic scheme", []keyfuncs.JWTOption{hmacOpt}, []string{"Authorization", "Basic " + hs}},
		{"scheme glued", []keyfuncs.JWTOption{hmacOpt}, []string{"Authorization", "Bearer" + hs}},
		{"scheme only", []keyfuncs.JWTOption{hmacOpt}, []string{"Authorization", "Bearer   "}},
		{"two tokens", []keyfuncs.JWTOption{hmacOpt}, []string{"Authorization", "Bearer " + hs + " " + hs}},
		{"wrong hmac secret", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(otherHMAC)}, []string{"Authorization", "Bearer " + hs}},
		{"wrong rsa key", []keyfuncs.JWTOption{keyfuncs.WithRSAPublicKey(&otherRSA.PublicKey)}, []string{"Authorization", "Bearer " + sign(t, jwt.SigningMethodRS256, rsaKey, claims())}},
		{"wrong ecdsa key", []keyfuncs.JWTOption{keyfuncs.WithECDSAPublicKey(&otherEC.PublicKey)}, []string{"Authorization", "Bearer " + sign(t, jwt.SigningMethodES256, ecKey, claims())}},
		{"wrong ed25519 key", []keyfuncs.JWTOption{keyfuncs.WithEd25519PublicKey(otherEdPub)}, []string{"Authorization", "Bearer " + sign(t, jwt.SigningMethodEdDSA, edKey, claims())}},
		{"expired", []keyfuncs.JWTOption{hmacOpt}, []string{"Authorization", "Bearer " + sign(t, jwt.SigningMethodHS256, hmacSecret, claims("exp", testNow.Add(-time.Second).Unix()))}},
		{"expired beyond leeway", []keyfuncs.JWTOption{hmacOpt, keyfuncs.WithLeeway(time.Minute)}, []string{"Authorization", "Bearer " + sign(t, jwt.SigningMethodHS256, hmacSecret, claims("exp", testNow.Add(-2*time.Minute).Unix()))}},
		{"not yet valid", []keyfuncs.JWTOption{hmacOpt}, []string{"Authorization", "Bearer " + sign(t, jwt.SigningMethodHS256, hmacSecret, claims("nbf", testNow.Add(time.Minute).Unix()))}},
		{"exp required", []keyfuncs.JWTOption{hmacOpt, keyfuncs.WithExpirationRequired()}, []string{"Authorization", "Bearer " + sign(t, jwt.SigningMethodHS256, hmacSecret, claims("exp", nil))}},
		{"alg none", []keyfuncs.JWTOption{hmacOpt}, []string{"Authorization", "Bearer " + none}},
		{"alg confusion: HS256 signed with the RSA public key", []keyfuncs.JWTOption{rsaOpt}, []string{"Authorization", "Bearer " + sign(t, jwt.SigningMethodHS256, pubPEM, claims())}},
		{"alg confusion with HS256 listed for a key func", []keyfuncs.JWTOption{keyfuncs.WithKeyFunc(func(*jwt.Token) (any, error) { return &rsaKey.PublicKey, nil }), keyfuncs.WithAlgorithms("RS256", "HS256")}, []string{"Authorization", "Bearer " + sign(t, jwt.SigningMethodHS256, pubPEM, claims())}},
		{"unlisted algorithm", []keyfuncs.JWTOption{rsaOpt}, []string{"Authorization", "Bearer " + sign(t, jwt.SigningMethodRS512, rsaKey, claims())}},
		{"tampered claims", []keyfuncs.JWTOption{hmacOpt}, []string{"Authorization", "Bearer " + parts[0] + "." + tamperedClaims + "." + parts[2]}},
		{"malformed", []keyfuncs.JWTOption{hmacOpt}, []string{"Authorization", "Bearer not.a.jwt"}},
		{"two segments", []keyfuncs.JWTOption{hmacOpt}, []string{"Authorization", "Bearer " + parts[0] + "." + parts[1]}},
		{"padded segment", []keyfuncs.JWTOption{hmacOpt}, []string{"Authorization", "Bearer " + parts[0] + "=." + parts[1] + "." + parts[2]}},
		{"huge", []keyfuncs.JWTOption{hmacOpt}, []string{"Authorization", "Bearer " + strings.Repeat("a", 1<<20)}},
		{"just over the bound", []keyfuncs.JWTOption{hmacOpt, keyfuncs.WithMaxTokenLength(len(hs) - 1)}, []string{"Authorization", "Bearer " + hs}},
		{"wrong issuer", []keyfuncs.JWTOption{hmacOpt, keyfuncs.WithIssuer("idp")}, []string{"Authorization", "Bearer " + sign(t, jwt.SigningMethodHS256, hmacSecret, claims("iss", "evil"))}},
		{"wrong audience", []keyfuncs.JWTOption{hmacOpt, keyfuncs.WithAudience("api")}, []string{"Authorization", "Bearer " + sign(t, jwt.SigningMethodHS256, hmacSecret, claims("aud", "other"))}},
		{"no sub", []keyfuncs.JWTOption{hmacOpt}, []string{"Authorization", "Bearer " + sign(t, jwt.SigningMethodHS256, hmacSecret, claims("sub", nil))}},
		{"empty sub", []keyfuncs.JWTOption{hmacOpt}, []string{"Authorization", "Bearer " + sign(t, jwt.SigningMethodHS256, hmacSecret, claims("sub", ""))}},
		{"object sub", []keyfuncs.JWTOption{hmacOpt}, []string{"Authorization", "Bearer " + sign(t, jwt.SigningMethodHS256, hmacSecret, claims("sub", map[string]any{"a": 1}))}},
		{"key func error", []keyfuncs.JWTOption{keyfuncs.WithKeyFunc(func(*jwt.Token) (any, error) { return nil, assert.AnError }), keyfuncs.WithAlgorithms("HS256")}, []string{"Authorization", "Bearer " + hs}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kf, err := keyfuncs.JWTSubject(append(tt.opts, keyfuncs.WithClock(core.NewManualClock(testNow)))...)
			require.NoError(t, err)
			got, err := kf(newReq("192.0.2.1:1", tt.header...))
			require.ErrorIs(t, err, core.ErrKey)
			assert.Empty(t, got)
		})
	}
}

func TestJWTSubjectClaimAndScheme(t *testing.T) {
	kf, err := keyfuncs.JWTSubject(keyfuncs.WithHMACSecret(hmacSecret), keyfuncs.WithClaim("tenant"), keyfuncs.WithClock(core.NewManualClock(testNow)))
	require.NoError(t, err)
	tests := []struct {
		name, header, want string
	}{
		{"string claim", "Bearer " + sign(t, jwt.SigningMethodHS256, hmacSecret, claims("tenant", "acme")), "acme"},
		{"number claim", "Bearer " + sign(t, jwt.SigningMethodHS256, hmacSecret, claims("tenant", 12345678901)), "12345678901"},
		{"scheme in any case, tab", "bEaReR\t" + sign(t, jwt.SigningMethodHS256, hmacSecret, claims("tenant", "acme")), "acme"},
		{"long claim hashed", "Bearer " + sign(t, jwt.SigningMethodHS256, hmacSecret, claims("tenant", strings.Repeat("t", 300))), "sha256:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kf(newReq("192.0.2.1:1", "Authorization", tt.header))
			require.NoError(t, err)
			if tt.want == "sha256:" {
				assert.True(t, strings.HasPrefix(got, tt.want), got)
				return
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestJWTSubjectClockMoves(t *testing.T) {
	clock := core.NewManualClock(testNow)
	kf, err := keyfuncs.JWTSubject(keyfuncs.WithHMACSecret(hmacSecret), keyfuncs.WithClock(clock))
	require.NoError(t, err)
	r := bearer(sign(t, jwt.SigningMethodHS256, hmacSecret, claims()))
	_, err = kf(r)
	require.NoError(t, err)
	clock.Advance(2 * time.Hour)
	_, err = kf(r)
	require.ErrorIs(t, err, core.ErrKey)
	require.ErrorIs(t, err, jwt.ErrTokenExpired)
}

func TestJWTSubjectInvalidConfig(t *testing.T) {
	keys(t)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	p224, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	require.NoError(t, err)
	tests := []struct {
		name string
		opts []keyfuncs.JWTOption
		msg  string
	}{
		{"no key", nil, "no key"},
		{"two keys", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(hmacSecret), keyfuncs.WithEd25519PublicKey(edPub)}, "more than one key"},
		{"empty secret", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(nil)}, "empty secret"},
		{"short secret", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret([]byte("short"))}, "at least 32 bytes"},
		{"secret too short for HS512", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(hmacSecret), keyfuncs.WithAlgorithms("HS512")}, "at least 64 bytes"},
		{"nil rsa", []keyfuncs.JWTOption{keyfuncs.WithRSAPublicKey(nil)}, "nil key"},
		{"small rsa", []keyfuncs.JWTOption{keyfuncs.WithRSAPublicKey(&small.PublicKey)}, "at least 2048"},
		{"nil ecdsa", []keyfuncs.JWTOption{keyfuncs.WithECDSAPublicKey(nil)}, "nil key"},
		{"P-224", []keyfuncs.JWTOption{keyfuncs.WithECDSAPublicKey(&p224.PublicKey)}, "not P-256"},
		{"short ed25519", []keyfuncs.JWTOption{keyfuncs.WithEd25519PublicKey(edPub[:10])}, "not 32"},
		{"nil key func", []keyfuncs.JWTOption{keyfuncs.WithKeyFunc(nil)}, "nil function"},
		{"key func without algorithms", []keyfuncs.JWTOption{keyfuncs.WithKeyFunc(func(*jwt.Token) (any, error) { return nil, nil })}, "needs WithAlgorithms"},
		{"alg none", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(hmacSecret), keyfuncs.WithAlgorithms("none")}, "never accepted"},
		{"alg NONE", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(hmacSecret), keyfuncs.WithAlgorithms("NONE")}, "never accepted"},
		{"unknown alg", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(hmacSecret), keyfuncs.WithAlgorithms("HS1")}, "unknown algorithm"},
		{"no algorithms", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(hmacSecret), keyfuncs.WithAlgorithms()}, "no algorithm"},
		{"HS256 with an RSA key", []keyfuncs.JWTOption{keyfuncs.WithRSAPublicKey(&rsaKey.PublicKey), keyfuncs.WithAlgorithms("RS256", "HS256")}, "does not suit"},
		{"ES384 with a P-256 key", []keyfuncs.JWTOption{keyfuncs.WithECDSAPublicKey(&ecKey.PublicKey), keyfuncs.WithAlgorithms("ES384")}, "does not suit"},
		{"RS256 with an Ed25519 key", []keyfuncs.JWTOption{keyfuncs.WithEd25519PublicKey(edPub), keyfuncs.WithAlgorithms("RS256")}, "does not suit"},
		{"empty issuer", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(hmacSecret), keyfuncs.WithIssuer("")}, "empty issuer"},
		{"empty audience", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(hmacSecret), keyfuncs.WithAudience("")}, "empty one"},
		{"negative leeway", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(hmacSecret), keyfuncs.WithLeeway(-time.Second)}, "outside 0..5m"},
		{"huge leeway", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(hmacSecret), keyfuncs.WithLeeway(time.Hour)}, "outside 0..5m"},
		{"nil clock", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(hmacSecret), keyfuncs.WithClock(nil)}, "nil clock"},
		{"empty claim", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(hmacSecret), keyfuncs.WithClaim("")}, "empty claim"},
		{"tiny max length", []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(hmacSecret), keyfuncs.WithMaxTokenLength(10)}, "outside 64"},
		{"nil option", []keyfuncs.JWTOption{nil}, "nil JWTOption"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kf, err := keyfuncs.JWTSubject(tt.opts...)
			require.ErrorIs(t, err, core.ErrInvalidOption)
			assert.Contains(t, err.Error(), tt.msg)
			assert.Nil(t, kf)
		})
	}
}

func TestJWTSubjectUnverified(t *testing.T) {
	keys(t)
	kf, err := keyfuncs.JWTSubjectUnverified(keyfuncs.WithClock(core.NewManualClock(testNow)))
	require.NoError(t, err)
	valid := sign(t, jwt.SigningMethodHS256, otherHMAC, claims())
	parts := strings.Split(valid, ".")
	tests := []struct {
		name, tok, want string
	}{
		{"any signature is taken on trust", valid, "user-1"},
		{"rsa", sign(t, jwt.SigningMethodRS256, otherRSA, claims("sub", "u2")), "u2"},
		{"expired", sign(t, jwt.SigningMethodHS256, otherHMAC, claims("exp", testNow.Add(-time.Second).Unix())), ""},
		{"not yet valid", sign(t, jwt.SigningMethodHS256, otherHMAC, claims("nbf", testNow.Add(time.Hour).Unix())), ""},
		{"alg none", sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims()), ""},
		{"empty signature", parts[0] + "." + parts[1] + ".", ""},
		{"malformed", "a.b.c", ""},
		{"unknown alg", base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"XX1"}`)) + "." + parts[1] + "." + parts[2], ""},
		{"huge", strings.Repeat("a", 9000), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kf(bearer(tt.tok))
			if tt.want == "" {
				require.ErrorIs(t, err, core.ErrKey)
				assert.Empty(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	for _, opt := range []keyfuncs.JWTOption{keyfuncs.WithHMACSecret(hmacSecret), keyfuncs.WithAlgorithms("HS256"), nil} {
		kf, err := keyfuncs.JWTSubjectUnverified(opt)
		require.ErrorIs(t, err, core.ErrInvalidOption)
		assert.Nil(t, kf)
	}
}
