package redistest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ErrUnavailable reports that no Redis server could be started: redis-server
// or redis-cli is missing, or the server did not come up.
var ErrUnavailable = errors.New("redistest: redis unavailable")

// InstallHint tells how to get redis-server on Debian and Ubuntu.
const InstallHint = "install it with: apt-get install -y redis-server (or set REDIS_URL / REDIS_CLUSTER_ADDRS)"

// startTimeout bounds how long a server may take to answer PING.
const startTimeout = 10 * time.Second

// Server is one Redis server for a test: a redis-server process this package
// started, or an external server named by REDIS_URL. Its methods are safe for
// concurrent use.
type Server struct {
	addr     string
	url      string
	external bool
	dir      string
	args     []string
	// secure is how a server of StartSecure is protected; nil for the others.
	secure *secureState

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// Addr returns the server's address, host:port.
func (s *Server) Addr() string { return s.addr }

// URL returns the server's redis:// URL (REDIS_URL as given for an external
// server).
func (s *Server) URL() string { return s.url }

// External reports whether the server was named by REDIS_URL rather than
// started by this package; such a server cannot be stopped or restarted.
func (s *Server) External() bool { return s.external }

// Start returns the server named by REDIS_URL when it is set, or else starts a
// redis-server on a free loopback port, stopped when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	if u := os.Getenv("REDIS_URL"); u != "" {
		pu, err := url.Parse(u)
		if err != nil || pu.Host == "" {
			t.Fatalf("redistest: REDIS_URL %q is not a redis:// URL: %v", u, err)
		}
		host := pu.Host
		if pu.Port() == "" {
			host = net.JoinHostPort(pu.Hostname(), "6379")
		}
		return &Server{addr: host, url: u, external: true}
	}
	return StartLocal(t)
}

// StartLocal starts a redis-server on a free loopback port, whatever the
// environment says, so the test may stop, pause or restart it. The server is
// stopped when t ends.
func StartLocal(t testing.TB) *Server {
	t.Helper()
	requireBinaries(t, "redis-server")
	s, err := startServer(t.TempDir(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.kill)
	return s
}

// SentinelMaster is the name under which StartSentinel's Sentinel monitors
// its master.
const SentinelMaster = "ratewarden"

// StartSentinel starts a redis-server and a Redis Sentinel (redis-server
// --sentinel) that monitors it under the name SentinelMaster, both stopped
// when t ends, and returns the master and the Sentinel. It always starts
// processes.
func StartSentinel(t testing.TB) (master *Server, sentinelAddr string) {
	t.Helper()
	master = StartLocal(t)
	dir := t.TempDir()
	_, port, _ := net.SplitHostPort(master.Addr())
	conf := filepath.Join(dir, "sentinel.conf")
	body := "sentinel monitor " + SentinelMaster + " 127.0.0.1 " + port + " 1\n" +
		"sentinel down-after-milliseconds " + SentinelMaster + " 5000\n"
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := startServer(dir, conf, []string{"--sentinel"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.kill)
	return master, s.Addr()
}

// StartCluster returns the addresses of a Redis Cluster's masters: those in
// REDIS_CLUSTER_ADDRS when it is set, or else of three masters (no replicas)
// started on free loopback ports, joined with redis-cli --cluster create and
// stopped when t ends.
func StartCluster(t testing.TB) []string {
	t.Helper()
	if v := os.Getenv("REDIS_CLUSTER_ADDRS"); v != "" {
		var addrs []string
		for _, a := range strings.Split(v, ",") {
			if a = strings.TrimSpace(a); a != "" {
				addrs = append(addrs, a)
			}
		}
		return addrs
	}
	requireBinaries(t, "redis-server", "redis-cli")
	root := t.TempDir()
	var nodes []*Server
	for i := range 3 {
		dir := filepath.Join(root, strconv.Itoa(i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		s, err := startServer(dir, "", []string{
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000",
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.kill)
		nodes = append(nodes, s)
	}
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.addr
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	out, err := exec.Command("redis-cli", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, a := range addrs {
		for {
			info, err := command(a, "CLUSTER", "INFO")
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("redistest: cluster node %s not ok after 30s: %v %q", a, err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return addrs
}

// Stop kills the server (SIGKILL: no shutdown save) and waits for it to exit.
// It fails t for an external server.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if s.external {
		t.Fatal("redistest: cannot stop the external server of REDIS_URL; use StartLocal")
	}
	s.kill()
}

// Restart stops the server and starts a fresh one on the same port: keys and
// loaded scripts are gone, as after a crash without persistence. It fails t for
// an external server, or when the port was taken in between.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if s.external {
		t.Fatal("redistest: cannot restart the external server of REDIS_URL; use StartLocal")
	}
	s.kill()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.launch(); err != nil {
		t.Fatal(err)
	}
}

// Pause stops the server process (SIGSTOP): connections stay open and nothing
// answers, like a server that hangs. Resume undoes it; a paused server is
// resumed before it is killed.
func (s *Server) Pause(t testing.TB) { s.signal(t, syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume(t testing.TB) { s.signal(t, syscall.SIGCONT) }

func (s *Server) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if s.external {
		t.Fatal("redistest: cannot signal the external server of REDIS_URL; use StartLocal")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		t.Fatal("redistest: server is not running")
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

func (s *Server) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Process.Signal(syscall.SIGCONT)
	<-s.exited
	s.cmd, s.exited = nil, nil
}

func requireBinaries(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			msg := fmt.Sprintf("%v: %s not found; %s", ErrUnavailable, n, InstallHint)
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
}

// startServer starts redis-server in dir on a free port, trying other ports
// when the chosen one is taken before the server binds it. conf, when set, is
// a configuration file to read first (Sentinel needs one it can rewrite).
func startServer(dir, conf string, extra []string) (*Server, error) {
	return startServerWith(dir, conf, extra, nil)
}

// startServerWith is startServer with secure, when not nil, setting up a
// protected server (StartSecure) on the port chosen.
func startServerWith(dir, conf string, extra []string, secure *secureState) (*Server, error) {
	var lastErr error
	for range 5 {
		port, err := freePort(slices.Contains(extra, "--cluster-enabled"))
		if err != nil {
			return nil, err
		}
		s := &Server{dir: dir}
		s.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		s.url = "redis://" + s.addr
		var args []string
		if conf != "" {
			args = append(args, conf)
		}
		s.args = append(append(args,
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
			"--save", "", "--appendonly", "no", "--protected-mode", "no", "--daemonize", "no",
			"--loglevel", "warning", "--logfile", "redis.log"),
			extra...)
		if secure != nil {
			secure.setUp(s, port)
		}
		if lastErr = s.launch(); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

// launch starts the process and waits for it to answer PING; s.mu is held or s
// is not shared yet.
func (s *Server) launch() error {
	cmd := exec.Command("redis-server", s.args...)
	cmd.Dir = s.dir
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-exited:
			return fmt.Errorf("%w: redis-server on %s exited at start: %s", ErrUnavailable, s.addr, s.logTail())
		default:
		}
		if reply, err := s.ping(); err == nil && reply == "PONG" {
			s.cmd, s.exited = cmd, exited
			return nil
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("%w: redis-server on %s did not answer PING in %s: %s", ErrUnavailable, s.addr, startTimeout, s.logTail())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// freePort finds a loopback port nobody listens on; for a cluster node, the
// bus port (port + 10000) must be free as well.
func freePort(withBus bool) (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		if !withBus {
			_ = l.Close()
			return port, nil
		}
		if port+10000 > 65535 {
			_ = l.Close()
			continue
		}
		bus, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+10000)))
		_ = l.Close()
		if err != nil {
			continue
		}
		_ = bus.Close()
		return port, nil
	}
	return 0, fmt.Errorf("%w: no free port pair for a cluster node", ErrUnavailable)
}
