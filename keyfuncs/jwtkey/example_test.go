package jwtkey_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	gojwt "github.com/golang-jwt/jwt/v5"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs/jwtkey"
	"github.com/ratewarden/ratewarden/stdhttp"
)

func ExampleSubject() {
	secret := []byte("an-hmac-secret-of-32-bytes-or-more")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	key, err := jwtkey.Subject(
		jwtkey.WithHMACSecret(secret),
		jwtkey.WithIssuer("https://idp.example"),
		jwtkey.WithClock(core.NewManualClock(now)),
	)
	if err != nil {
		panic(err)
	}

	token, _ := gojwt.NewWithClaims(gojwt.SigningMethodHS256, gojwt.MapClaims{
		"sub": "alice",
		"iss": "https://idp.example",
		"exp": now.Add(time.Hour).Unix(),
	}).SignedString(secret)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	k, err := key(stdhttp.View(r))
	fmt.Println(k, err)

	// The same claims signed with another secret are refused.
	forged, _ := gojwt.NewWithClaims(gojwt.SigningMethodHS256, gojwt.MapClaims{
		"sub": "alice",
		"iss": "https://idp.example",
	}).SignedString([]byte("guessed-secret-guessed-secret-xx"))
	r.Header.Set("Authorization", "Bearer "+forged)
	_, err = key(stdhttp.View(r))
	fmt.Println(err != nil)
	// Output:
	// alice <nil>
	// true
}
