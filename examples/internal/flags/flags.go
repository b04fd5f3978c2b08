package flags

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/keyfuncs/jwt"
)

// StoreKind says where the limiter keeps its counts.
type StoreKind int

// The stores -store selects.
const (
	Memory StoreKind = iota
	Redis
	RedisCluster
)

// Config is the parsed, validated flags.
type Config struct {
	Addr           string
	Limit          core.Limit
	Algorithm      core.Algorithm
	Key            string // "ip", "header:NAME" or "jwt"
	JWTSecret      string
	TrustedProxies []string
	Store          StoreKind
	RedisAddrs     []string // host:port, one for Redis, one or more for a cluster
	RedisDB        int
	FailClosed     bool
}

// errUsage marks an error in the flags (exit status 2).
var errUsage = errors.New("bad flags")

func usageErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

// Parse reads args (without the program name) into a Config, checking every
// value. Errors wrap flag.ErrHelp for -h, or describe the bad flag.
func Parse(name string, args []string, stderr io.Writer) (*Config, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", ":8080", "address to listen on (127.0.0.1:0 picks a free port)")
	limit := fs.String("limit", "10/s", "the limit, RATE/PERIOD: 10/s, 100/m, 5/30s")
	burst := fs.Int64("burst", 0, "the burst for token-bucket, leaky-bucket and gcra (0: the rate)")
	alg := fs.String("algorithm", "gcra", "token-bucket, leaky-bucket, fixed-window, sliding-log, sliding-window or gcra")
	key := fs.String("key", "ip", "who a client is: ip, header:NAME or jwt")
	secret := fs.String("jwt-secret", "", "HMAC secret verifying HS256 tokens for -key jwt (at least 32 bytes)")
	proxies := fs.String("trusted-proxies", "", "comma-separated CIDRs of proxies whose X-Forwarded-For is believed (-key ip)")
	store := fs.String("store", "memory", "memory, redis://host:port/db or redis-cluster://host:port,host:port")
	fail := fs.String("fail", "open", "when the store fails: open (let requests through) or closed (503)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return nil, usageErr("unexpected argument %q", fs.Arg(0))
	}
	c := &Config{Addr: *addr, Key: *key, JWTSecret: *secret}

	if _, port, err := net.SplitHostPort(*addr); err != nil {
		return nil, usageErr("-addr %q: want HOST:PORT or :PORT", *addr)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return nil, usageErr("-addr %q: port must be a number from 0 to 65535", *addr)
	}
	l, err := core.ParseLimit(*limit)
	if err != nil {
		return nil, usageErr("-limit: %v", err)
	}
	if *burst < 0 {
		return nil, usageErr("-burst must not be negative, got %d", *burst)
	}
	if *burst > 0 {
		l = l.WithBurst(*burst)
	}
	c.Limit = l
	if c.Algorithm, err = core.ParseAlgorithm(*alg); err != nil {
		return nil, usageErr("-algorithm: %v", err)
	}
	if err := c.Algorithm.ValidateLimit(l); err != nil {
		return nil, usageErr("-limit/-burst with -algorithm %s: %v", c.Algorithm, err)
	}

	switch {
	case *key == "ip", *key == "jwt":
	case strings.HasPrefix(*key, "header:") && len(*key) > len("header:"):
	default:
		return nil, usageErr("-key %q: want ip, header:NAME (e.g. header:X-API-Key) or jwt", *key)
	}
	if *key == "jwt" && *secret == "" {
		return nil, usageErr("-key jwt needs -jwt-secret")
	}
	if *key != "jwt" && *secret != "" {
		return nil, usageErr("-jwt-secret is only used with -key jwt")
	}
	if *proxies != "" {
		if *key != "ip" {
			return nil, usageErr("-trusted-proxies is only used with -key ip")
		}
		for _, p := range strings.Split(*proxies, ",") {
			c.TrustedProxies = append(c.TrustedProxies, strings.TrimSpace(p))
		}
	}

	if err := c.parseStore(*store); err != nil {
		return nil, err
	}
	switch *fail {
	case "open":
	case "closed":
		c.FailClosed = true
	default:
		return nil, usageErr("-fail %q: want open or closed", *fail)
	}
	// Build the key function once here, so that its own checks (header name,
	// CIDRs, secret length) are reported as bad flags too.
	if _, err := c.KeyFunc(); err != nil {
		return nil, usageErr("-key %s: %v", *key, err)
	}
	return c, nil
}

func (c *Config) parseStore(s string) error {
	if s == "memory" {
		c.Store = Memory
		return nil
	}
	bad := func(why string) error {
		return usageErr("-store %q: %s (want memory, redis://host:port/db or redis-cluster://host:port,host:port)", s, why)
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return bad("unknown store")
	}
	switch scheme {
	case "redis":
		u, err := url.Parse(s)
		if err != nil || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return bad("not a plain redis URL")
		}
		if err := checkHostPort(u.Host); err != nil {
			return bad(err.Error())
		}
		c.Store, c.RedisAddrs = Redis, []string{u.Host}
		if db := strings.TrimPrefix(u.Path, "/"); db != "" {
			n, err := strconv.Atoi(db)
			if err != nil || n < 0 {
				return bad("the database must be a number, 0 or more")
			}
			c.RedisDB = n
		}
		return nil
	case "redis-cluster":
		for _, a := range strings.Split(rest, ",") {
			if err := checkHostPort(a); err != nil {
				return bad(err.Error())
			}
			c.RedisAddrs = append(c.RedisAddrs, a)
		}
		c.Store = RedisCluster
		return nil
	}
	return bad("unknown store")
}

func checkHostPort(a string) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil || host == "" {
		return fmt.Errorf("%q is not host:port", a)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: the port must be a number from 1 to 65535", a)
	}
	return nil
}

// KeyFunc returns the key function -key (and -trusted-proxies, -jwt-secret)
// describe.
func (c *Config) KeyFunc() (keyfuncs.Func, error) {
	switch {
	case c.Key == "jwt":
		return jwt.Subject(jwt.WithHMACSecret([]byte(c.JWTSecret)))
	case strings.HasPrefix(c.Key, "header:"):
		return keyfuncs.Header(strings.TrimPrefix(c.Key, "header:"))
	case len(c.TrustedProxies) > 0:
		return keyfuncs.IP(keyfuncs.WithTrustedProxies(c.TrustedProxies...))
	default:
		return keyfuncs.IP()
	}
}

// HealthPath is the path every example server answers without limiting.
const HealthPath = "/healthz"

// HTTPOptions returns the policy options the flags describe: the key function,
// fail open or closed, and no limit on HealthPath.
func (c *Config) HTTPOptions() ([]httplimit.Option, error) {
	kf, err := c.KeyFunc()
	if err != nil {
		return nil, err
	}
	opts := []httplimit.Option{
		httplimit.WithKey(kf),
		httplimit.WithSkip(func(r keyfuncs.Request) bool { return r.Path() == HealthPath }),
		httplimit.WithErrorHandler(func(r keyfuncs.Request, err error) {
			fmt.Fprintf(os.Stderr, "rate limiter error (failing %s): %v\n", c.failMode(), err)
		}),
	}
	if c.FailClosed {
		opts = append(opts, httplimit.WithFailClosed())
	}
	return opts, nil
}

func (c *Config) failMode() string {
	if c.FailClosed {
		return "closed"
	}
	return "open"
}

// Setup is what an example server needs to run.
type Setup struct {
	// Name is the server's name, as its messages start.
	Name    string
	Config  *Config
	Limiter *core.Limiter
	// Options are for the adapter's New: key function, skip, fail mode.
	Options []httplimit.Option
	closers []io.Closer
}

// Close releases the store (and its client).
func (s *Setup) Close() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i].Close())
	}
	return errors.Join(errs...)
}

// Listen opens the listener on -addr and reports the address it got (which
// matters for :0) as "listening on http://ADDR" on w.
func (s *Setup) Listen(w io.Writer) (net.Listener, error) {
	ln, err := net.Listen("tcp", s.Config.Addr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "%s with %s on %s, key %s, failing %s; listening on http://%s\n",
		s.Limiter.Algorithm(), s.Limiter.Limits()[0], s.Config.storeName(), s.Config.Key, s.Config.failMode(), ln.Addr())
	return ln, nil
}

func (c *Config) storeName() string {
	switch c.Store {
	case Redis:
		return "redis " + c.RedisAddrs[0]
	case RedisCluster:
		return "redis cluster " + strings.Join(c.RedisAddrs, ",")
	}
	return "memory"
}

// Build makes the store, the limiter and the HTTP options from c.
func (c *Config) Build() (*Setup, error) {
	st, closer, err := c.newStore()
	if err != nil {
		return nil, err
	}
	s := &Setup{Config: c, closers: []io.Closer{closer}}
	if s.Limiter, err = core.NewLimiter(st, c.Algorithm, c.Limit); err != nil {
		_ = s.Close()
		return nil, err
	}
	if s.Options, err = c.HTTPOptions(); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// Load parses args and builds the setup. It returns the exit status to use
// when it fails: 2 for bad flags (the message is written to stderr), 0 for
// -h, 1 when the store cannot be made.
func Load(name string, args []string, stderr io.Writer) (*Setup, int) {
	c, err := Parse(name, args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil, 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", name, strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
		fmt.Fprintf(stderr, "run %s -h for the flags\n", name)
		return nil, 2
	}
	s, err := c.Build()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return nil, 1
	}
	s.Name = name
	return s, 0
}

// Check ends the program with status 1 and the error when err is not nil
// (building the middleware failed).
func (s *Setup) Check(err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", s.Name, err)
		_ = s.Close()
		os.Exit(1)
	}
}

// Run opens the listener on -addr (see Listen), serves on it until SIGINT or
// SIGTERM, then shuts the server down; it ends the program with status 1
// when the listener cannot be opened. serve and shutdown are the framework's
// own, e.g. an http.Server's Serve and Shutdown.
func (s *Setup) Run(serve func(net.Listener) error, shutdown func(context.Context) error) {
	ln, err := s.Listen(os.Stderr)
	s.Check(err)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = shutdown(context.Background())
	}()
	if err := serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(os.Stderr, "%s: %v\n", s.Name, err)
	}
}

// MustLoad is Load on the command line: it exits with Load's status when it
// fails.
func MustLoad(name string) *Setup {
	s, code := Load(name, os.Args[1:], os.Stderr)
	if s == nil {
		os.Exit(code)
	}
	return s
}
