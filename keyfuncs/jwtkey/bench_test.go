package jwtkey_test

import (
	"testing"

	gojwt "github.com/golang-jwt/jwt/v5"

	"github.com/ratewarden/ratewarden/keyfuncs/jwtkey"
)

func BenchmarkSubjectHS256(b *testing.B) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	tok, err := gojwt.NewWithClaims(gojwt.SigningMethodHS256, gojwt.MapClaims{"sub": "user-1"}).SignedString(secret)
	if err != nil {
		b.Fatal(err)
	}
	kf, err := jwtkey.Subject(jwtkey.WithHMACSecret(secret))
	if err != nil {
		b.Fatal(err)
	}
	r := bearer(tok)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := kf(r); err != nil {
			b.Fatal(err)
		}
	}
}
