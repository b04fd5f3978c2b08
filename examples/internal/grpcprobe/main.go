// Command grpcprobe makes gRPC calls to the example gRPC server and checks
// how each ends, for scripts/test.sh's probes (curl speaks no gRPC):
//
//	grpcprobe -addr 127.0.0.1:50051 empty=OK empty=OK empty=ResourceExhausted health=SERVING
//	grpcprobe -addr 127.0.0.1:50051 -md x-api-key=k1 unary/NotFound=NotFound stream=OK
//
// Each check is CALL=WANT, made in order on one connection:
//
//	empty          grpc.testing.TestService/EmptyCall
//	unary          UnaryCall
//	unary/CODE     UnaryCall asking the server to end with CODE (NotFound, ...)
//	stream         FullDuplexCall: one message sent and answered, then closed
//	health         grpc.health.v1.Health/Check of the server as a whole
//
// WANT is the code the call must end with (OK, ResourceExhausted,
// Unauthenticated, ... as grpc-go's codes name them) or, for health, the
// serving status (SERVING). ResourceExhausted must come with a
// google.rpc.RetryInfo of a wait above 0, a google.rpc.QuotaFailure and the
// retry-after metadata. Every call is printed on stdout as it was seen: its
// code and message, its header metadata a line each ("  ratelimit: ...") and
// its status details. The exit status is 0 when every check holds, 1 at the
// first that does not (the rest are not made), 2 for bad flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// check is one CALL=WANT.
type check struct {
	text  string // as given
	call  string // empty, unary, stream or health
	asked codes.Code
	want  string // a code's name, or SERVING
}

// run is the command on args: it prints the calls to stdout and what went
// wrong to stderr, and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("grpcprobe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "", "the server's `HOST:PORT`")
	timeout := fs.Duration("timeout", 5*time.Second, "how long each call may take")
	md := metadata.MD{}
	fs.Func("md", "`NAME=VALUE`, repeated: metadata every call carries, e.g. x-api-key=k1", func(s string) error {
		name, value, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return errors.New("want NAME=VALUE")
		}
		md.Append(name, value)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	checks, err := parseChecks(*addr, *timeout, fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "grpcprobe: %v\n", err)
		return 2
	}
	conn, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintf(stderr, "grpcprobe: %v\n", err)
		return 2
	}
	defer conn.Close()
	p := prober{conn: conn, md: md, timeout: *timeout, out: stdout}
	for _, c := range checks {
		if err := p.do(c); err != nil {
			fmt.Fprintf(stderr, "grpcprobe: %s: %v\n", c.text, err)
			return 1
		}
	}
	return 0
}

// parseChecks checks the flags and reads the checks.
func parseChecks(addr string, timeout time.Duration, args []string) ([]check, error) {
	switch {
	case addr == "":
		return nil, errors.New("-addr is required")
	case timeout <= 0:
		return nil, fmt.Errorf("-timeout must be above 0, got %s", timeout)
	case len(args) == 0:
		return nil, errors.New("no checks: give CALL=WANT, e.g. empty=OK")
	}
	checks := make([]check, 0, len(args))
	for _, arg := range args {
		c, err := parseCheck(arg)
		if err != nil {
			return nil, err
		}
		checks = append(checks, c)
	}
	return checks, nil
}

// parseCheck reads one CALL=WANT.
func parseCheck(s string) (check, error) {
	call, want, ok := strings.Cut(s, "=")
	if !ok {
		return check{}, fmt.Errorf("check %q: want CALL=WANT, e.g. empty=OK", s)
	}
	c := check{text: s, call: call, want: want}
	if name, asked, ok := strings.Cut(call, "/"); ok && name == "unary" {
		code, known := codeNamed(asked)
		if !known {
			return check{}, fmt.Errorf("check %q: %q is no gRPC code", s, asked)
		}
		c.call, c.asked = name, code
	}
	switch {
	case c.call == "health" && want != healthpb.HealthCheckResponse_SERVING.String():
		return check{}, fmt.Errorf("check %q: health wants SERVING", s)
	case c.call == "health":
	case c.call != "empty" && c.call != "unary" && c.call != "stream":
		return check{}, fmt.Errorf("check %q: the call is empty, unary, unary/CODE, stream or health", s)
	default:
		if _, known := codeNamed(want); !known {
			return check{}, fmt.Errorf("check %q: %q is no gRPC code", s, want)
		}
	}
	return c, nil
}

// codeNamed returns the code grpc-go names name (OK, NotFound, ...).
func codeNamed(name string) (codes.Code, bool) {
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if c.String() == name {
			return c, true
		}
	}
	return 0, false
}

// prober makes the calls on one connection.
type prober struct {
	conn    *grpc.ClientConn
	md      metadata.MD
	timeout time.Duration
	out     io.Writer
}

// do makes c's call, prints what it saw and checks it.
func (p prober) do(c check) error {
	ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(context.Background(), p.md), p.timeout)
	defer cancel()
	var hdr metadata.MD
	if c.call == "health" {
		resp, err := healthpb.NewHealthClient(p.conn).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Header(&hdr))
		got := resp.GetStatus().String()
		if err != nil {
			got = status.Code(err).String()
		}
		p.print(c.call, got, err, hdr)
		if got != c.want {
			return fmt.Errorf("got %s, want %s", got, c.want)
		}
		return nil
	}
	err := p.call(ctx, c, &hdr)
	p.print(c.call, status.Code(err).String(), err, hdr)
	if got := status.Code(err).String(); got != c.want {
		return fmt.Errorf("got %s, want %s", got, c.want)
	}
	if status.Code(err) == codes.ResourceExhausted {
		return checkDenial(status.Convert(err), hdr)
	}
	return nil
}

// call makes the test service's call c names, leaving its header metadata
// in hdr, and returns how it ended.
func (p prober) call(ctx context.Context, c check, hdr *metadata.MD) error {
	client := testgrpc.NewTestServiceClient(p.conn)
	switch c.call {
	case "empty":
		_, err := client.EmptyCall(ctx, &testgrpc.Empty{}, grpc.Header(hdr))
		return err
	case "unary":
		req := &testgrpc.SimpleRequest{}
		if c.asked != codes.OK {
			req.ResponseStatus = &testgrpc.EchoStatus{Code: int32(c.asked), Message: "asked for by grpcprobe"}
		}
		_, err := client.UnaryCall(ctx, req, grpc.Header(hdr))
		return err
	}
	stream, err := client.FullDuplexCall(ctx)
	if err != nil {
		return err
	}
	err = exchange(stream)
	*hdr, _ = stream.Header()
	return err
}

// exchange sends one message on stream, reads its answer, closes the stream
// and reads how it ended: nil for OK.
func exchange(stream grpc.BidiStreamingClient[testgrpc.StreamingOutputCallRequest, testgrpc.StreamingOutputCallResponse]) error {
	err := stream.Send(&testgrpc.StreamingOutputCallRequest{})
	if err == nil {
		_, err = stream.Recv()
	}
	if err == nil {
		_ = stream.CloseSend()
		if _, err = stream.Recv(); err == nil {
			return errors.New("FullDuplexCall answered one message twice")
		}
	}
	if errors.Is(err, io.EOF) {
		// Send's io.EOF: the stream ended, and Recv says how.
		if _, err = stream.Recv(); errors.Is(err, io.EOF) {
			return nil
		}
	}
	return err
}

// checkDenial checks that a denial says when to retry: RetryInfo with a wait
// above 0, a QuotaFailure, and the retry-after field.
func checkDenial(st *status.Status, hdr metadata.MD) error {
	var wait time.Duration
	quota := false
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.RetryInfo:
			wait = d.GetRetryDelay().AsDuration()
		case *errdetails.QuotaFailure:
			quota = len(d.GetViolations()) > 0
		}
	}
	switch {
	case wait <= 0:
		return errors.New("ResourceExhausted without a RetryInfo of a wait above 0")
	case !quota:
		return errors.New("ResourceExhausted without a QuotaFailure")
	case len(hdr.Get("retry-after")) == 0:
		return errors.New("ResourceExhausted without the retry-after field")
	}
	return nil
}

// print writes what a call ended with: its name and outcome, then its
// header metadata and status details, a line each.
func (p prober) print(call, got string, err error, hdr metadata.MD) {
	line := call + ": " + got
	if err != nil {
		line += ": " + status.Convert(err).Message()
	}
	fmt.Fprintln(p.out, line)
	keys := make([]string, 0, len(hdr))
	for k := range hdr {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range hdr[k] {
			fmt.Fprintf(p.out, "  %s: %s\n", k, v)
		}
	}
	for _, d := range status.Convert(err).Details() {
		switch d := d.(type) {
		case *errdetails.RetryInfo:
			fmt.Fprintf(p.out, "  RetryInfo: retry_delay %s\n", d.GetRetryDelay().AsDuration())
		case *errdetails.QuotaFailure:
			for _, v := range d.GetViolations() {
				fmt.Fprintf(p.out, "  QuotaFailure: subject %q quota_id %q quota_value %d\n", v.GetSubject(), v.GetQuotaId(), v.GetQuotaValue())
			}
		default:
			fmt.Fprintf(p.out, "  detail: %v\n", d)
		}
	}
}
