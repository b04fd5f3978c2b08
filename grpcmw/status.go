package grpcmw

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/ratewarden/ratewarden/core"
)

// HTTPStatus returns the HTTP status of a gRPC code, as google.rpc.Code
// documents the mapping: what a refund predicate (httplimit.WithRefund, the
// rules' count: failures) is given for a call that ended with c.
//
//	OK 200                  InvalidArgument 400     FailedPrecondition 400
//	OutOfRange 400          Unauthenticated 401     PermissionDenied 403
//	NotFound 404            AlreadyExists 409       Aborted 409
//	ResourceExhausted 429   Canceled 499            Unknown 500
//	Internal 500            DataLoss 500            Unimplemented 501
//	Unavailable 503         DeadlineExceeded 504
//
// Any other code is 500.
func HTTPStatus(c codes.Code) int {
	switch c {
	case codes.OK:
		return http.StatusOK
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange:
		return http.StatusBadRequest
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.NotFound:
		return http.StatusNotFound
	case codes.AlreadyExists, codes.Aborted:
		return http.StatusConflict
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	case codes.Canceled:
		return 499 // the client closed the request, as google.rpc.Code says
	case codes.Unimplemented:
		return http.StatusNotImplemented
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

// Code returns the gRPC code of an HTTP status the policy answers with: 429
// ResourceExhausted, 401 Unauthenticated, 500 Internal, 503 Unavailable, and,
// for what an answer of the application's own may choose
// (WithDeniedHandler, WithResponder, WithKeyErrorResponder), the inverse of
// HTTPStatus (400 InvalidArgument, 403 PermissionDenied, 404 NotFound, 409
// Aborted, 499 Canceled, 501 Unimplemented, 504 DeadlineExceeded); another
// 4xx is FailedPrecondition, anything else Unknown.
func Code(status int) codes.Code {
	switch status {
	case http.StatusTooManyRequests:
		return codes.ResourceExhausted
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusInternalServerError:
		return codes.Internal
	case http.StatusServiceUnavailable:
		return codes.Unavailable
	case http.StatusBadRequest:
		return codes.InvalidArgument
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusNotFound:
		return codes.NotFound
	case http.StatusConflict:
		return codes.Aborted
	case 499:
		return codes.Canceled
	case http.StatusNotImplemented:
		return codes.Unimplemented
	case http.StatusGatewayTimeout:
		return codes.DeadlineExceeded
	}
	if status >= 400 && status < 500 {
		return codes.FailedPrecondition
	}
	return codes.Unknown
}

// The messages of the answers that carry nothing of the call. Like the HTTP
// bodies, no message holds request data or error text.
const (
	msgKey         = "ratewarden: no rate-limit key for this call (missing or invalid credentials)"
	msgPeerNotIP   = "ratewarden: the server cannot identify clients for rate limiting on this listener"
	msgUnavailable = "ratewarden: rate limiting is unavailable"
)

// Precomputed answers: a key error is frequent under attack, and costs no
// allocation.
var (
	errKey       = status.Error(codes.Unauthenticated, msgKey)
	errPeerNotIP = status.Error(codes.Internal, msgPeerNotIP)
)

// answer returns the status error of a call the policy answered (c.status is
// set): a denial gets ResourceExhausted (or the code of a responder's status)
// with RetryInfo and QuotaFailure, a failed or full store Unavailable with
// RetryInfo, a key error Unauthenticated (Internal for a peer that is not an
// IP).
func (c *call) answer() error {
	code := Code(c.status)
	if c.status == 0 {
		code = codes.ResourceExhausted // a denial whose WithDeniedHandler wrote no status
	}
	switch {
	case c.decided && !c.decision.Allowed:
		return c.denial(code)
	case code == codes.Unauthenticated:
		return errKey
	case code == codes.Internal:
		return errPeerNotIP
	case code == codes.Unavailable:
		return c.unavailable()
	}
	return status.Error(code, "ratewarden: "+http.StatusText(c.status))
}

// denial returns the status of a call the limiter denied: RetryInfo with the
// exact wait (never 0, never rounded down; the retry-after field is the same
// wait rounded up to whole seconds), and QuotaFailure with one violation, for
// the policy that denied the call. Its subject is the policy's name (the name
// RateLimit-Policy gives it), never the key: a key may be an API key or a
// token's subject, and status details end up in clients' logs and error
// reports, where a credential must not.
func (c *call) denial(code codes.Code) error {
	d := &c.decision
	wait := d.RetryAfter
	if wait <= 0 {
		wait = c.retryAfterField(time.Second)
	}
	desc := fmt.Sprintf("quota of %s exceeded", quotaText(d.Limit))
	if d.Exceeds {
		desc = fmt.Sprintf("the call's cost exceeds the quota of %s: no wait will admit it", quotaText(d.Limit))
	}
	st := status.New(code, fmt.Sprintf("ratewarden: rate limit %q exceeded; retry after %s", c.policy, wait))
	st, err := st.WithDetails(
		&errdetails.RetryInfo{RetryDelay: durationpb.New(wait)},
		&errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{
			Subject:     c.policy,
			Description: desc,
			QuotaId:     d.Limit.Name,
			QuotaValue:  d.Limit.Rate,
		}}},
	)
	if err != nil { // the details always marshal
		return status.Error(code, msgUnavailable)
	}
	return st.Err()
}

// unavailable returns the status of a call answered 503 (the store failed
// and the policy fails closed, or a full store refused its new key):
// Unavailable with RetryInfo, the wait of the retry-after field.
func (c *call) unavailable() error {
	wait := c.retryAfterField(time.Second)
	st, err := status.New(codes.Unavailable, msgUnavailable).WithDetails(
		&errdetails.RetryInfo{RetryDelay: durationpb.New(wait)})
	if err != nil {
		return status.Error(codes.Unavailable, msgUnavailable)
	}
	return st.Err()
}

// retryAfterField returns the retry-after field the policy set, in whole
// seconds, or def when there is none.
func (c *call) retryAfterField(def time.Duration) time.Duration {
	if n, err := strconv.ParseInt(c.field("retry-after"), 10, 32); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return def
}

// gone returns the status of a call whose client left while the policy held
// it (a leaky-bucket wait): the context's own status, Canceled or
// DeadlineExceeded.
func gone(ctx context.Context) error {
	err := ctx.Err()
	if err == nil {
		err = context.Canceled
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return status.Error(codes.DeadlineExceeded, "ratewarden: the call's deadline passed while it waited for its turn")
	}
	return status.Error(codes.Canceled, "ratewarden: the call was canceled while it waited for its turn")
}

// quotaText says a limit in a QuotaFailure's description: "5 per 1m0s", or,
// for a calendar quota, its text ("10000/month in Europe/Berlin"), since a
// month's Period is only nominal.
func quotaText(l core.Limit) string {
	if l.IsCalendar() {
		return l.String()
	}
	return fmt.Sprintf("%d per %s", l.Rate, l.Period)
}
