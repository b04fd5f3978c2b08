package redisstore

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrAuth reports that Redis refused the user or password a client sent (or
// wants one it did not send); ExplainError wraps it.
var ErrAuth = errors.New("redisstore: Redis refused the credentials")

// ErrTLS reports a TLS handshake with Redis that failed: a certificate that
// was not verified, or a server that does not speak TLS; ExplainError wraps
// it.
var ErrTLS = errors.New("redisstore: TLS with Redis failed")

// ExplainError returns err (a client's error: a failed dial, AUTH or
// command) with a sentence that says what to fix when it is one an operator
// meets first with a managed Redis: a wrong user or password (WRONGPASS), a
// missing one (NOAUTH), a user the ACL forbids a command (NOPERM), a TLS
// certificate that was not verified, or plain text spoken to a server that
// wants TLS.
// Those wrap ErrAuth or ErrTLS; any other error is returned as it is. Redis's
// replies never hold the password, and neither does what ExplainError adds.
func ExplainError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "WRONGPASS"):
		return fmt.Errorf("%w: the user or password is wrong, or the user is disabled (WRONGPASS)", ErrAuth)
	case strings.Contains(msg, "NOAUTH"):
		return fmt.Errorf("%w: Redis requires a password and none was given (NOAUTH)", ErrAuth)
	case strings.Contains(msg, "NOPERM"):
		return fmt.Errorf("%w: the user may not run a command it needs (NOPERM: %s); "+
			"it needs the keys of the prefix and the commands EVALSHA, EVAL, SCRIPT, PUBLISH, SUBSCRIBE, HGETALL and PING",
			ErrAuth, shorten(msg))
	}
	var unknownCA x509.UnknownAuthorityError
	var badName x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &unknownCA):
		return fmt.Errorf("%w: the server's certificate is signed by an authority this client does not trust; give the CA's certificate as the CA file", ErrTLS)
	case errors.As(err, &badName):
		return fmt.Errorf("%w: the server's certificate is not valid for the host of the URL (%v)", ErrTLS, err)
	case errors.As(err, &invalid):
		return fmt.Errorf("%w: the server's certificate is not valid (%v)", ErrTLS, err)
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%w (the server closed the connection: if it speaks TLS, use rediss://)", err)
	}
	return err
}

// shorten bounds a server's reply quoted in a message.
func shorten(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
