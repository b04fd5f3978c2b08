package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	gojwt "github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const secret32 = "0123456789abcdef0123456789abcdef"

var now = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// A token without exp is the same every time (openssl agrees on the signature).
func Example() {
	run([]string{"-secret", secret32, "-sub", "alice", "-claim", "plan=paid", "-ttl", "0"}, os.Stdout, os.Stderr, now)
	// Output: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJwbGFuIjoicGFpZCIsInN1YiI6ImFsaWNlIn0.MResLf3OB1v3UHa1zvZnN9XoA--fu4AEmJmEXocSkRg
}

// The token verifies with the secret and holds the claims asked for.
func TestRunMints(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want gojwt.MapClaims
	}{
		{"subject and exp", []string{"-sub", "alice"}, gojwt.MapClaims{"sub": "alice", "exp": float64(now.Add(time.Hour).Unix())}},
		{"claims", []string{"-sub", "bob", "-claim", "plan=paid", "-claim", "team=x=y"}, gojwt.MapClaims{"sub": "bob", "plan": "paid", "team": "x=y", "exp": float64(now.Add(time.Hour).Unix())}},
		{"no exp", []string{"-sub", "carol", "-ttl", "0"}, gojwt.MapClaims{"sub": "carol"}},
		{"empty claim value", []string{"-sub", "dave", "-claim", "plan=", "-ttl", "0"}, gojwt.MapClaims{"sub": "dave", "plan": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"-secret", secret32}, tt.args...), &stdout, &stderr, now)
			require.Equal(t, 0, code, stderr.String())
			claims := gojwt.MapClaims{}
			_, err := gojwt.ParseWithClaims(strings.TrimSpace(stdout.String()), claims,
				func(*gojwt.Token) (any, error) { return []byte(secret32), nil },
				gojwt.WithValidMethods([]string{"HS256"}), gojwt.WithTimeFunc(func() time.Time { return now }))
			require.NoError(t, err)
			assert.Equal(t, tt.want, claims)
		})
	}
}

// Every bad flag is exit status 2 with a message, and no token.
func TestRunBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no secret", []string{"-sub", "alice"}, "-secret must be at least 32 bytes, got 0"},
		{"short secret", []string{"-secret", "short", "-sub", "alice"}, "-secret must be at least 32 bytes"},
		{"no subject", []string{"-secret", secret32}, "-sub is required"},
		{"claim without =", []string{"-secret", secret32, "-sub", "a", "-claim", "plan"}, "want NAME=VALUE"},
		{"claim without a name", []string{"-secret", secret32, "-sub", "a", "-claim", "=paid"}, "want NAME=VALUE"},
		{"claim sub", []string{"-secret", secret32, "-sub", "a", "-claim", "sub=b"}, "sub is set by -sub or -ttl"},
		{"claim exp", []string{"-secret", secret32, "-sub", "a", "-claim", "exp=1"}, "exp is set by -sub or -ttl"},
		{"claim twice", []string{"-secret", secret32, "-sub", "a", "-claim", "plan=x", "-claim", "plan=y"}, "claim plan is given twice"},
		{"negative ttl", []string{"-secret", secret32, "-sub", "a", "-ttl", "-1h"}, "-ttl must not be negative"},
		{"bad ttl", []string{"-secret", secret32, "-sub", "a", "-ttl", "soon"}, "-ttl"},
		{"stray argument", []string{"-secret", secret32, "-sub", "a", "extra"}, `unexpected argument "extra"`},
		{"unknown flag", []string{"-alg", "none"}, "-alg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			assert.Equal(t, 2, run(tt.args, &stdout, &stderr, now))
			assert.Empty(t, stdout.String())
			assert.Contains(t, stderr.String(), tt.want)
		})
	}
}

func TestRunHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 0, run([]string{"-h"}, &stdout, &stderr, now))
	assert.Contains(t, stderr.String(), fmt.Sprintf("-claim %s", "NAME=VALUE"))
}
