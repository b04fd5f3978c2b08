package redistest

import (
	"bufio"
	"crypto/tls"
	"net"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// SecureOptions says how StartSecure protects its server, as a managed Redis
// is: a password, an ACL user, TLS, or any of them together.
type SecureOptions struct {
	// Password is the default user's password (requirepass); empty for
	// none.
	Password string
	// User and UserPassword make an ACL user (ACL SETUSER User on
	// >UserPassword ~* &* +@all) when User is set.
	User, UserPassword string
	// TLS serves TLS only (--port 0 --tls-port P), with a server
	// certificate for 127.0.0.1 and localhost signed by a CA the test made
	// (Server.CAFile, Server.ClientTLS); clients need no certificate of
	// their own.
	TLS bool
}

// secureState is what a protected server needs to be reached: the AUTH
// arguments of its readiness check, and its CA.
type secureState struct {
	opts SecureOptions
	auth []string
	ca   *TestCA
}

// StartSecure starts a redis-server on a free loopback port, protected as
// opts says, stopped when t ends. Its URL is rediss://127.0.0.1:P for TLS,
// redis://127.0.0.1:P otherwise, with no user or password: a test adds those
// it means to send. It always starts a process; Restart keeps the protection
// (the ACL user is made again).
func StartSecure(t testing.TB, opts SecureOptions) *Server {
	t.Helper()
	requireBinaries(t, "redis-server")
	dir := t.TempDir()
	st := &secureState{opts: opts}
	if opts.Password != "" {
		st.auth = []string{"AUTH", opts.Password}
	}
	if opts.TLS {
		ca, err := NewTestCA(dir)
		if err != nil {
			t.Fatal(err)
		}
		st.ca = ca
	}
	s, err := startServerWith(dir, "", nil, st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.kill)
	return s
}

// setUp sets the server's arguments and URL for the port chosen.
func (st *secureState) setUp(s *Server, port int) {
	s.secure = st
	if st.opts.Password != "" {
		s.args = append(s.args, "--requirepass", st.opts.Password)
	}
	if st.opts.TLS {
		s.url = "rediss://" + s.addr
		s.args = append(s.args, "--port", "0", "--tls-port", strconv.Itoa(port),
			"--tls-cert-file", st.ca.ServerCertFile, "--tls-key-file", st.ca.ServerKeyFile,
			"--tls-ca-cert-file", st.ca.CertFile, "--tls-auth-clients", "no")
	}
}

// CAFile returns the path of the PEM certificate of the CA that signed the
// server's certificate, for a TLS server of StartSecure; "" for the others.
func (s *Server) CAFile() string {
	if s.secure == nil || s.secure.ca == nil {
		return ""
	}
	return s.secure.ca.CertFile
}

// ClientTLS returns a TLS configuration that trusts the server's CA and
// checks its name (127.0.0.1), for a TLS server of StartSecure; nil for the
// others.
func (s *Server) ClientTLS() *tls.Config {
	if s.secure == nil || s.secure.ca == nil {
		return nil
	}
	return &tls.Config{RootCAs: s.secure.ca.Pool(), ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

// URLWith returns the server's URL with user and password in it, each
// percent-encoded; an empty password leaves it out.
func (s *Server) URLWith(user, password string) string {
	u, err := url.Parse(s.url)
	if err != nil {
		return s.url
	}
	if password != "" {
		u.User = url.UserPassword(user, password)
	} else {
		u.User = url.User(user)
	}
	return u.String()
}

// Do sends one command to the server over a fresh connection (TLS and AUTH
// as the server needs) and returns the reply as text: a status, a bulk
// string or an integer.
func (s *Server) Do(args ...string) (string, error) {
	conn, err := s.dial()
	if err != nil {
		return "", err
	}
	defer conn.Close()
	rd := bufio.NewReader(conn)
	if s.secure != nil && s.secure.auth != nil {
		if _, err := roundTrip(conn, rd, s.secure.auth...); err != nil {
			return "", err
		}
	}
	return roundTrip(conn, rd, args...)
}

// dial connects to the server, with TLS when it speaks it.
func (s *Server) dial() (net.Conn, error) {
	d := &net.Dialer{Timeout: time.Second}
	if cfg := s.ClientTLS(); cfg != nil {
		return tls.DialWithDialer(d, "tcp", s.addr, cfg)
	}
	return d.Dial("tcp", s.addr)
}

// ping checks that the server answers, and makes a StartSecure server's ACL
// user once it does.
func (s *Server) ping() (string, error) {
	if s.secure == nil {
		return command(s.addr, "PING")
	}
	reply, err := s.Do("PING")
	if err != nil || s.secure.opts.User == "" {
		return reply, err
	}
	o := s.secure.opts
	if _, err := s.Do("ACL", "SETUSER", o.User, "on", ">"+o.UserPassword, "~*", "&*", "+@all"); err != nil {
		return "", err
	}
	return reply, nil
}
