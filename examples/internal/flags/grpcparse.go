package flags

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"

	redisstore "github.com/ratewarden/ratewarden/store/redis"
)

// DefaultGRPCAddr is -addr of the gRPC server when it is not given: gRPC's
// customary port.
const DefaultGRPCAddr = ":50051"

// The services the gRPC server never limits without -rules: the standard
// health service, and server reflection (v1 and v1alpha), which grpcurl asks
// before every call it makes. With -rules, the document decides:
// examples/rules-grpc.yaml exempts the health service and leaves reflection
// unmatched. Each is the prefix of its full methods.
const (
	HealthService     = "/grpc.health.v1.Health/"
	ReflectionService = "/grpc.reflection.v1.ServerReflection/"
	ReflectionV1Alpha = "/grpc.reflection.v1alpha.ServerReflection/"
)

// httpOnly are the flags of the HTTP servers that the gRPC server does not
// take: -metrics serves a route of the HTTP server; the gRPC server has
// -metrics-addr instead.
var httpOnly = map[string]bool{"metrics": true}

// grpcUsage is the -h text of the shared flags whose HTTP text names
// something gRPC does not have (a 503, a route): the same flag, said in
// gRPC's terms. The other flags read as the HTTP servers' do.
var grpcUsage = map[string]string{
	"fail": "when the store fails: open (let calls through) or closed (Unavailable);\nwith -rules, closed makes every policy fail closed, open lets each do as it says",
	"count-only-failures": "count only failures: a call ending with a code whose HTTP status (grpcmw.HTTPStatus)\n" +
		"is below 400 gives its cost back (try UnaryCall asking for the status NOT_FOUND);\nwith -rules, in every policy",
}

// GRPCConfig is the parsed, validated flags of the gRPC example server: those
// of the HTTP servers that apply to gRPC (Config; its Metrics is set by
// -metrics-addr), and -metrics-addr.
type GRPCConfig struct {
	*Config
	// MetricsAddr is -metrics-addr: where the Prometheus metrics are served
	// over plain HTTP, at MetricsPath; "" without it.
	MetricsAddr string
}

// ParseGRPC reads the gRPC server's args (without the program name) into a
// GRPCConfig, checking every value as Parse does. The flags are the HTTP
// servers', with the same checks and the same -h text (but for -fail and
// -count-only-failures, said in gRPC's terms), less -metrics, plus
// -metrics-addr; -addr defaults to DefaultGRPCAddr. Errors wrap flag.ErrHelp
// for -h, or describe the bad flag.
func ParseGRPC(name string, args []string, stderr io.Writer) (*GRPCConfig, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), grpcUsageText, name)
		fs.PrintDefaults()
	}
	r := rawFlags{set: map[string]bool{}}
	shared := flag.NewFlagSet(name, flag.ContinueOnError)
	r.define(shared)
	r.addr = DefaultGRPCAddr
	shared.VisitAll(func(f *flag.Flag) {
		if httpOnly[f.Name] {
			return
		}
		usage, ok := grpcUsage[f.Name]
		if !ok {
			usage = f.Usage
		}
		fs.Var(f.Value, f.Name, usage)
	})
	var metricsAddr string
	fs.StringVar(&metricsAddr, "metrics-addr", "", "serve the Prometheus metrics over plain HTTP on `HOST:PORT`, at "+MetricsPath+"\n(127.0.0.1:0 picks a free port)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return nil, usageErr("unexpected argument %q", fs.Arg(0))
	}
	fs.Visit(func(f *flag.Flag) { r.set[f.Name] = true })
	c, err := r.config()
	if err != nil {
		return nil, err
	}
	if r.set["metrics-addr"] {
		if err := checkMetricsAddr(metricsAddr); err != nil {
			return nil, err
		}
		c.Metrics = true
	}
	return &GRPCConfig{Config: c, MetricsAddr: metricsAddr}, nil
}

// checkMetricsAddr checks -metrics-addr: HOST:PORT or :PORT, the port from 0
// to 65535.
func checkMetricsAddr(addr string) error {
	if _, port, err := net.SplitHostPort(addr); err != nil {
		return usageErr("-metrics-addr %q: want HOST:PORT or :PORT", addr)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return usageErr("-metrics-addr %q: port must be a number from 0 to 65535", addr)
	}
	return nil
}

// grpcUsageText heads the gRPC server's -h, before the flags: its services,
// and how the keys read a call.
const grpcUsageText = `usage: %s [flags]

A gRPC server behind ratewarden's interceptors (grpcmw). Its services:
  grpc.testing.TestService  EmptyCall, UnaryCall, CacheableUnaryCall (unary),
                            StreamingInputCall, StreamingOutputCall, FullDuplexCall
                            (streams, decided when they open); UnaryCall answers
                            with the status its request's response_status asks for
                            (the failures -count-only-failures counts)
  grpc.health.v1.Health     Check and Watch: SERVING; never limited
  grpc.reflection.v1.ServerReflection
                            the services, for grpcurl; never limited
  anything else             Unimplemented

A call is limited as an HTTP request would be: a POST of its full method
(/grpc.testing.TestService/UnaryCall). -key header:NAME reads the metadata
entry NAME, -key jwt the bearer token of the authorization entry, -key ip the
peer's address (with -trusted-proxies, the client a trusted gateway names in
x-forwarded-for metadata). A call over the limit gets ResourceExhausted, with
google.rpc.RetryInfo and QuotaFailure, and every call the limiter decides
carries the rate-limit fields as header metadata (ratelimit-policy, ratelimit,
x-ratelimit-*, and retry-after on a denial).

With -rules, the rules document decides which calls are limited and how (see
examples/rules-grpc.yaml; it exempts the health service, and leaves
reflection unmatched).
-limit, -burst, -algorithm, -key, -tier-claim, -tier, -tz and -anchor-day do not go with -rules,
nor -block-for, -concurrency and -lease: the document says each per policy (its limits, key,
tiers, time_zone, anchor_day, block_for, concurrency, lease_tokens and lease_ttl).

-store and -rules take a Redis URL, as the HTTP servers do (run stdhttp -h).
The password belongs in $` + envRedisPassword + ` or in -redis-password-file
FILE, never on the command line; no message shows a password.

Flags:
`

// LoadGRPC is Load for the gRPC server: it parses args with ParseGRPC and
// builds the setup. It returns the exit status to use when it fails: 2 for
// bad flags (the message is written to stderr), 0 for -h, 1 when the store
// or the rules cannot be made.
func LoadGRPC(name string, args []string, stderr io.Writer) (*GRPCSetup, int) {
	c, err := ParseGRPC(name, args, stderr)
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
		fmt.Fprintf(stderr, "%s: %v\n", name, redisstore.ExplainError(err))
		return nil, 1
	}
	s.Name = name
	return s, 0
}

// MustLoadGRPC is LoadGRPC on the command line: it exits with LoadGRPC's
// status when it fails.
func MustLoadGRPC(name string) *GRPCSetup {
	s, code := LoadGRPC(name, os.Args[1:], os.Stderr)
	if s == nil {
		os.Exit(code)
	}
	return s
}
