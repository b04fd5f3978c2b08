// Command mintjwt prints an HS256 JSON Web Token, to try the example servers'
// -key jwt and -tier-claim by hand and for scripts/test.sh's probes:
//
//	token=$(go run ./examples/internal/mintjwt -secret 0123456789abcdef0123456789abcdef -sub alice -claim plan=paid)
//	curl -i -H "Authorization: Bearer $token" localhost:8080/
//
// The token holds "sub", the -claim NAME=VALUE pairs as string claims and,
// unless -ttl is 0, "exp". Bad flags exit with status 2 and a message.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	gojwt "github.com/golang-jwt/jwt/v5"
)

// minSecretLen is the shortest secret the servers' -jwt-secret takes.
const minSecretLen = 32

// registered are the claims -sub and -ttl set, which -claim cannot.
var registered = map[string]bool{"sub": true, "exp": true, "nbf": true, "iat": true}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, time.Now()))
}

// run is the command on args, printing the token to stdout and errors to
// stderr; now is the issue time for -ttl. It returns the exit status.
func run(args []string, stdout, stderr io.Writer, now time.Time) int {
	fs := flag.NewFlagSet("mintjwt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	secret := fs.String("secret", "", "the HMAC `SECRET`, at least 32 bytes: the servers' -jwt-secret")
	sub := fs.String("sub", "", "the `SUBJECT`: who the client is, the servers' key")
	ttl := fs.Duration("ttl", time.Hour, "how long the token is valid (0: no exp claim)")
	claims := map[string]string{}
	fs.Func("claim", "`NAME=VALUE`, repeated: a string claim, e.g. plan=paid", func(s string) error {
		name, value, ok := strings.Cut(s, "=")
		switch {
		case !ok || name == "":
			return errors.New("want NAME=VALUE")
		case registered[name]:
			return fmt.Errorf("%s is set by -sub or -ttl", name)
		case claims[name] != "":
			return fmt.Errorf("claim %s is given twice", name)
		}
		claims[name] = value
		return nil
	})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	var exp time.Time
	if *ttl != 0 {
		exp = now.Add(*ttl)
	}
	token, err := mint([]byte(*secret), *sub, claims, exp)
	switch {
	case fs.NArg() > 0:
		err = fmt.Errorf("unexpected argument %q: it takes only flags", fs.Arg(0))
	case *ttl < 0:
		err = fmt.Errorf("-ttl must not be negative, got %s", *ttl)
	}
	if err != nil {
		fmt.Fprintf(stderr, "mintjwt: %v\n", err)
		return 2
	}
	fmt.Fprintln(stdout, token)
	return 0
}

// mint signs a token for sub with claims and, when exp is not zero, exp.
func mint(secret []byte, sub string, claims map[string]string, exp time.Time) (string, error) {
	switch {
	case len(secret) < minSecretLen:
		return "", fmt.Errorf("-secret must be at least %d bytes, got %d", minSecretLen, len(secret))
	case sub == "":
		return "", errors.New("-sub is required")
	}
	mc := gojwt.MapClaims{"sub": sub}
	for name, value := range claims {
		mc[name] = value
	}
	if !exp.IsZero() {
		mc["exp"] = exp.Unix()
	}
	return gojwt.NewWithClaims(gojwt.SigningMethodHS256, mc).SignedString(secret)
}
