package flags

import (
	"fmt"
	"io"
	"net"
	"slices"
	"strings"

	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// GRPCSetup is what the gRPC example server needs to run: the Setup the
// shared flags build (the limiter or the rules, the store, the metrics), and
// where the metrics are served.
type GRPCSetup struct {
	*Setup
	// MetricsAddr is -metrics-addr; "" without it (then Metrics is nil).
	MetricsAddr string
}

// Build makes the setup as Config.Build does: the store, the limiter (with
// its tiers) or the rules kept in step with their source, and under
// -metrics-addr the metrics handler.
func (c *GRPCConfig) Build() (*GRPCSetup, error) {
	s, err := c.Config.Build()
	if err != nil {
		return nil, err
	}
	return &GRPCSetup{Setup: s, MetricsAddr: c.MetricsAddr}, nil
}

// Handler returns what grpcmw.Middleware runs on every call: the rules with
// -rules (the document decides, and examples/rules-grpc.yaml exempts the
// health service), otherwise the one policy of Limiter and Options, which
// never limits the health service nor reflection (IsUnlimitedCall).
func (s *GRPCSetup) Handler() (httplimit.Handler, error) {
	if s.Rules != nil {
		return s.Rules, nil
	}
	// The skip comes last, so it is the policy's: Options' own skips HTTP
	// paths, which no call has.
	opts := append(slices.Clip(s.Options), httplimit.WithSkip(IsUnlimitedCall))
	return httplimit.New(s.Limiter, opts...)
}

// IsUnlimitedCall reports whether r is a call of the health service or of
// server reflection, which the server never limits without -rules.
func IsUnlimitedCall(r keyfuncs.Request) bool {
	p := r.Path()
	return strings.HasPrefix(p, HealthService) || strings.HasPrefix(p, ReflectionService) || strings.HasPrefix(p, ReflectionV1Alpha)
}

// Listen opens the gRPC listener on -addr and, under -metrics-addr, the
// metrics' listener (nil without it), and reports the addresses they got
// (which matters for :0) in one line on w: "CONFIG; listening on
// grpc://ADDR", followed by ", metrics on http://ADDR/metrics".
func (s *GRPCSetup) Listen(w io.Writer) (grpcLn, metricsLn net.Listener, err error) {
	grpcLn, err = net.Listen("tcp", s.Config.Addr)
	if err != nil {
		return nil, nil, err
	}
	line := fmt.Sprintf("%s; listening on grpc://%s", s, grpcLn.Addr())
	if s.MetricsAddr != "" {
		metricsLn, err = net.Listen("tcp", s.MetricsAddr)
		if err != nil {
			_ = grpcLn.Close()
			return nil, nil, fmt.Errorf("-metrics-addr: %w", err)
		}
		line += fmt.Sprintf(", metrics on http://%s%s", metricsLn.Addr(), MetricsPath)
	}
	fmt.Fprintln(w, line)
	return grpcLn, metricsLn, nil
}

// String describes the setup for the start line, as Setup.String does, but
// for the metrics, which Listen names with their address.
func (s *GRPCSetup) String() string {
	c := *s.Config
	c.Metrics = false
	shown := *s.Setup
	shown.Config = &c
	return shown.String()
}
