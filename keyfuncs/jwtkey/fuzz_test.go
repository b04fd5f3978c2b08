package jwtkey_test

import (
	"errors"
	"testing"

	gojwt "github.com/golang-jwt/jwt/v5"

	"github.com/ratewarden/ratewarden/internal/fakereq"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/keyfuncs/jwtkey"
)

func FuzzSubject(f *testing.F) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	valid, err := gojwt.NewWithClaims(gojwt.SigningMethodHS256, gojwt.MapClaims{"sub": "user-1"}).SignedString(secret)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"Bearer " + valid, "bearer " + valid + "x", "Bearer a.b.c", "Bearer ...", "Basic x", "Bearer eyJhbGciOiJub25lIn0.e30.", ""} {
		f.Add(s)
	}
	verified, err := jwtkey.Subject(jwtkey.WithHMACSecret(secret))
	if err != nil {
		f.Fatal(err)
	}
	unverified, err := jwtkey.SubjectUnverified()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, auth string) {
		r := fakereq.New("192.0.2.1:1", "Authorization", auth)
		k, err := verified(r)
		if err != nil {
			if !errors.Is(err, keyfuncs.ErrKey) {
				t.Fatalf("error %v does not wrap ErrKey", err)
			}
		} else if k != "user-1" {
			t.Fatalf("forged token accepted with key %q", k)
		}
		k, err = unverified(r)
		if err != nil && !errors.Is(err, keyfuncs.ErrKey) {
			t.Fatalf("error %v does not wrap ErrKey", err)
		}
		if err == nil && k == "" {
			t.Fatal("empty key without an error")
		}
	})
}
