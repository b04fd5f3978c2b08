package httplimit

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// ProblemDetails is an RFC 9457 problem-details object: the JSON body of the
// policy's default answers, exported so that a responder can change one
// field and keep the rest, or hand it to its framework's renderer (Gin's
// c.JSON, Echo's c.JSON, Fiber's c.JSON) through WithDeniedHandler. Build
// one with DeniedProblem, KeyErrorProblem or UnavailableProblem. None of them
// holds request data or error text.
type ProblemDetails struct {
	// Type is a URI naming the problem type ("about:blank" for a plain status).
	Type string `json:"type"`
	// Title is a short, human-readable summary of the problem type.
	Title string `json:"title"`
	// Status is the HTTP status code.
	Status int `json:"status"`
	// Detail explains this occurrence, for a human; empty leaves it out.
	Detail string `json:"detail,omitempty"`
	// ViolatedPolicies names the quota policies that denied the request, as
	// the RateLimit-Policy header names them (draft-ietf-httpapi-ratelimit-headers).
	ViolatedPolicies []string `json:"violated-policies,omitempty"`
}

// Titles and details of the default answers.
const (
	titleTooMany    = "Request cannot be satisfied as assigned quota has been exceeded"
	titlePeerNotIP  = "Internal Server Error"
	detailPeerNotIP = "The server cannot identify clients for rate limiting on this listener."
)

// DeniedProblem returns the problem the policy sends with a 429 for d: the
// draft's quota-exceeded type, naming the limit that denied the request.
func DeniedProblem(d core.Decision) ProblemDetails {
	return ProblemDetails{
		Type: ProblemTypeQuotaExceeded, Title: titleTooMany, Status: http.StatusTooManyRequests,
		ViolatedPolicies: []string{d.Limit.Name},
	}
}

// KeyErrorProblem returns the problem the policy sends when a request's key
// cannot be found (err is what the key function returned): 401 Unauthorized,
// or 500 when err wraps keyfuncs.ErrPeerNotIP. A peer address that is not an
// IP (a unix-socket listener) is the server's configuration, which no client
// can fix: 401 would send clients to look for credentials and hide the
// fault from 5xx alerts; 500 rather than 503, since a retry cannot help.
func KeyErrorProblem(err error) ProblemDetails {
	if errors.Is(err, keyfuncs.ErrPeerNotIP) {
		return ProblemDetails{Type: "about:blank", Title: titlePeerNotIP, Status: http.StatusInternalServerError, Detail: detailPeerNotIP}
	}
	return ProblemDetails{Type: "about:blank", Title: "Unauthorized", Status: http.StatusUnauthorized}
}

// UnavailableProblem returns the problem the policy sends with a 503 when the
// limiter fails and the policy fails closed (WithFailClosed).
func UnavailableProblem() ProblemDetails {
	return ProblemDetails{Type: "about:blank", Title: "Service Unavailable", Status: http.StatusServiceUnavailable}
}

// JSON returns pd encoded as JSON, with <, > and & as they are.
func (pd ProblemDetails) JSON() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(pd) // strings, an int and a string slice always encode
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Text returns the plain-text body the policy sends for pd to a client that
// does not accept JSON: the status text and a line break.
func (pd ProblemDetails) Text() []byte {
	return []byte(http.StatusText(pd.Status) + "\n")
}

// Response returns pd as the policy answers r: problem+json when r's Accept
// names a JSON type, plain text otherwise, and no body to HEAD.
func (pd ProblemDetails) Response(r keyfuncs.Request) Response {
	var resp Response
	if acceptsJSON(r.Header("Accept")) {
		resp = Response{Status: pd.Status, ContentType: ContentTypeProblemJSON, Body: pd.JSON()}
	} else {
		resp = Response{Status: pd.Status, ContentType: ContentTypeTextPlain, Body: pd.Text()}
	}
	if r.Method() == http.MethodHead {
		resp.Body = nil
	}
	return resp
}

// DefaultDenied returns the answer the policy gives r when d denied it: for a
// WithResponder that changes the default only for some requests.
func DefaultDenied(r keyfuncs.Request, d core.Decision) Response {
	return DeniedProblem(d).Response(r)
}
