package jwtkey_test

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

	gojwt "github.com/golang-jwt/jwt/v5"
	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/internal/expect"
	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/internal/must"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/keyfuncs/jwtkey"
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

func sign(t testing.TB, m gojwt.SigningMethod, key any, claims gojwt.MapClaims) string {
	t.Helper()
	s, err := gojwt.NewWithClaims(m, claims).SignedString(key)
	must.NoError(t, err)
	return s
}

func claims(extra ...any) gojwt.MapClaims {
	c := gojwt.MapClaims{"sub": "user-1", "exp": testNow.Add(time.Hour).Unix(), "nbf": testNow.Add(-time.Minute).Unix()}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == nil {
			delete(c, extra[i].(string))
			continue
		}
		c[extra[i].(string)] = extra[i+1]
	}
	return c
}

func bearer(tok string) *fakereq.Request {
	return fakereq.New("192.0.2.1:1", "Authorization", "Bearer "+tok)
}

func TestSubjectAccepts(t *testing.T) {
	keys(t)
	clock := jwtkey.WithClock(core.NewManualClock(testNow))
	tests := []struct {
		name string
		opts []jwtkey.Option
		tok  string
	}{
		{"HS256", []jwtkey.Option{jwtkey.WithHMACSecret(hmacSecret)}, sign(t, gojwt.SigningMethodHS256, hmacSecret, claims())},
		{"RS256", []jwtkey.Option{jwtkey.WithRSAPublicKey(&rsaKey.PublicKey)}, sign(t, gojwt.SigningMethodRS256, rsaKey, claims())},
		{"PS384 listed", []jwtkey.Option{jwtkey.WithRSAPublicKey(&rsaKey.PublicKey), jwtkey.WithAlgorithms("RS256", "PS384")}, sign(t, gojwt.SigningMethodPS384, rsaKey, claims())},
		{"ES256", []jwtkey.Option{jwtkey.WithECDSAPublicKey(&ecKey.PublicKey)}, sign(t, gojwt.SigningMethodES256, ecKey, claims())},
		{"ES384 from the curve", []jwtkey.Option{jwtkey.WithECDSAPublicKey(&ec384Key.PublicKey)}, sign(t, gojwt.SigningMethodES384, ec384Key, claims())},
		{"EdDSA", []jwtkey.Option{jwtkey.WithEd25519PublicKey(edPub)}, sign(t, gojwt.SigningMethodEdDSA, edKey, claims())},
		{"key func", []jwtkey.Option{jwtkey.WithVerificationKeyLookup(func(*gojwt.Token) (any, error) { return edPub, nil }), jwtkey.WithAlgorithms("EdDSA")}, sign(t, gojwt.SigningMethodEdDSA, edKey, claims())},
		{"no exp by default", []jwtkey.Option{jwtkey.WithHMACSecret(hmacSecret)}, sign(t, gojwt.SigningMethodHS256, hmacSecret, claims("exp", nil))},
		{"issuer and audience", []jwtkey.Option{jwtkey.WithHMACSecret(hmacSecret), jwtkey.WithIssuer("idp"), jwtkey.WithAudience("api", "web")}, sign(t, gojwt.SigningMethodHS256, hmacSecret, claims("iss", "idp", "aud", []string{"web"}))},
		{"expired within leeway", []jwtkey.Option{jwtkey.WithHMACSecret(hmacSecret), jwtkey.WithLeeway(time.Minute)}, sign(t, gojwt.SigningMethodHS256, hmacSecret, claims("exp", testNow.Add(-30*time.Second).Unix()))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kf, err := jwtkey.Subject(append(tt.opts, clock)...)
			must.NoError(t, err)
			got, err := kf(bearer(tt.tok))
			must.NoError(t, err)
			expect.Equal(t, "user-1", got)
		})
	}
}

func TestSubjectRejects(t *testing.T) {
	keys(t)
	hs := sign(t, gojwt.SigningMethodHS256, hmacSecret, claims())
	pubDER, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	must.NoError(t, err)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	none := sign(t, gojwt.SigningMethodNone, gojwt.UnsafeAllowNoneSignatureType, claims())
	parts := strings.Split(hs, ".")
	tamperedClaims := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"admin"}`))

	hmacOpt := jwtkey.WithHMACSecret(hmacSecret)
	rsaOpt := jwtkey.WithRSAPublicKey(&rsaKey.PublicKey)
	tests := []struct {
		name   string
		opts   []jwtkey.Option
		header []string
	}{
		{"no header", []jwtkey.Option{hmacOpt}, nil},
		{"basic scheme", []jwtkey.Option{hmacOpt}, []string{"Authorization", "Basic " + hs}},
		{"scheme glued", []jwtkey.Option{hmacOpt}, []string{"Authorization", "Bearer" + hs}},
		{"scheme only", []jwtkey.Option{hmacOpt}, []string{"Authorization", "Bearer   "}},
		{"two tokens", []jwtkey.Option{hmacOpt}, []string{"Authorization", "Bearer " + hs + " " + hs}},
		{"wrong hmac secret", []jwtkey.Option{jwtkey.WithHMACSecret(otherHMAC)}, []string{"Authorization", "Bearer " + hs}},
		{"wrong rsa key", []jwtkey.Option{jwtkey.WithRSAPublicKey(&otherRSA.PublicKey)}, []string{"Authorization", "Bearer " + sign(t, gojwt.SigningMethodRS256, rsaKey, claims())}},
		{"wrong ecdsa key", []jwtkey.Option{jwtkey.WithECDSAPublicKey(&otherEC.PublicKey)}, []string{"Authorization", "Bearer " + sign(t, gojwt.SigningMethodES256, ecKey, claims())}},
		{"wrong ed25519 key", []jwtkey.Option{jwtkey.WithEd25519PublicKey(otherEdPub)}, []string{"Authorization", "Bearer " + sign(t, gojwt.SigningMethodEdDSA, edKey, claims())}},
		{"expired", []jwtkey.Option{hmacOpt}, []string{"Authorization", "Bearer " + sign(t, gojwt.SigningMethodHS256, hmacSecret, claims("exp", testNow.Add(-time.Second).Unix()))}},
		{"expired beyond leeway", []jwtkey.Option{hmacOpt, jwtkey.WithLeeway(time.Minute)}, []string{"Authorization", "Bearer " + sign(t, gojwt.SigningMethodHS256, hmacSecret, claims("exp", testNow.Add(-2*time.Minute).Unix()))}},
		{"not yet valid", []jwtkey.Option{hmacOpt}, []string{"Authorization", "Bearer " + sign(t, gojwt.SigningMethodHS256, hmacSecret, claims("nbf", testNow.Add(time.Minute).Unix()))}},
		{"exp required", []jwtkey.Option{hmacOpt, jwtkey.WithExpirationRequired()}, []string{"Authorization", "Bearer " + sign(t, gojwt.SigningMethodHS256, hmacSecret, claims("exp", nil))}},
		{"alg none", []jwtkey.Option{hmacOpt}, []string{"Authorization", "Bearer " + none}},
		{"alg confusion: HS256 signed with the RSA public key", []jwtkey.Option{rsaOpt}, []string{"Authorization", "Bearer " + sign(t, gojwt.SigningMethodHS256, pubPEM, claims())}},
		{"alg confusion with HS256 listed for a key func", []jwtkey.Option{jwtkey.WithVerificationKeyLookup(func(*gojwt.Token) (any, error) { return &rsaKey.PublicKey, nil }), jwtkey.WithAlgorithms("RS256", "HS256")}, []string{"Authorization", "Bearer " + sign(t, gojwt.SigningMethodHS256, pubPEM, claims())}},
		{"unlisted algorithm", []jwtkey.Option{rsaOpt}, []string{"Authorization", "Bearer " + sign(t, gojwt.SigningMethodRS512, rsaKey, claims())}},
		{"tampered claims", []jwtkey.Option{hmacOpt}, []string{"Authorization", "Bearer " + parts[0] + "." + tamperedClaims + "." + parts[2]}},
		{"malformed", []jwtkey.Option{hmacOpt}, []string{"Authorization", "Bearer not.a.jwt"}},
		{"two segments", []jwtkey.Option{hmacOpt}, []string{"Authorization", "Bearer " + parts[0] + "." + parts[1]}},
		{"padded segment", []jwtkey.Option{hmacOpt}, []string{"Authorization", "Bearer " + parts[0] + "=." + parts[1] + "." + parts[2]}},
		{"huge", []jwtkey.Option{hmacOpt}, []string{"Authorization", "Bearer " + strings.Repeat("a", 1<<20)}},
		{"just over the bound", []jwtkey.Option{hmacOpt, jwtkey.WithMaxTokenLength(len(hs) - 1)}, []string{"Authorization", "Bearer " + hs}},
		{"wrong issuer", []jwtkey.Option{hmacOpt, jwtkey.WithIssuer("idp")}, []string{"Authorization", "Bearer " + sign(t, gojwt.SigningMethodHS256, hmacSecret, claims("iss", "evil"))}},
		{"wrong audience", []jwtkey.Option{hmacOpt, jwtkey.WithAudience("api")}, []string{"Authorization", "Bearer " + sign(t, gojwt.SigningMethodHS256, hmacSecret, claims("aud", "other"))}},
		{"no sub", []jwtkey.Option{hmacOpt}, []string{"Authorization", "Bearer " + sign(t, gojwt.SigningMethodHS256, hmacSecret, claims("sub", nil))}},
		{"empty sub", []jwtkey.Option{hmacOpt}, []string{"Authorization", "Bearer " + sign(t, gojwt.SigningMethodHS256, hmacSecret, claims("sub", ""))}},
		{"object sub", []jwtkey.Option{hmacOpt}, []string{"Authorization", "Bearer " + sign(t, gojwt.SigningMethodHS256, hmacSecret, claims("sub", map[string]any{"a": 1}))}},
		{"key func error", []jwtkey.Option{jwtkey.WithVerificationKeyLookup(func(*gojwt.Token) (any, error) { return nil, expect.ErrForTesting }), jwtkey.WithAlgorithms("HS256")}, []string{"Authorization", "Bearer " + hs}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kf, err := jwtkey.Subject(append(tt.opts, jwtkey.WithClock(core.NewManualClock(testNow)))...)
			must.NoError(t, err)
			got, err := kf(fakereq.New("192.0.2.1:1", tt.header...))
			must.ErrorIs(t, err, keyfuncs.ErrKey)
			expect.Empty(t, got)
		})
	}
}

func TestSubjectClaimAndScheme(t *testing.T) {
	kf, err := jwtkey.Subject(jwtkey.WithHMACSecret(hmacSecret), jwtkey.WithClaim("tenant"), jwtkey.WithClock(core.NewManualClock(testNow)))
	must.NoError(t, err)
	tests := []struct {
		name, header, want string
	}{
		{"string claim", "Bearer " + sign(t, gojwt.SigningMethodHS256, hmacSecret, claims("tenant", "acme")), "acme"},
		{"number claim", "Bearer " + sign(t, gojwt.SigningMethodHS256, hmacSecret, claims("tenant", 12345678901)), "12345678901"},
		{"scheme in any case, tab", "bEaReR\t" + sign(t, gojwt.SigningMethodHS256, hmacSecret, claims("tenant", "acme")), "acme"},
		{"long claim hashed", "Bearer " + sign(t, gojwt.SigningMethodHS256, hmacSecret, claims("tenant", strings.Repeat("t", 300))), "sha256:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kf(fakereq.New("192.0.2.1:1", "Authorization", tt.header))
			must.NoError(t, err)
			if tt.want == "sha256:" {
				expect.True(t, strings.HasPrefix(got, tt.want), got)
				return
			}
			expect.Equal(t, tt.want, got)
		})
	}
}

func TestSubjectClockMoves(t *testing.T) {
	clock := core.NewManualClock(testNow)
	kf, err := jwtkey.Subject(jwtkey.WithHMACSecret(hmacSecret), jwtkey.WithClock(clock))
	must.NoError(t, err)
	r := bearer(sign(t, gojwt.SigningMethodHS256, hmacSecret, claims()))
	_, err = kf(r)
	must.NoError(t, err)
	clock.Advance(2 * time.Hour)
	_, err = kf(r)
	must.ErrorIs(t, err, keyfuncs.ErrKey)
	must.ErrorIs(t, err, gojwt.ErrTokenExpired)
}

func TestSubjectInvalidConfig(t *testing.T) {
	keys(t)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	must.NoError(t, err)
	p224, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	must.NoError(t, err)
	tests := []struct {
		name string
		opts []jwtkey.Option
		msg  string
	}{
		{"no key", nil, "no key"},
		{"two keys", []jwtkey.Option{jwtkey.WithHMACSecret(hmacSecret), jwtkey.WithEd25519PublicKey(edPub)}, "more than one key"},
		{"empty secret", []jwtkey.Option{jwtkey.WithHMACSecret(nil)}, "empty secret"},
		{"short secret", []jwtkey.Option{jwtkey.WithHMACSecret([]byte("short"))}, "at least 32 bytes"},
		{"secret too short for HS512", []jwtkey.Option{jwtkey.WithHMACSecret(hmacSecret), jwtkey.WithAlgorithms("HS512")}, "at least 64 bytes"},
		{"nil rsa", []jwtkey.Option{jwtkey.WithRSAPublicKey(nil)}, "nil key"},
		{"small rsa", []jwtkey.Option{jwtkey.WithRSAPublicKey(&small.PublicKey)}, "at least 2048"},
		{"nil ecdsa", []jwtkey.Option{jwtkey.WithECDSAPublicKey(nil)}, "nil key"},
		{"P-224", []jwtkey.Option{jwtkey.WithECDSAPublicKey(&p224.PublicKey)}, "not P-256"},
		{"short ed25519", []jwtkey.Option{jwtkey.WithEd25519PublicKey(edPub[:10])}, "not 32"},
		{"nil key func", []jwtkey.Option{jwtkey.WithVerificationKeyLookup(nil)}, "nil function"},
		{"key func without algorithms", []jwtkey.Option{jwtkey.WithVerificationKeyLookup(func(*gojwt.Token) (any, error) { return nil, nil })}, "needs WithAlgorithms"},
		{"alg none", []jwtkey.Option{jwtkey.WithHMACSecret(hmacSecret), jwtkey.WithAlgorithms("none")}, "never accepted"},
		{"alg NONE", []jwtkey.Option{jwtkey.WithHMACSecret(hmacSecret), jwtkey.WithAlgorithms("NONE")}, "never accepted"},
		{"unknown alg", []jwtkey.Option{jwtkey.WithHMACSecret(hmacSecret), jwtkey.WithAlgorithms("HS1")}, "unknown algorithm"},
		{"no algorithms", []jwtkey.Option{jwtkey.WithHMACSecret(hmacSecret), jwtkey.WithAlgorithms()}, "no algorithm"},
		{"HS256 with an RSA key", []jwtkey.Option{jwtkey.WithRSAPublicKey(&rsaKey.PublicKey), jwtkey.WithAlgorithms("RS256", "HS256")}, "does not suit"},
		{"ES384 with a P-256 key", []jwtkey.Option{jwtkey.WithECDSAPublicKey(&ecKey.PublicKey), jwtkey.WithAlgorithms("ES384")}, "does not suit"},
		{"RS256 with an Ed25519 key", []jwtkey.Option{jwtkey.WithEd25519PublicKey(edPub), jwtkey.WithAlgorithms("RS256")}, "does not suit"},
		{"empty issuer", []jwtkey.Option{jwtkey.WithHMACSecret(hmacSecret), jwtkey.WithIssuer("")}, "empty issuer"},
		{"empty audience", []jwtkey.Option{jwtkey.WithHMACSecret(hmacSecret), jwtkey.WithAudience("")}, "empty one"},
		{"negative leeway", []jwtkey.Option{jwtkey.WithHMACSecret(hmacSecret), jwtkey.WithLeeway(-time.Second)}, "outside 0..5m"},
		{"huge leeway", []jwtkey.Option{jwtkey.WithHMACSecret(hmacSecret), jwtkey.WithLeeway(time.Hour)}, "outside 0..5m"},
		{"nil clock", []jwtkey.Option{jwtkey.WithHMACSecret(hmacSecret), jwtkey.WithClock(nil)}, "nil clock"},
		{"empty claim", []jwtkey.Option{jwtkey.WithHMACSecret(hmacSecret), jwtkey.WithClaim("")}, "empty claim"},
		{"tiny max length", []jwtkey.Option{jwtkey.WithHMACSecret(hmacSecret), jwtkey.WithMaxTokenLength(10)}, "outside 64"},
		{"nil option", []jwtkey.Option{nil}, "jwt: nil option"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kf, err := jwtkey.Subject(tt.opts...)
			must.ErrorIs(t, err, core.ErrInvalidOption)
			expect.Contains(t, err.Error(), tt.msg)
			expect.Nil(t, kf)
		})
	}
}

func TestSubjectUnverified(t *testing.T) {
	keys(t)
	kf, err := jwtkey.SubjectUnverified(jwtkey.WithClock(core.NewManualClock(testNow)))
	must.NoError(t, err)
	valid := sign(t, gojwt.SigningMethodHS256, otherHMAC, claims())
	parts := strings.Split(valid, ".")
	tests := []struct {
		name, tok, want string
	}{
		{"any signature is taken on trust", valid, "user-1"},
		{"rsa", sign(t, gojwt.SigningMethodRS256, otherRSA, claims("sub", "u2")), "u2"},
		{"expired", sign(t, gojwt.SigningMethodHS256, otherHMAC, claims("exp", testNow.Add(-time.Second).Unix())), ""},
		{"not yet valid", sign(t, gojwt.SigningMethodHS256, otherHMAC, claims("nbf", testNow.Add(time.Hour).Unix())), ""},
		{"alg none", sign(t, gojwt.SigningMethodNone, gojwt.UnsafeAllowNoneSignatureType, claims()), ""},
		{"empty signature", parts[0] + "." + parts[1] + ".", ""},
		{"malformed", "a.b.c", ""},
		{"unknown alg", base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"XX1"}`)) + "." + parts[1] + "." + parts[2], ""},
		{"huge", strings.Repeat("a", 9000), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kf(bearer(tt.tok))
			if tt.want == "" {
				must.ErrorIs(t, err, keyfuncs.ErrKey)
				expect.Empty(t, got)
				return
			}
			must.NoError(t, err)
			expect.Equal(t, tt.want, got)
		})
	}

	for _, opt := range []jwtkey.Option{jwtkey.WithHMACSecret(hmacSecret), jwtkey.WithAlgorithms("HS256"), nil} {
		kf, err := jwtkey.SubjectUnverified(opt)
		must.ErrorIs(t, err, core.ErrInvalidOption)
		expect.Nil(t, kf)
	}
}
