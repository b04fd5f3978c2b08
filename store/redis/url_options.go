package redisstore

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"io"
	"os"

	"github.com/redis/go-redis/v9"
)

// maxSecretFile bounds the size of a password file and of a CA file.
const maxSecretFile = 1 << 20

// URLOption adds to what a URL says, for ParseURL: a password kept out of the
// URL, or a CA to verify the server's certificate with.
type URLOption func(*urlConfig)

type urlConfig struct {
	password     string
	passwordFile string
	caFile       string
}

// WithPassword gives the password to send with AUTH when the URL has none
// (a password in the URL wins), e.g. from an environment variable, so that
// it appears on no command line. An empty password gives none.
func WithPassword(password string) URLOption {
	return func(c *urlConfig) { c.password = password }
}

// WithPasswordFile reads the password to send with AUTH from the file at
// path when the URL has none (a password in the URL wins), e.g. a mounted
// Kubernetes or Docker secret. The file holds the password alone; its
// trailing line ends (\n, \r\n) are dropped. An empty path gives none; a
// file that cannot be read, is empty or is larger than 1 MiB is an error.
// It wins over WithPassword.
func WithPasswordFile(path string) URLOption {
	return func(c *urlConfig) { c.passwordFile = path }
}

// WithCAFile verifies the server's TLS certificate against the PEM
// certificates in the file at path (a private or self-signed CA) instead of
// the system's roots; the server's name is still checked. It needs a TLS
// URL (rediss://, rediss-cluster://, rediss-sentinel://): with any other,
// ParseURL returns an error rather than connect without TLS. An empty path
// gives none.
func WithCAFile(path string) URLOption {
	return func(c *urlConfig) { c.caFile = path }
}

// apply sets the password and the CA on uo.
func (c *urlConfig) apply(uo *redis.UniversalOptions, p *parsedURL) error {
	if !p.hasPassword {
		password := c.password
		if c.passwordFile != "" {
			var err error
			if password, err = readPasswordFile(c.passwordFile); err != nil {
				return err
			}
		}
		uo.Password = password
		if p.sentinelAuth {
			uo.SentinelPassword = password
		}
	}
	if c.caFile == "" {
		return nil
	}
	if uo.TLSConfig == nil {
		return fmt.Errorf("a CA file (%s) is given but the URL does not use TLS: use rediss://, rediss-cluster:// or rediss-sentinel://", c.caFile)
	}
	pool, err := readCAFile(c.caFile)
	if err != nil {
		return err
	}
	uo.TLSConfig.RootCAs = pool
	return nil
}

// readPasswordFile reads a password from path.
func readPasswordFile(path string) (string, error) {
	b, err := readSmallFile(path)
	if err != nil {
		return "", fmt.Errorf("the password file: %w", err)
	}
	b = bytes.TrimRight(b, "\r\n")
	if len(b) == 0 {
		return "", fmt.Errorf("the password file %s is empty", path)
	}
	return string(b), nil
}

// readCAFile reads the PEM certificates in path into a pool.
func readCAFile(path string) (*x509.CertPool, error) {
	b, err := readSmallFile(path)
	if err != nil {
		return nil, fmt.Errorf("the CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("the CA file %s holds no PEM certificate", path)
	}
	return pool, nil
}

// readSmallFile reads path, refusing more than maxSecretFile bytes. Its
// errors name the path, never what the file holds.
func readSmallFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxSecretFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxSecretFile)
	}
	return b, nil
}
